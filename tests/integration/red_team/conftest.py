"""Fixtures the red-team modules share: the attacker's market (red_team/attacker.py) built once
per session, and a fresh copy of it for each test to attack, so no attack sees another's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from red_team.attacker import build


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The market in a new store (no key), built once: tests read it only through `data`."""
    data = tmp_path_factory.mktemp("red-team-market")
    build(data)
    return data


@pytest.fixture
def data(built: Path, tmp_path: Path) -> Path:
    """A copy of `built`'s store and head file that this test alone attacks."""
    copy = tmp_path / "data"
    copy.mkdir()
    for name in ("events.sqlite", "head.json"):
        shutil.copyfile(built / name, copy / name)
    return copy
