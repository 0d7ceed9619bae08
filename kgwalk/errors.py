"""One exception type for every error a user can fix; the CLI prints it as one line."""


class KgwalkError(Exception):
    """A user-facing error: bad input, bad config, missing table. Printed without a traceback."""


class QualityGateFailed(KgwalkError):
    """A stage's output broke a data-quality expectation; nothing was committed (exit code 3)."""


class BusyError(KgwalkError):
    """Another writer holds the KG: nothing was done; retry later (exit code 75, EX_TEMPFAIL)."""


class PortInUse(KgwalkError):
    """`kgwalk serve`: another program listens on the port; checked before the warm-up (exit code 98, EADDRINUSE's errno on Linux)."""
