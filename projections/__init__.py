"""The read side: sqlite-utils read models in `<data>/views.sqlite`, kept exactly once from the
ledger's notification log, and the reports built on them (holdings as of any date, quarter-end
checks, compliance positions, lineage, journal, market statistics) and `verify`.

`Views(ledger)` answers the reports; `project`, `rebuild` and `verify` take a `Ledger`.
"""

from ledger.infrastructure.settings import VIEWS_FILE
from projections.invariants import verify
from projections.runner import project, rebuild, views_path
from projections.tracking import ViewRecorder
from projections.views import Views

__all__ = ["VIEWS_FILE", "ViewRecorder", "Views", "project", "rebuild", "verify", "views_path"]
