"""kgwalk: turn knowledge graphs into Walk&Retrieve retrieval corpora.

Stages: ingest -> walks -> verbalize -> embed -> index; then query.
"""

__version__ = "0.1.0"
