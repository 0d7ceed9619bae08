"""Ray pipeline entry for the verbalize stage (same options as `kgwalk verbalize`)."""

import sys

from kgwalk.cli import main

if __name__ == "__main__":
    main(["verbalize", *sys.argv[1:]])
