"""spark-submit entry for the walks stage (same options as `kgwalk walks`):

    PYSPARK_PYTHON=.venv/bin/python .venv/bin/spark-submit --master 'local[*]' jobs/build_walks.py --name demo
"""

import sys

from kgwalk.cli import main

if __name__ == "__main__":
    main(["walks", *sys.argv[1:]])
