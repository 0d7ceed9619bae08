"""Walk generation: specs, the CSR graph, walkers, and the engine that runs them."""

from kgwalk.walks.engine import all_walks, generate_walks
from kgwalk.walks.graph import Graph
from kgwalk.walks.spec import WalkSpec
from kgwalk.walks.table import WALKS_SCHEMA

__all__ = ["WALKS_SCHEMA", "Graph", "WalkSpec", "all_walks", "generate_walks"]
