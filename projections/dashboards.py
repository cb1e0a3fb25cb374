"""Charts for Datasette (the datasette-dashboards plugin, Vega-Lite specs): RINs generated per
month by D code (market_monthly, EPA's generation table) and RINs available now by vintage, D
code and assignment (market_available)."""

from __future__ import annotations

from typing import Any

GENERATED_BY_MONTH = {
    "title": "Gallon-RINs generated per month, by D code",
    "db": "views",
    "query": "SELECT month, 'D' || d_code AS d_code, generated FROM market_monthly "
             "WHERE generated != 0 ORDER BY month, d_code",
    "library": "vega-lite",
    "display": {
        "mark": {"type": "bar", "tooltip": True},
        "encoding": {
            "x": {"field": "month", "type": "ordinal", "title": "month (effective date)"},
            "y": {"field": "generated", "type": "quantitative", "aggregate": "sum",
                  "title": "gallon-RINs generated", "axis": {"format": ",d"}},
            "color": {"field": "d_code", "type": "nominal", "title": "D code"},
        },
    },
}
AVAILABLE_NOW = {
    "title": "Gallon-RINs available now, by vintage, D code and assignment",
    "db": "views",
    "query": "SELECT vintage || ' D' || d_code AS vintage_d_code, assignment, available "
             "FROM market_available ORDER BY vintage, d_code, assignment",
    "library": "vega-lite",
    "display": {
        "mark": {"type": "bar", "tooltip": True},
        "encoding": {
            "x": {"field": "vintage_d_code", "type": "nominal", "title": "vintage and D code"},
            "xOffset": {"field": "assignment", "type": "nominal"},
            "y": {"field": "available", "type": "quantitative", "title": "gallon-RINs available",
                  "axis": {"format": ",d"}},
            "color": {"field": "assignment", "type": "nominal"},
        },
    },
}
TOTAL_AVAILABLE = {
    "title": "Gallon-RINs available",
    "db": "views",
    "query": "SELECT printf('%,d', coalesce(sum(available), 0)) AS available "
             "FROM market_available",
    "library": "metric",
    "display": {"field": "available", "prefix": "", "suffix": " gallon-RINs"},
}


def dashboards() -> dict[str, Any]:
    """The datasette-dashboards configuration: one dashboard, `rin-market`."""
    return {
        "rin-market": {
            "title": "RIN market",
            "description": "EPA's public RIN data from the ledger: generation per month by D "
                           "code (§80.1426) and RINs available (generated − retired − locked).",
            "layout": [["total-available", "generated-by-month"],
                       ["available-now", "available-now"]],
            "charts": {"generated-by-month": GENERATED_BY_MONTH,
                       "available-now": AVAILABLE_NOW, "total-available": TOTAL_AVAILABLE},
        },
    }
