"""A Datasette plugin (loaded by `rin serve` with `--plugins-dir`): error pages without
tracebacks. Datasette's default error handler prints a rich traceback, every local variable
shown, to the server's standard error for any error, a 404 or a bad `_sort` included: on
`rin serve --get` that is the user's terminal. The handler prints through rich's global
console, so the plugin makes that console quiet; the page or JSON error is Datasette's own."""

from __future__ import annotations

import rich

rich.reconfigure(quiet=True)
