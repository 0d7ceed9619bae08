"""Benchmark: retrieval quality on MetaQA dev by walk-vector precision (float32, int8, ...) and
by embedder (MiniLM, a static model).

    .venv/bin/python bench/embed_quality.py [--warehouse /tmp/kgwalk-q] [--distractors 4000]
        [--precisions float32,int8] [--copy-vectors-from metaqa --copied-label "float16 (H100)"]
    .venv/bin/python bench/embed_quality.py --precisions float32 --models static --without-prior \
        --report embed_quality_static

Needs the MetaQA KG walked and verbalized in `<warehouse>/metaqa` (`kgwalk ingest`, `walks`,
`verbalize`) and its path prior fitted (`kgwalk fit-paths`). Embedding all 763K walk sentences
once per precision takes hours on 2 cores, so the comparison runs on a sub-corpus: the walks
rooted at the topic entities of the dev questions the eval samples (1,000 per hop count), plus
the walks of `--distractors` random other roots, so node search still has to choose. Every
precision gets the same sub-corpus and the same question encoder; only walk vectors differ.
A `--models` row changes the model: walk vectors, question encoder and the path prior (refitted
with that encoder on the three dev question files, as the source's was) all come from it.
`--reranks` lists the orders every row is scored in (`paths`: the fitted prior; `synthetic`: the
zero-shot default; `none`: cosine alone), and `--plain` scores each a second time with the
questions as users type them (brackets dropped).

Per precision: copy the KG to `<warehouse>/metaqa_<precision>`, keep the sub-corpus walks,
`kgwalk verbalize`, `kgwalk embed --set embed.precision=P` (the Ray stage), `kgwalk index`,
`kgwalk eval metaqa --split dev --limit 1000`. `--copy-vectors-from NAME` adds a row whose vectors
are taken from `NAME`'s vectors table: a full build embedded elsewhere, in a precision this CPU
cannot run fast (bfloat16 on a CPU with bfloat16 units, float16 on a GPU). The first precision is
the reference of the deltas. Writes bench/results/embed_quality.md.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
from deltalake import DeltaTable, write_deltalake
from common import DATA, kgwalk, kgwalk_commit, make_subcorpus
from report import save_report

from kgwalk.eval.metaqa import question_file

def evaluate(warehouse: Path, name: str, settings: list[str], refit_prior: bool, reranks: list[str], plain: bool) -> list[dict]:
    where = ["--warehouse", str(warehouse), "--name", name, *settings]
    kgwalk("index", *where)
    if refit_prior or not (warehouse / name / "path_prior").exists():  # the prior holds this row's encoder's question vectors
        kgwalk("fit-paths", *where, *[a for hops in (1, 2, 3) for a in ("--questions", str(question_file(DATA, hops, "dev")))])
    scores = []
    for rerank in reranks:
        for form in [[]] + ([["--plain"]] if plain else []):
            out = kgwalk("eval", "metaqa", *where, "--set", f"query.rerank={rerank}", "--split", "dev", "--hops", "1,2,3",
                         "--limit", "1000", "--data", str(DATA), "--json", *form)
            scores += [s | {"rerank": rerank} for s in json.loads(out)]  # the asked order, not "auto"'s resolution
    return scores


def copy_vectors(warehouse: Path, source: str, name: str) -> None:
    """`source`'s vectors for `name`'s walks (same KG, so same walk and text ids)."""
    texts = DeltaTable(str(warehouse / name / "texts")).to_pyarrow_table(columns=["walk_id", "text_id"])
    vectors = DeltaTable(str(warehouse / source / "vectors")).to_pyarrow_table()
    vectors = vectors.filter(pc.is_in(vectors["walk_id"], texts["walk_id"]))
    joined = texts.join(vectors.select(["walk_id", "text_id"]), ["walk_id", "text_id"], join_type="inner")
    if joined.num_rows != texts.num_rows:
        raise SystemExit(f"{source}'s vectors cover {joined.num_rows:,} of {texts.num_rows:,} walks: not the same corpus")
    write_deltalake(str(warehouse / name / "vectors"), vectors, mode="overwrite")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", default="/tmp/kgwalk-q")
    p.add_argument("--source", default="metaqa")
    p.add_argument("--distractors", type=int, default=4000)
    p.add_argument("--precisions", default="float32,int8")
    p.add_argument("--models", default="", help="comma-separated embed.model values, each a row (e.g. static), with settings after + "
                   "(static+query.prior_encoder=all-MiniLM-L6-v2)")
    p.add_argument("--reranks", default="paths", help="comma-separated query.rerank values every row is scored with")
    p.add_argument("--plain", action="store_true", help="also score every row with plain questions (brackets dropped)")
    p.add_argument("--report", default="embed_quality", help="bench/results/<report>.md")
    p.add_argument("--copy-vectors-from", help="KG name whose vectors (a full build made elsewhere) make one more row")
    p.add_argument("--copied-label", default="copied vectors", help="that row's label: where and in what precision they were made")
    p.add_argument("--tabulate", action="store_true", help="only tabulate the eval JSONs of an earlier run")
    p.add_argument("--fresh", action="store_true", help="redo every row (else finished rows are reused)")
    args = p.parse_args()
    warehouse = Path(args.warehouse)
    # (KG name, row label, settings for every command of the row)
    runs = [(f"metaqa_{precision}", precision, [f"embed.precision={precision}"]) for precision in args.precisions.split(",")]
    for spec in filter(None, args.models.split(",")):  # a model, and settings of its row after "+": static+query.prior_encoder=...
        model, *extra = spec.split("+")
        label = f"{model} (its own question encoder and prior)" if not extra else f"{model} walks, {', '.join(extra)}"
        runs.append((f"metaqa_{re.sub(r'[^A-Za-z0-9_]', '_', spec)}"[:60], label, [f"embed.model={model}", *extra]))
    if args.copy_vectors_from:
        runs.append(("metaqa_copied", args.copied_label, []))
    results: dict[str, dict] = {}
    if args.fresh:
        for name, _, _ in runs:
            for done in warehouse.glob(f"{name}.*.json"):
                done.unlink()
    for name, _, settings in runs:
        saved, embedded = warehouse / f"{name}.eval.json", warehouse / f"{name}.embed.json"
        sets = [a for kv in settings for a in ("--set", kv)]
        if not args.tabulate and not saved.exists():
            if not embedded.exists():  # an interrupted run resumes after its last embedded row
                walks = make_subcorpus(warehouse, args.source, name, args.distractors)
                where = ["--warehouse", str(warehouse), "--name", name]
                kgwalk("verbalize", *where)
                start = time.perf_counter()
                if name == "metaqa_copied":
                    copy_vectors(warehouse, args.copy_vectors_from, name)
                else:
                    kgwalk("embed", *where, *sets)
                embedded.write_text(json.dumps({"walks": walks, "embed_seconds": time.perf_counter() - start}))
            scores = evaluate(warehouse, name, sets, any(s.startswith("embed.model=") for s in settings), args.reranks.split(","), args.plain)
            saved.write_text(json.dumps({"scores": scores} | json.loads(embedded.read_text())))
        results[name] = json.loads(saved.read_text())
        print(name, json.dumps(results[name])[:200], flush=True)

    def form(s: dict) -> str:
        return "plain" if s.get("plain") else "bracketed"

    body = ["| walk vectors | rerank | questions | hops | topic recall | context recall@3 | extractive Hits@1 "
            "| Δ context recall (points) | Δ Hits@1 (points) |", "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    base = {(s["rerank"], form(s), s["hops"]): s for s in results[runs[0][0]]["scores"]}
    for name, label, _ in runs:
        for s in results[name]["scores"]:
            delta = {m: 100 * (s[m] - base[s["rerank"], form(s), s["hops"]][m]) for m in ("context_recall", "extractive_hits1")}
            body.append(f"| {label} | {s['rerank']} | {form(s)} | {s['hops']} | {s['topic_recall']:.3f} | {s['context_recall']:.3f} "
                        f"| {s['extractive_hits1']:.3f} | {delta['context_recall']:+.1f} | {delta['extractive_hits1']:+.1f} |")
    body += ["", "| walk vectors | rerank | questions | mean context recall@3 | mean extractive Hits@1 | Δ mean Hits@1 (points) |",
             "|---|---|---|---:|---:|---:|"]
    means: dict[tuple[str, str, str], tuple[float, float]] = {}
    for name, label, _ in runs:
        for key in dict.fromkeys((s["rerank"], form(s)) for s in results[name]["scores"]):
            rows = [s for s in results[name]["scores"] if (s["rerank"], form(s)) == key]
            means[name, *key] = (np.mean([s["context_recall"] for s in rows]), np.mean([s["extractive_hits1"] for s in rows]))
            recall, hits = means[name, *key]
            body.append(f"| {label} | {key[0]} | {key[1]} | {recall:.3f} | {hits:.3f} | {100 * (hits - means[runs[0][0], *key][1]):+.1f} |")
    first = results[runs[0][0]]
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; MetaQA dev, 1,000 questions per hop count (the eval's deterministic sample); "
        f"sub-corpus of {first['walks']:,} walks: those rooted at the sampled questions' topic entities plus "
        f"{args.distractors:,} random other roots' (see the script's docstring for why)",
        "- same walks, texts, path prior and question encoder (ONNX float32) for every precision row; only the walk vectors differ; "
        "a model row has its own vectors, question encoder and prior (refitted on the three dev files with that encoder); "
        "defaults otherwise (hybrid node search, k_nodes 3, k_walks 3); rerank paths: the path prior fitted on dev; "
        "synthetic: the zero-shot default (no labelled data); none: cosine order; plain questions: brackets dropped",
        f"- kgwalk's defaults as of git {kgwalk_commit()}; deltas are against the first row ({runs[0][1]}) with the same rerank "
        "and questions, in percentage points",
        "- embed seconds (the Ray stage on this machine; a copied row's are the copy's): "
        + ", ".join(f"{n}: {results[n]['embed_seconds']:.0f} s" if results[n].get("embed_seconds") else f"{n}: vectors of an earlier run"
                    for n, _, _ in runs),
    ]
    save_report(args.report, "Retrieval quality by walk vectors: precision and embedder (MetaQA dev)", facts, body)


if __name__ == "__main__":
    main()
