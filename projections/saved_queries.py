"""The reports as Datasette saved queries with parameters, each returning the rows its `rin`
report prints (tests/system/test_datasette_browser.py compares them in a browser): holdings as
of a date, quarter-end checks (§80.1428(a)(5)), a block's trace, late submissions (§80.1452),
EPA's market tables, a party's activity report (§80.1451(c)(2), through the packaged plugin's
`rin_activity` function). A report of another module adds itself with one `Query` entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from projections import activity


@dataclass(frozen=True)
class Query:
    """One saved query: its name in the URL, title, description and SQL (`:name` parameters)."""

    name: str
    title: str
    description: str
    sql: str

    def metadata(self) -> dict[str, Any]:
        return {"title": self.title, "description": self.description, "sql": self.sql}


HOLDINGS_AS_OF = Query(
    "holdings_as_of", "Holdings as of a date",
    "Gallon-RINs held per party, D code, vintage and K at the end of `as_of` (YYYY-MM-DD); "
    "`party` a 4-digit company id, or empty for every party. `rin holdings --as-of`.",
    "SELECT party, d_code, vintage, k, sum(gallon_rins) AS gallon_rins FROM holdings_history "
    "WHERE effective_date <= :as_of AND (:party = '' OR party = :party) "
    "GROUP BY party, d_code, vintage, k HAVING sum(gallon_rins) != 0 "
    "ORDER BY party, d_code, vintage, k",
)
QUARTER_END_CHECKS = Query(
    "quarter_end_checks", "Quarter-end checks (§80.1428(a)(5))",
    "At each quarter end of `year`: assigned gallon-RINs owned against 2.5 × gallons of "
    "renewable fuel owned, for every party that owned either by then (volumes to 6 decimal "
    "places; `rin quarterly --year` sums them exactly).",
    "WITH ends(date) AS (VALUES (:year || '-03-31'), (:year || '-06-30'), (:year || '-09-30'), "
    "(:year || '-12-31')), "
    "owners(party, date) AS (SELECT DISTINCT h.party, e.date FROM ends e JOIN holdings_history h "
    "ON h.k = 1 AND h.effective_date <= e.date UNION SELECT DISTINCT f.party, e.date FROM ends e "
    "JOIN fuel_history f ON f.effective_date <= e.date), "
    "sums AS (SELECT o.party, o.date, coalesce((SELECT sum(gallon_rins) FROM holdings_history h "
    "WHERE h.party = o.party AND h.k = 1 AND h.effective_date <= o.date), 0) AS assigned_rins, "
    "coalesce((SELECT round(sum(CAST(volume AS REAL)), 6) FROM fuel_history f "
    "WHERE f.party = o.party AND f.effective_date <= o.date), 0) AS volume FROM owners o) "
    "SELECT party, date, assigned_rins, volume, 2.5 * volume AS \"limit\", "
    "max(0, assigned_rins - 2.5 * volume) AS excess, assigned_rins <= 2.5 * volume AS ok "
    "FROM sums ORDER BY date, party",
)
BLOCK_TRACE = Query(
    "block_trace", "A block's trace",
    "Every event that touched any gallon-RIN of the 38-character batch-RIN code `rin` (any K), "
    "oldest first, with the overlapping part's code and size. `rin trace CODE`.",
    "SELECT effective_date AS date, event, party, counterparty, substr(rin, 1, 22) || "
    "printf('%08d', max(serial_start, CAST(substr(:rin, 23, 8) AS INTEGER))) || "
    "printf('%08d', min(serial_end, CAST(substr(:rin, 31, 8) AS INTEGER))) AS rin, k, "
    "min(serial_end, CAST(substr(:rin, 31, 8) AS INTEGER)) - "
    "max(serial_start, CAST(substr(:rin, 23, 8) AS INTEGER)) + 1 AS gallon_rins "
    "FROM lineage WHERE batch = substr(:rin, 2, 18) "
    "AND serial_start <= CAST(substr(:rin, 31, 8) AS INTEGER) "
    "AND serial_end >= CAST(substr(:rin, 23, 8) AS INTEGER) "
    "ORDER BY effective_date, notification_id, seq",
)
LATE_SUBMISSIONS = Query(
    "late_submissions", "Submissions against their deadlines (§80.1452)",
    "Every submission dated in `year`: business days from its effective date to the day it was "
    "recorded, against 5 (10 for a buy). `rin late --year`.",
    "SELECT party, command, type, date, recorded, business_days, deadline_days, late "
    "FROM late_submissions WHERE date >= :year || '-01-01' AND date <= :year || '-12-31' "
    "ORDER BY notification_id",
)
SEPARATIONS = Query(
    "separations_by_reason", "Separations by reason code (EPA's table)",
    "Gallon-RINs separated per year, D code and EMTS reason code. "
    "`rin market --table separations`.",
    "SELECT year, d_code, reason, sum(gallon_rins) AS gallon_rins FROM market_reasons "
    "WHERE kind = 'separation' GROUP BY year, d_code, reason "
    "ORDER BY year, d_code, length(reason), reason",
)
RETIREMENTS = Query(
    "retirements_by_reason", "Retirements by reason code (EPA's table)",
    "Gallon-RINs retired per year, D code and EMTS reason code, without the retirements a "
    "reversal unretired (§80.1452(d)). `rin market --table retirements`.",
    SEPARATIONS.sql.replace("'separation'", "'retirement' AND (command IS NULL OR command NOT IN "
                            "(SELECT reverses FROM unretired_blocks))"),
)
ACTIVITY_REPORT = Query(
    "activity_report", "A party's RIN Activity Report (§80.1451(c)(2))",
    "Per quarter of `year`, the `assigned` (K=1) and `separated` (K=2) rows of `party` (a "
    "4-digit company id): current- and prior-year RINs at the start and end, purchased, sold, "
    "retired, separated, generated, fuel owned at the end. `rin activity --party --year`.",
    "SELECT " + ", ".join(f"json_extract(value, '$.{column}') AS {column}"
                          for column in activity.COLUMNS)
    + " FROM json_each(rin_activity(:party, :year)) ORDER BY key",
)
QUERIES = (HOLDINGS_AS_OF, QUARTER_END_CHECKS, BLOCK_TRACE, LATE_SUBMISSIONS, SEPARATIONS,
           RETIREMENTS, ACTIVITY_REPORT)
