"""Benchmark: entity alignment (`ingest.align`) against the default on MetaQA dev, plain questions.

    .venv/bin/python bench/align.py [--warehouse /tmp/kgwalk-options] [--max-seconds 240]
    .venv/bin/python bench/align.py --report       # only the report, from the saved rows

Runs on bench/temporal.py's sub-corpus (`--stage source`, then `--stage corpus`), which holds the
walks of the topics of the eval's deterministic dev sample (1,000 questions per hop count) and of
every entity the alignment pairs with one of them, so the duplicates compete in node search as
they do in the whole KB. The links are computed from the KG tables when the retriever opens
(kgwalk/kg/align.py), so the same index serves both rows of each pair; `ingest.align=true` at
query time is the whole difference.

Rows: node search dense (the paper) and hybrid (the default) x alignment off / on, zero-shot
(`query.rerank: none`) and, for hybrid, with the fitted path prior. Topic recall counts the
question's topic, or with alignment on, the entity it is linked to (its walks are the topic's).
Each row is saved as it finishes: rerun until all are done (`--max-seconds` per process, for the
shared heavy-work lock). Writes bench/results/align.md.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, replace
from pathlib import Path

from common import ALIGN_THRESHOLD, OPTIONS_SUBCORPUS, OPTIONS_WAREHOUSE, alignment_of, sampled
from report import save_report

from kgwalk.eval.metaqa import score_retrieval
from kgwalk.kg.align import STATUSES, links
from kgwalk.query import Retriever
from kgwalk.storage import read_table

ROWS = [("dense", "none"), ("hybrid", "none"), ("hybrid", "auto")]


def run_row(warehouse: Path, node_search: str, rerank: str, aligned: bool, linked: dict[int, int]) -> list[dict]:
    retriever = Retriever.from_config(None, ["embed.model=static", f"query.node_search={node_search}", f"query.rerank={rerank}",
                                             f"ingest.align={str(aligned).lower()}"], name=OPTIONS_SUBCORPUS, warehouse=str(warehouse))
    retriever.warm_up()
    out = []
    for hops, questions in sampled("dev").items():
        if aligned:  # the topic's stand-in: the entity it is linked to
            questions = [replace(q, topic=linked.get(q.topic, q.topic)) for q in questions]
        twinned = [q for q in questions if q.topic in linked or q.topic in linked.values()]
        for subset, qs in (("all", questions), ("topic has a linked twin", twinned)):
            scores = score_retrieval(retriever, qs, hops, plain=True)
            out.append({"subset": subset, "node_search": node_search, "rerank": retriever.rerank, "aligned": aligned, **asdict(scores)})
    retriever.close()
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", default=OPTIONS_WAREHOUSE)
    p.add_argument("--max-seconds", type=float, default=240, help="start no new row after this long")
    p.add_argument("--report", action="store_true", help="only write the report from the saved rows")
    args = p.parse_args()
    warehouse = Path(args.warehouse)
    saved = warehouse / "align.runs.json"
    rows = json.loads(saved.read_text()) if saved.exists() else {}
    table = alignment_of(warehouse)
    linked = links(table)
    start = time.perf_counter()
    for node_search, rerank in ([] if args.report else ROWS):
        for aligned in (False, True):
            key = f"{node_search}/{rerank}/{aligned}"
            if key in rows or time.perf_counter() - start > args.max_seconds:
                continue
            rows[key] = run_row(warehouse, node_search, rerank, aligned, linked)
            saved.write_text(json.dumps(rows))
            print(key, "done", flush=True)
    if len(rows) < 2 * len(ROWS):
        print(f"{len(rows)} of {2 * len(ROWS)} rows done: run again")
        return
    entities = read_table(warehouse / "metaqa" / "entities", ["id"]).num_rows
    counts = {s: table["status"].to_pylist().count(s) for s in STATUSES}
    body = ["| questions | node search | path prior | alignment | n | topic recall | context recall@3 | answer-set recall | extractive Hits@1 | p50 ms |",
            "|---|---|---|---|---:|---:|---:|---:|---:|---:|"]
    flat = [r for rs in rows.values() for r in rs if r["questions"]]  # (no 3-hop topic of the sample has a linked twin)
    for r in sorted(flat, key=lambda r: (r["subset"] != "all", r["hops"], r["node_search"], r["rerank"], r["aligned"])):
        body.append(f"| {r['subset']}, {r['hops']}-hop | {r['node_search']} | {'fitted' if r['rerank'] == 'paths' else 'none'} | "
                    f"{'on' if r['aligned'] else 'off'} | {r['questions']} | {r['topic_recall']:.3f} | {r['context_recall']:.3f} | "
                    f"{r['answer_recall']:.3f} | {r['extractive_hits1']:.3f} | {r['latency_ms']['retrieval']['p50']:.1f} |")
    corpus = json.loads((warehouse / f"{OPTIONS_SUBCORPUS}.json").read_text())
    facts = [f"- alignment of the whole MetaQA KB at threshold {ALIGN_THRESHOLD}: {len(table):,} candidate pairs, "
             f"{counts['linked']:,} linked (entities {entities:,} -> {entities - len(linked):,} once aliases fold), "
             f"{counts['candidate']:,} below the threshold",
             f"- corpus: bench/temporal.py's MetaQA sub-corpus, {corpus['walks']:,} walks from {corpus['roots']:,} roots, `embed.model: static`",
             "- questions: MetaQA dev, the eval's 1,000-question sample per hop count, plain (brackets dropped), k 3x3"]
    save_report("align", "Entity alignment (ingest.align) vs the default, MetaQA dev", facts, body)


if __name__ == "__main__":
    main()
