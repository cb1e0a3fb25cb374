"""A PostgreSQL ledger's data folder is the one it was opened with: its read models (and head
file, keys) live there. They used to live in `RIN_DATA` or `./rin-data` whatever `data` was
given, so two PostgreSQL stores opened with different folders shared one views file, and one
store's views were taken for another's (`rin verify`: "view parties differs from a rebuild")."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger import Ledger
from ledger.infrastructure.settings import store_env, store_folder
from projections.runner import views_path

URL = "postgresql://rin@localhost:5432/rin"


def test_a_postgresql_ledgers_folder_is_the_one_given(tmp_path: Path) -> None:
    assert store_folder(store_env(tmp_path / "a", URL)) == tmp_path / "a"
    assert store_folder(store_env(tmp_path / "b", URL)) == tmp_path / "b"


def test_without_a_folder_it_is_rin_data_or_the_default(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIN_DATA", str(tmp_path / "env"))
    assert store_folder(store_env(None, URL)) == tmp_path / "env"
    monkeypatch.delenv("RIN_DATA")
    assert store_folder(store_env(None, URL)) == Path("rin-data")


def test_two_postgresql_ledgers_keep_their_views_apart(tmp_path: Path) -> None:
    import os

    url = os.environ.get("RIN_TEST_POSTGRES_URL")
    if url is None:
        pytest.skip("RIN_TEST_POSTGRES_URL is not set")
    with Ledger(tmp_path / "a", store=url) as a, Ledger(tmp_path / "b", store=url) as b:
        assert views_path(a) == tmp_path / "a" / "views.sqlite"
        assert views_path(b) == tmp_path / "b" / "views.sqlite"
