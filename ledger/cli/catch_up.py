"""Bringing the read models up to date before a report (and for `rin project`), showing how
far it has got on a terminal: the first report on a large store may project for minutes."""

from __future__ import annotations

import time

from ledger.cli.output import progress_bar
from projections import Views


def catch_up(views: Views, quiet: bool, rebuild: bool = False, batch_size: int = 1000,
             transient: bool = True) -> int:
    """Project what the views have not seen (all of it with `rebuild`), with a progress bar
    on stderr when it is a terminal; the new position."""
    with progress_bar("projecting", quiet, "notifications", transient) as bar:
        tracked = views.position()  # plain SQL can store any value there: projecting rebuilds
        start = tracked if isinstance(tracked, int) and not rebuild else 0
        task = bar.add_task("project", total=None, completed=start, rate="")
        started = time.monotonic()

        def progress(done: int, total: int) -> None:
            rate = (done - start) / max(time.monotonic() - started, 1e-6)
            bar.update(task, completed=done, total=total, rate=f"{rate:,.0f} events/s")

        run = views.rebuild if rebuild else views.project
        return run(batch_size=batch_size, progress=progress)
