"""Progress lines on stderr, shared by every stage, the refresh and the CLI."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def log(message: str) -> None:
    print(f"[kgwalk] {message}", file=sys.stderr, flush=True)


def timed(stage: str, fn: Callable[[], T], describe: Callable[[T], str]) -> T:
    """Run one stage between a start line and a line saying what it did and how long it took."""
    log(f"{stage}: started")
    start = time.perf_counter()
    result = fn()
    log(f"{stage}: {describe(result)} in {time.perf_counter() - start:.1f} s")
    return result
