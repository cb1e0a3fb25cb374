"""A Datasette plugin (loaded by `rin serve` with `--plugins-dir`): quantities shown with
thousands separators and their unit, as the metadata's `rin-ledger` plugin settings name them
(`quantities`: column → unit, "" for a bare count such as gallon-RINs).

Only the HTML is formatted: the JSON and CSV Datasette serves keep the stored values.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from datasette import hookimpl  # type: ignore[import-untyped]
from markupsafe import Markup


def grouped(value: Any) -> str | None:
    """`1234567` → `1,234,567`; decimal text or a float `1234.50` → `1,234.5`; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):  # a SQL sum of decimal text: shown to its shortest repr
        value = repr(value)
    if isinstance(value, str):
        try:
            number = Decimal(value)
        except InvalidOperation:
            return None
        return f"{number.normalize():,f}" if number.is_finite() else None
    return None


@hookimpl  # type: ignore[untyped-decorator]
def render_cell(value: Any, column: str, table: str | None, database: str,
                datasette: Any) -> Markup | None:
    units = (datasette.plugin_config("rin-ledger", database=database) or {}).get(
        "quantities", {})
    if column not in units:
        return None
    text = grouped(value)
    if text is None:
        return None
    unit = units[column]
    return Markup(f"{text}&nbsp;{Markup.escape(unit)}" if unit else text)
