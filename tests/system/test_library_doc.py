"""docs/library.md works as written: its Python blocks, run in order as one program in a fresh
folder, each exits without an error (their asserts are the page's claims)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "library.md"


def blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)


def test_the_page_has_a_service_example() -> None:
    found = blocks()
    assert len(found) >= 4 and any("follow(" in block for block in found)


def test_the_python_blocks_run_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # its mkdtemp() lands here
    namespace: dict[str, object] = {"__name__": "library_doc"}
    for number, block in enumerate(blocks(), start=1):
        try:
            exec(compile(block, f"{DOC.name} block {number}", "exec"), namespace)
        except Exception as error:
            raise AssertionError(f"block {number} of {DOC.name} failed: {error!r}") from error
    assert not list(tmp_path.rglob("views.sqlite"))  # the library's reads made no read model
