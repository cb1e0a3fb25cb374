"""`rin examples [DIR]`: the example transaction files (the design's sample, the file that
breaks every rule and its expected output, the locks walk-through) written into DIR, default
`./examples`, so the README's commands run from an installed wheel as from the checkout. The
files ship inside the package (`ledger/examples`); a file already there with other content is
never overwritten."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path
from typing import Annotated

import typer

from ledger.cli.options import BAD_ARGUMENT, err, options
from ledger.infrastructure.sqlite_files import write_new

app = typer.Typer()
PACKAGED = files("ledger") / "examples"


@app.command("examples")
def write_examples(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(help="where to write them")] = Path("examples"),
) -> None:
    """Write the example transaction files into FOLDER (default ./examples); files already
    there with the same content are left as they are, with other content exit 2."""
    quiet = options(ctx).quiet
    shipped = sorted((item.name, item.read_bytes()) for item in PACKAGED.iterdir()
                     if item.is_file())
    # a name taken by a link or a FIFO is a clash, never read or written through (a dangling
    # link had the file made outside the folder, a FIFO hung the read)
    clashes = [path for name, body in shipped if os.path.lexists(path := folder / name)
               and (path.is_symlink() or not path.is_file() or path.read_bytes() != body)]
    if clashes:
        err.print(f"{', '.join(map(str, clashes))}: already there with other content (or not "
                  "a regular file); nothing written (give another folder)")
        raise typer.Exit(BAD_ARGUMENT)
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    for name, body in shipped:
        if not os.path.lexists(folder / name):
            write_new(folder / name, body)
            written += 1
    if not quiet:
        err.print(f"{folder}: {written} example file(s) written, "
                  f"{len(shipped) - written} already there")
