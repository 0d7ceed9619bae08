"""One exception type for every error a user can fix; the CLI prints it as one line."""


class KgwalkError(Exception):
    """A user-facing error: bad input, bad config, missing table. Printed without a traceback."""
