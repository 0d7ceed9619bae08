"""Progress lines on stderr, shared by every stage, the refresh and the CLI; and where Spark's and
Ray's own output goes.

By default the CLI keeps the terminal for kgwalk's lines and progress bars: once a command starts
Spark or Ray (`quiet_engines`, called where they start), everything else written to stderr, by
this process (Ray's core worker and its loggers) or a child (Spark's JVM), goes to a log file in
the KG's folder instead (`engine_logs`); `--verbose` leaves it on the terminal.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO, TypeVar

T = TypeVar("T")

# while engine output goes to a file: the terminal's stderr, for kgwalk's own lines and bars
_terminal: TextIO | None = None
# set by `engine_logs` for the command running: the file Spark and Ray will write to, once started
_pending: dict[str, Path] = {}


def terminal() -> TextIO:
    """Where kgwalk's lines and progress bars go: the terminal's stderr."""
    return _terminal or sys.stderr


def log(message: str) -> None:
    print(f"[kgwalk] {message}", file=terminal(), flush=True)


def timed(stage: str, fn: Callable[[], T], describe: Callable[[T], str]) -> T:
    """Run one stage between a start line and a line saying what it did and how long it took."""
    log(f"{stage}: started")
    start = time.perf_counter()
    result = fn()
    log(f"{stage}: {describe(result)} in {time.perf_counter() - start:.1f} s")
    return result


def log_path(root: Path, command: str) -> Path:
    """A command's engine log: <KG folder>/_logs/<command>-<local time>-<pid>.log."""
    return root / "_logs" / f"{command}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"


@contextmanager
def engine_logs(path: Path | None) -> Iterator[None]:
    """For one CLI command: Spark's and Ray's output goes to `path` once they start (None: it
    stays on the terminal, --verbose). Created only then, under the writer lock, so that a
    command that fails before leaves no file. The terminal's stderr is back on the way out;
    engines started meanwhile keep writing to the file."""
    global _terminal
    if path is not None:
        _pending["path"] = path
    try:
        yield
    finally:
        _pending.clear()
        if _terminal is not None:
            sys.stderr.flush()
            os.dup2(_terminal.fileno(), 2)
            _terminal.close()
            _terminal = None


def quiet_engines() -> None:
    """Called before Spark or Ray starts: within `engine_logs(path)`, send this process's stderr
    (fd 2, which the engines' processes inherit) to `path` from now on, keeping a copy of the
    terminal's for kgwalk's lines, and say so in one line. Once per command; a no-op outside one."""
    global _terminal
    path = _pending.get("path")
    if path is None or _terminal is not None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError:  # an unwritable warehouse: the writer lock has said so already; keep the terminal
        return
    sys.stderr.flush()
    _terminal = os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8", errors="backslashreplace")
    os.dup2(fd, 2)
    os.close(fd)
    log(f"Spark's and Ray's logs: {path} (--verbose shows them here)")
