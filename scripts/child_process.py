"""A command run in a child process of its own, measured as a user's run of it is: its wall
seconds, its own CPU seconds (user + system) and peak resident MB (`os.wait4`, so another
child's peak never stands for its own), and its exit code (scripts/bench.py, scripts/national.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def rin(*args: str) -> list[str]:
    """The command line of `rin ARGS` with this checkout's code."""
    return [sys.executable, "-c", "from ledger.cli.main import main; main()", *args]


def measured(argv: list[str], keep_stderr: bool = True) -> tuple[bytes, bytes, dict[str, Any]]:
    """Run `argv` importing this checkout's code: (its stdout, its stderr if `keep_stderr`
    else b"" with stderr passed through, {wall_s, cpu_s, peak_mb, exit})."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")])}
    with tempfile.TemporaryFile() as err:  # a file, not a pipe: it never fills and blocks
        started = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, env=env,
                                 stderr=err if keep_stderr else None)
        assert child.stdout is not None
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)  # reaped here: its own rusage
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        child.stdout.close()
        err.seek(0)
        return out, err.read(), {"wall_s": seconds, "cpu_s": usage.ru_utime + usage.ru_stime,
                                 "peak_mb": usage.ru_maxrss / 1024, "exit": child.returncode}
