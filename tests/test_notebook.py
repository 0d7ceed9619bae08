"""notebooks/query.ipynb runs top to bottom in a real Jupyter kernel on a small corpus built here,
and shows what it says it shows: this corpus's statistics and one question's retrieval, each with
a plot. The kernel finds the corpus the way a user points the notebook at one: KGWALK_CONF."""

import base64
import io
import os
import re

import corpus
import nbformat
import numpy as np
import pytest
import yaml
from conftest import REPO, TINY_KG
from matplotlib import pyplot as plt
from nbclient import NotebookClient

from kgwalk.query import Retriever
from kgwalk.storage import read_table
from kgwalk.walks import Graph

NOTEBOOK = REPO / "notebooks" / "query.ipynb"
# Below the degree of the tiny KG's busiest entities, so the plotted hub cut-off has hubs past it.
HUB_DEGREE = 5
STATS = re.compile(r"([\d,]+) walks from ([\d,]+) roots.*?(\d+) hubs", re.DOTALL)
NODE = re.compile(r"^(\S.*?)  (-?\d+\.\d{3})(  named in the question)?$")
WALK = re.compile(r"^ {4}(-?\d+\.\d{3})  (.+)$")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The corpus's config, and the notebook as executed against it."""
    tmp = tmp_path_factory.mktemp("notebook")
    cfg = corpus.config(tmp / "wh", TINY_KG, [f"walks.hub_degree={HUB_DEGREE}"])
    corpus.build_in_process(cfg)
    # The conf file carries the corpus's settings (its embedder) but names another corpus:
    # KGWALK_NAME and KGWALK_WAREHOUSE must win over it, as --name and --warehouse do.
    conf = tmp / "conf.yaml"
    conf.write_text(yaml.safe_dump(cfg.to_dict() | {"name": "absent", "warehouse": str(tmp / "absent")}))
    env = {**os.environ, "KGWALK_CONF": str(conf), "KGWALK_NAME": cfg.name, "KGWALK_WAREHOUSE": cfg.warehouse}
    env.pop("MPLBACKEND", None)  # an inherited one (Agg, as CI machines set) would replace the inline backend: no figures
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    # the kernel starts in notebooks/, as Jupyter starts it; a failing cell raises CellExecutionError
    client = NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute(env=env)
    return cfg, notebook


def text_of(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def figures_of(cell) -> list[np.ndarray]:
    """The cell's PNG outputs as pixel arrays, each checked to hold a drawing (not one flat colour)."""
    images = [plt.imread(io.BytesIO(base64.b64decode(o.data["image/png"])), format="png")
              for o in cell.outputs if "image/png" in o.get("data", {})]
    assert all(len(np.unique(i.reshape(-1, i.shape[-1]), axis=0)) > 2 for i in images)
    return images


def cell_printing(notebook, pattern: re.Pattern):
    cells = [c for c in notebook.cells if c.cell_type == "code" and pattern.search(text_of(c))]
    assert len(cells) == 1, f"expected one cell printing {pattern.pattern!r}, found {len(cells)}"
    return cells[0]


def test_every_cell_runs_in_order_on_the_corpus_named_by_the_environment(run):
    cfg, notebook = run
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1))
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    assert text_of(code[0]).strip() == f"corpus {cfg.name!r} in {cfg.warehouse}"


def test_statistics_are_this_corpus_with_a_plot(run):
    cfg, notebook = run
    cell = cell_printing(notebook, STATS)
    walks, roots, hubs = (int(g.replace(",", "")) for g in STATS.search(text_of(cell)).groups())
    roots_column = read_table(cfg.table("walks"), ["root"]).column("root").to_numpy()
    tables = [read_table(cfg.table(t)) for t in ("edges", "entities", "relations")]
    degree = Graph.from_arrow(*tables, cfg.walks.direction).degree
    assert (degree > HUB_DEGREE).sum() > 0  # the cut-off the plot marks has hubs beyond it
    assert (walks, roots, hubs) == (len(roots_column), len(np.unique(roots_column)), (degree > HUB_DEGREE).sum())
    assert len(figures_of(cell)) == 1


def test_retrieval_is_what_the_retriever_returns_with_a_plot(run):
    cfg, notebook = run
    cell = cell_printing(notebook, re.compile(r"^\S.*  -?\d+\.\d{3}", re.MULTILINE))
    question, *lines = text_of(cell).splitlines()
    shown: list[tuple[str, str, bool, list[tuple[str, str]]]] = []
    for line in lines:
        if node := NODE.match(line):
            shown.append((node[1], node[2], bool(node[3]), []))
        else:
            walk = WALK.match(line)
            assert walk and shown, f"unexpected line {line!r}"
            shown[-1][3].append((walk[1], walk[2]))
    retriever = Retriever(cfg)  # after the kernel has gone: it held the embedded index
    result = retriever.retrieve(question, k_nodes=len(shown))
    retriever.close()
    assert shown == [(n.label, f"{n.score:.3f}", n.matched, [(f"{w.score:.3f}", w.text) for w in n.walks]) for n in result.nodes]
    assert shown[0][2] and shown[0][0] in question  # the entity the question names comes first
    assert all(walks for *_, walks in shown)
    # the plot of node and walk scores is the cell after the printout
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert len(figures_of(code[code.index(cell) + 1])) == 1


def test_committed_notebook_has_no_outputs():
    """Outputs depend on the corpus the notebook last ran on, and their PNGs would bloat every diff."""
    cells = [c for c in nbformat.read(NOTEBOOK, as_version=4).cells if c.cell_type == "code"]
    assert cells and all(not c.outputs and c.execution_count is None for c in cells)
