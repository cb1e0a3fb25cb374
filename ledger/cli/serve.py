"""`rin serve`: Datasette over the read models, brought up to date first, with the metadata and
plugins that ship inside the package (projections/metadata.json: descriptions, hidden internal
tables, saved queries, dashboards; projections/datasette_plugins: thousands separators and
units). Datasette and its plugins are the `datasette` extra (`pip install "rin-ledger[datasette]"`).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

import projections.datasette_plugins
from ledger.cli.options import err
from ledger.cli.reports import open_views
from ledger.cli.stdout import write_out
from projections.metadata import METADATA_FILE

app = typer.Typer()
PLUGINS = Path(projections.datasette_plugins.__file__).parent
REQUIRED = ("datasette", "datasette_dashboards")


def datasette_command(views: Path, host: str, port: int, get: str | None = None) -> list[str]:
    """The Datasette command line over `views` with the packaged metadata and plugins (with
    `get`, Datasette answers that one request on standard output and exits)."""
    return [sys.executable, "-m", "datasette", "serve", str(views), "--metadata",
            str(METADATA_FILE), "--plugins-dir", str(PLUGINS), "--host", host,
            "--port", str(port), *(("--get", get) if get is not None else ())]


@app.command()
def serve(
    ctx: typer.Context,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port")] = 8001,
    host: Annotated[str, typer.Option("--host", help="address to listen on")] = "127.0.0.1",
    get: Annotated[str | None, typer.Option(
        "--get", help="answer one request for this path (/views/…) on standard output, and "
                      "exit")] = None,
) -> None:
    """Browse the read models in Datasette: reports as saved queries, charts, descriptions."""
    if get is not None and not get.startswith("/"):
        raise typer.BadParameter(f"a path starts with /, got {get[:40]!r}", param_hint="--get")
    missing = [name for name in REQUIRED if importlib.util.find_spec(name) is None]
    if missing:
        err.print(f"rin serve needs {', '.join(missing)}: pip install \"rin-ledger[datasette]\"")
        raise typer.Exit(2)
    with open_views(ctx) as views:
        position = views.project()
        path = views.path
    if get is None:
        err.print(f"views at notification {position:,}: http://{host}:{port}/")
    command = datasette_command(path, host, port, get)
    if get is not None:  # one answer, written as every command's output is (ledger.cli.stdout)
        answered = subprocess.run(command, stdout=subprocess.PIPE, check=False)
        write_out(answered.stdout)
        raise typer.Exit(answered.returncode)
    sys.stdout.flush()
    os.execv(command[0], command)  # Datasette takes this process: a signal to it stops both
