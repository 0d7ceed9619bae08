"""spark-submit entry for incremental refresh (same options as `kgwalk refresh`); the affected
roots are walked as a Spark job on the cluster, everything else runs on the driver:

    PYSPARK_PYTHON=.venv/bin/python .venv/bin/spark-submit --master 'local[*]' jobs/refresh_walks.py \
        --name demo --changes changes.txt
"""

import sys

from kgwalk.cli import main

if __name__ == "__main__":
    main(["refresh", "--spark", *sys.argv[1:]])
