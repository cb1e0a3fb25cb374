"""Datasette plugins `rin serve` loads with `--plugins-dir` (each `*.py` here is one)."""
