"""Ray pipeline entry for the embed stage (same options as `kgwalk embed`)."""

import sys

from kgwalk.cli import main

if __name__ == "__main__":
    main(["embed", *sys.argv[1:]])
