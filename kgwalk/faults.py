"""Named crash points for fault-injection tests: `KGWALK_CRASH_AT=<name>` kills the process
with SIGKILL when it reaches that point, the way a lost node or an OOM kill would."""

from __future__ import annotations

import os
import signal

CRASH_ENV = "KGWALK_CRASH_AT"


def crashpoint(name: str) -> None:
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
