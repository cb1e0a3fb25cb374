"""Processes opening one fresh views file at once (two `rin project`, a follower and a report)
each get the file made once and every read model in it: they raced (f919117: 50 of 60 such
openings failed, 42 with the library's "Failed to record tracking for __migration__" and 8
with "database is locked"), now the set-up is one process at a time (projections/tracking.py
`setting_up`)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

from projections.runner import open_views
from projections.tracking import ViewRecorder

OPENERS = 6


def opened(path: str, start: Any) -> None:
    """Wait for the others, then open the views file as `rin project` opens it."""
    start.wait()
    open_views(path)


def test_processes_opening_a_fresh_views_file_at_once_all_get_it(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    for trial in range(3):
        path = str(tmp_path / f"views-{trial}.sqlite")
        start = context.Barrier(OPENERS)
        openers = [context.Process(target=opened, args=(path, start)) for _ in range(OPENERS)]
        for opener in openers:
            opener.start()
        for opener in openers:
            opener.join(120)
        assert [opener.exitcode for opener in openers] == [0] * OPENERS, f"trial {trial}"
        recorder = open_views(path)
        assert isinstance(recorder, ViewRecorder)
        assert recorder.in_place()  # every read model's table and view, made once
