"""Query-side ablations and retrieval latency on MetaQA, in one run.

    .venv/bin/python bench/query.py --warehouse /tmp/kgwalk-q --name metaqa [--limit 1000]

Needs a built MetaQA corpus (`kgwalk build --kg ../shared/data/metaqa/kb.txt --name metaqa`).
Tuning only: questions come from qa_dev. The path prior is fitted on dev lines of even index and
every score is measured on a deterministic sample of the odd ones, so no question is both.

Part A, walk settings (no embedding needed): answer reachability (a gold answer on some walk of
the topic entity, the ceiling of context recall) and walks per root, over the sampled questions'
topic entities: BFS vs random walks, depth 1-4, direction out vs both, the signature cap on/off.
Part B, retrieval on the built index: the paper's dense search, hybrid node search, the path
prior, k = 1..5 and a walk budget: topic recall, context recall@k, extractive Hits@1, p50/p99.

Writes bench/results/query_ablations.{md,csv,png} and bench/results/query_latency.md.
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from report import save_report

from kgwalk.config import load_config
from kgwalk.eval.metaqa import METAQA_DIR, AnswerReachability, Question, load_questions, question_file, sample, score_retrieval
from kgwalk.query import Retriever
from kgwalk.query.paths import PRIOR_TABLE, fit_path_prior, read_examples
from kgwalk.storage import read_table, write_table
from kgwalk.walks.engine import generate_walks
from kgwalk.verbalize import TemplateVerbalizer
from kgwalk.walks.graph import Graph
from kgwalk.walks.labels import LabelLookup
from kgwalk.walks.spec import WalkSpec

RESULTS = Path(__file__).resolve().parent / "results"
HOPS = (1, 2, 3)


def split_dev(limit: int) -> tuple[Path, dict[int, list[Question]]]:
    """(a file of the even dev lines for fitting, a sample of the odd dev lines per hop for scoring)."""
    fit = Path(tempfile.mkdtemp()) / "fit.txt"
    evaluate = {}
    with fit.open("w") as out:
        for h in HOPS:
            lines = question_file(METAQA_DIR, h, "dev").read_text(encoding="utf-8").splitlines()
            out.write("\n".join(lines[0::2]) + "\n")
            odd = Path(tempfile.mkdtemp()) / "odd.txt"
            odd.write_text("\n".join(lines[1::2]) + "\n")
            evaluate[h] = sample(load_questions(odd), limit)
    return fit, evaluate


class TopicWalkSearch:
    """Walk search inside the topic entity's own walks, as the paper ranks them (cosine to the
    question), for any walk setting without building and indexing a corpus per setting: only the
    sampled topics' walks are verbalized (template) and embedded, and each distinct sentence is
    embedded once across all settings. Scores context recall@k and extractive Hits@1 given the
    topic node, i.e. the walk half of node-then-walk retrieval."""

    def __init__(self, cfg, tables: dict, embedder, k_walks: int) -> None:
        self.labels = LabelLookup(tables["entities"], tables["relations"])
        self.verbalizer = TemplateVerbalizer(cfg.verbalize.phrases)
        self.embedder = embedder
        self.k = k_walks
        self.vectors: dict[str, np.ndarray] = {}

    def _embed(self, texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        for i in range(0, len(new), 4096):
            chunk = new[i:i + 4096]
            self.vectors.update(zip(chunk, self.embedder.encode(chunk)))
        return np.stack([self.vectors[t] for t in texts]) if texts else np.zeros((0, 1), np.float32)

    def score(self, walks: pa.Table, questions: list[Question]) -> tuple[float, float, int]:
        """(context recall@k, extractive Hits@1, sentences embedded so far) over `questions`."""
        walks = walks.filter(pc.is_in(walks.column("root"), pa.array(np.unique([q.topic for q in questions]))))
        vectors = self._embed(self.verbalizer.sentences(self.labels.attach(walks)).to_pylist())
        roots = walks.column("root").to_numpy()
        nodes = walks.column("nodes").to_pylist()
        question_vectors = self.embedder.encode([q.text for q in questions])
        context = hits1 = 0
        for q, qv in zip(questions, question_vectors):
            rows = np.flatnonzero(roots == q.topic)
            if not len(rows):
                continue
            best = rows[np.argsort(-(vectors[rows] @ qv), kind="stable")[: self.k]]
            context += any(not q.answers.isdisjoint(nodes[i]) for i in best)
            hits1 += nodes[best[0]][-1] in q.answers
        n = max(len(questions), 1)
        return context / n, hits1 / n, len(self.vectors)


def walk_ablations(cfg, questions: dict[int, list[Question]], embedder, per_hop: int) -> list[dict]:
    tables = {t: read_table(cfg.table(t)) for t in ("edges", "entities", "relations")}
    search = TopicWalkSearch(cfg, tables, embedder, cfg.query.k_walks)
    base = WalkSpec.from_conf(cfg.walks)
    variants = [("default", base)]
    variants += [("random walks", replace(base, kinds=("random",)))]
    variants += [(f"depth {d}", replace(base, depth=d)) for d in (1, 2, 4)]
    variants += [("direction out", replace(base, direction="out")), ("no signature cap", replace(base, max_per_signature=None))]
    graphs: dict[str, Graph] = {}
    rows = []
    for name, spec in variants:
        if spec.direction not in graphs:
            graphs[spec.direction] = Graph.from_arrow(tables["edges"], tables["entities"], tables["relations"], spec.direction)
        graph = graphs[spec.direction]
        row = {"part": "A walks", "variant": name}
        start = time.perf_counter()
        for h, qs in questions.items():
            reach = AnswerReachability(qs)
            roots = np.unique([q.topic for q in qs])
            roots = roots[np.isin(roots, graph.node_ids)]
            batches = list(generate_walks(graph, roots, spec, cfg.walks.roots_per_batch, cfg.walks.max_paths_per_batch))
            walks = pa.concat_tables(batches) if batches else None
            if walks is not None:
                reach.add(walks)
            distinct = walks.num_rows if walks is not None else 0
            row[f"reach_{h}"] = reach.share
            row[f"walks_per_root_{h}"] = distinct / max(len(roots), 1)
            if walks is not None:
                row[f"context_{h}"], row[f"hits1_{h}"], embedded = search.score(walks, qs[:per_hop])
        row["hits1_avg"] = float(np.mean([row.get(f"hits1_{h}", 0.0) for h in questions]))
        row["seconds"] = time.perf_counter() - start
        rows.append(row)
        print(f"A {name}: " + ", ".join(f"{k}={v:.3f}" for k, v in row.items() if isinstance(v, float)) + f" (sentences embedded: {embedded:,})", flush=True)
    return rows


def retrieval_ablations(cfg, questions: dict[int, list[Question]], embedder) -> tuple[list[dict], dict]:
    plain = ["query.node_search=dense", "query.rerank=none"]
    hybrid = ["query.node_search=hybrid", "query.rerank=none"]
    paths = ["query.node_search=hybrid", "query.rerank=paths"]
    variants = [("paper: dense nodes, cosine walks", plain, 3), ("hybrid nodes", hybrid, 3), ("hybrid + path prior", paths, 3)]
    variants += [(f"hybrid + path prior, k={k}", paths, k) for k in (1, 2, 4, 5)]
    variants += [("hybrid + path prior, budget 3 walks", paths + ["query.walk_budget=3"], 3)]
    variants += [("paper, k=5", plain, 5), ("hybrid + path prior, torch question encoder", paths + ["query.encoder=torch"], 3)]
    rows, latency = [], {}
    for name, overrides, k in variants:
        run_cfg = load_config(None, overrides + [f"query.k_nodes={k}", f"query.k_walks={k}"], name=cfg.name, warehouse=cfg.warehouse)
        # one shared question encoder (ONNX, the default) except where the variant names another
        retriever = Retriever(run_cfg, embedder=None if any(o.startswith("query.encoder") for o in overrides) else embedder)
        retriever.warm_up()
        row = {"part": "B retrieval", "variant": name}
        for h, qs in questions.items():
            s = score_retrieval(retriever, qs, h)
            row.update({f"topic_{h}": s.topic_recall, f"context_{h}": s.context_recall, f"hits1_{h}": s.extractive_hits1,
                        f"p50_{h}": s.latency_ms["retrieval"]["p50"], f"p99_{h}": s.latency_ms["retrieval"]["p99"]})
            if k == 3:
                latency[(name, h)] = s.latency_ms
        row["hits1_avg"] = float(np.mean([row[f"hits1_{h}"] for h in questions]))
        retriever.close()
        rows.append(row)
        print(f"B {name}: " + ", ".join(f"{k}={v:.3f}" for k, v in row.items() if isinstance(v, float)), flush=True)
    return rows, latency


def previous_rows(part: str) -> list[dict]:
    """Rows of one part from the last run's CSV (numbers back as floats)."""
    with (RESULTS / "query_ablations.csv").open() as f:
        rows = [r for r in csv.DictReader(f) if r["part"].startswith(part)]
    return [{k: v if k in ("part", "variant") else float(v) for k, v in r.items() if v != ""} for r in rows]


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(14, 5))
    a = [r for r in rows if r["part"].startswith("A")]
    b = [r for r in rows if r["part"].startswith("B")]
    x = np.arange(len(a))
    for i, h in enumerate(HOPS):
        ax_a.bar(x + (i - 1) * 0.27, [r[f"reach_{h}"] for r in a], 0.27, label=f"{h}-hop")
    ax_a.set_xticks(x, [r["variant"] for r in a], rotation=30, ha="right")
    ax_a.scatter(np.repeat(x, len(HOPS)) + np.tile((np.arange(len(HOPS)) - 1) * 0.27, len(a)),
                 [r[f"hits1_{h}"] for r in a for h in HOPS], color="black", marker="_", s=200, label="walk search Hits@1")
    ax_a.set_title("A: walk settings: answer reachability (bars), Hits@1 given the topic (marks)")
    ax_a.set_ylim(0, 1)
    ax_a.legend()
    x = np.arange(len(b))
    for i, h in enumerate(HOPS):
        ax_b.bar(x + (i - 1) * 0.27, [r[f"hits1_{h}"] for r in b], 0.27, label=f"{h}-hop")
    ax_b.set_xticks(x, [r["variant"] for r in b], rotation=30, ha="right")
    ax_b.set_title("B: extractive Hits@1 (no LLM)")
    ax_b.set_ylim(0, 1)
    ax_b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--warehouse", default="/tmp/kgwalk-q")
    parser.add_argument("--name", default="metaqa")
    parser.add_argument("--limit", type=int, default=1000, help="dev questions per hop count (default 1000)")
    parser.add_argument("--walk-limit", type=int, default=300,
                        help="of those, questions per hop whose topic walks are embedded for part A's walk search (default 300)")
    parser.add_argument("--parts", default="A,B", help="A,B (default) or B alone: part A's rows are then read back from the last CSV")
    args = parser.parse_args()
    cfg = load_config(None, name=args.name, warehouse=args.warehouse)
    fit_file, questions = split_dev(args.limit)

    start = time.perf_counter()
    retriever = Retriever(cfg)
    embedder = retriever.prior_embedder
    examples, _ = read_examples(str(fit_file), retriever.lexicon)
    write_table(cfg.table(PRIOR_TABLE), fit_path_prior(cfg, examples, embedder, retriever.lexicon, retriever.prior_model))
    retriever.close()
    fit_s = time.perf_counter() - start

    rows_a = walk_ablations(cfg, questions, embedder, args.walk_limit) if "A" in args.parts.split(",") else previous_rows("A")
    rows_b, latency = retrieval_ablations(cfg, questions, embedder)
    RESULTS.mkdir(exist_ok=True)
    columns = list(dict.fromkeys(k for r in rows_a + rows_b for k in r))
    with (RESULTS / "query_ablations.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        writer.writerows(rows_a + rows_b)
    plot(rows_a + rows_b, RESULTS / "query_ablations.png")

    n = {h: len(q) for h, q in questions.items()}
    facts = [f"- MetaQA dev (reconstructed KB): {n[1]:,} / {n[2]:,} / {n[3]:,} questions (1/2/3-hop), a deterministic sample of odd dev lines",
             f"- path prior fitted on the {len(examples):,} even dev lines in {fit_s:.0f} s (no question is in both)",
             "- corpus: the defaults (conf/local.yaml): BFS both directions, depth 3, hub degree 50, one walk per relation path; MiniLM"]
    if "A" not in args.parts.split(","):
        facts.append("- part A: rows of the previous run (this run: `--parts B`), same questions and --walk-limit")
    trip = lambda r, key: " / ".join(f"{r[f'{key}_{h}']:.3f}" for h in HOPS)  # noqa: E731
    body = ["## A. Walk settings, over the topic entities' walks", "",
            f"Answer reachability: a gold answer on some walk of the topic entity (all {n[1]:,} questions per hop; the ceiling of "
            f"context recall). Walk search: the topic's walks ranked by cosine to the question (template sentences, MiniLM), "
            f"top {cfg.query.k_walks}, on the first {min(args.walk_limit, n[1]):,} questions per hop: context recall@{cfg.query.k_walks} "
            "and extractive Hits@1 given the topic node.", "",
            "| variant | reach 1/2/3 | walk search: context recall 1/2/3 | walk search: Hits@1 1/2/3 | Hits@1 avg | distinct walks/root 1/2/3-hop topics | s |",
            "|---|---|---|---|---|---|---|"]
    body += [f"| {r['variant']} | {trip(r, 'reach')} | {trip(r, 'context')} | {trip(r, 'hits1')} | {100 * r['hits1_avg']:.1f} | "
             + " / ".join(f"{r[f'walks_per_root_{h}']:,.0f}" for h in HOPS) + f" | {r['seconds']:.0f} |" for r in rows_a]
    body += ["", "## B. Retrieval on the built index (context recall@k, extractive Hits@1; k nodes x k walks)", "",
             "| variant | topic 1/2/3 | context recall 1/2/3 | extractive Hits@1 1/2/3 | Hits@1 avg | retrieval ms p50 / p99 (1-hop) |",
             "|---|---|---|---|---|---|"]
    body += [f"| {r['variant']} | {trip(r, 'topic')} | {trip(r, 'context')} | {trip(r, 'hits1')} | {100 * r['hits1_avg']:.1f} | "
             f"{r['p50_1']:.1f} / {r['p99_1']:.1f} |" for r in rows_b]
    body += ["", "Plot: `bench/results/query_ablations.png`; every number: `bench/results/query_ablations.csv`."]
    save_report("query_ablations", "Query ablations on MetaQA dev", facts, body)

    lat = ["| variant | hops | " + " | ".join(f"{p} p50 / p99" for p in ("lexicon", "embed", "node_search", "walk_search", "rerank", "retrieval")) + " |",
           "|---|---|" + "---|" * 6]
    for (name, h), phases in latency.items():
        lat.append(f"| {name} | {h} | " + " | ".join(f"{phases.get(p, {}).get('p50', 0):.2f} / {phases.get(p, {}).get('p99', 0):.2f}" for p in
                                                    ("lexicon", "embed", "node_search", "walk_search", "rerank", "retrieval")) + " |")
    save_report("query_latency", "Retrieval latency per phase on the full MetaQA index (ms, one question at a time, CPU)",
                facts[:1] + ["- target: retrieval p50 <= 15 ms, p99 <= 50 ms with the default embedder"], lat)


if __name__ == "__main__":
    main()
