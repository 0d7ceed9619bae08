"""All stages in order (ingest -> walks -> verbalize -> embed -> index); same options as `kgwalk build`."""

import sys

from kgwalk.cli import main

if __name__ == "__main__":
    main(["build", *sys.argv[1:]])
