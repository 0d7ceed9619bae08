"""`kgwalk`: one subcommand per stage, `build` for all of them, and `query`."""

from __future__ import annotations

import argparse
from dataclasses import asdict
import json
import sys

from kgwalk.config import Config, load_config
from kgwalk.errors import BusyError, KgwalkError


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--conf", help="YAML config (default: conf/local.yaml)")
    p.add_argument("--name", help="KG name: table folder and collection prefix (conf: name)")
    p.add_argument("--warehouse", help="folder of Delta tables and the embedded index (conf: warehouse)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override any config key, e.g. --set walks.depth=2 (repeatable)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kgwalk", description="Walk&Retrieve corpus builder")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in [
        ("build", "all stages: ingest, walks, verbalize, embed, index"),
        ("ingest", "read a KG file into Delta tables (entities, relations, edges, rejected)"),
    ]:
        p = sub.add_parser(name, help=help_text)
        _common(p)
        p.add_argument("--kg", help="KG file (conf: kg.path)")
        p.add_argument("--format", help="pipe | tsv | csv | nt | parquet (default: by suffix)")
    for name, help_text in [
        ("walks", "Spark job: BFS and random walks from every entity -> Delta `walks`"),
        ("verbalize", "Ray pipeline: one sentence per walk -> Delta `texts`"),
        ("embed", "Ray actor pool: sentence vectors -> Delta `vectors`"),
        ("index", "walk and node vectors -> Qdrant"),
    ]:
        _common(sub.add_parser(name, help=help_text))
    r = sub.add_parser("refresh", help="apply a change set or a new snapshot; recompute only what it reaches")
    _common(r)
    source = r.add_mutually_exclusive_group(required=True)
    source.add_argument("--changes", help="change set: a KG file with an op (add/remove) per triple")
    source.add_argument("--snapshot", help="the new full KG, diffed against the current one")
    r.add_argument("--format", help="pipe | tsv | csv | nt | parquet (default: by suffix)")
    r.add_argument("--spark", action="store_true", help="walk the affected roots as a Spark job (spark-submit jobs/refresh_walks.py)")
    _common(sub.add_parser("status", help="table versions and what each derived table and the index reflect"))
    q = sub.add_parser("query", help="top-k nodes, then top-k walks of each (Eq. 3)")
    _common(q)
    q.add_argument("question")
    q.add_argument("--k-nodes", type=int, help="nodes to retrieve (conf: query.k_nodes)")
    q.add_argument("--k-walks", type=int, help="walks per node (conf: query.k_walks)")
    q.add_argument("--json", action="store_true", help="print JSON for programs")
    e = sub.add_parser("eval", help="retrieval quality on MetaQA questions (no LLM): topic recall, context recall@k, extractive Hits@1")
    _common(e)
    e.add_argument("dataset", choices=["metaqa"])
    e.add_argument("--split", choices=["dev", "test"], default="dev", help="tune on dev, report on test (default: dev)")
    e.add_argument("--hops", default="1,2,3", help="comma-separated hop counts (default: 1,2,3)")
    e.add_argument("--limit", type=int, help="questions per hop count, sampled deterministically (default: all)")
    e.add_argument("--data", help="MetaQA folder (default: ../shared/data/metaqa)")
    e.add_argument("--json", action="store_true", help="print JSON for programs")
    s = sub.add_parser("synth", help="write a synthetic CRAG-like KG (movie, music, sports, finance, open domains)")
    s.add_argument("--edges", required=True, help="number of triples: 250000, 250k, 1M, 10M ...")
    s.add_argument("--out", required=True, help="output file: .parquet (recommended), .tsv or .txt (pipe-separated)")
    s.add_argument("--seed", type=int, default=0, help="random seed; the same edges and seed give the same file (default: 0)")
    return parser


def config_from_args(args: argparse.Namespace) -> Config:
    values = {"name": args.name, "warehouse": args.warehouse}
    if getattr(args, "kg", None):
        values["kg.path"] = args.kg
    if getattr(args, "format", None):
        values["kg.format"] = args.format
    return load_config(args.conf, args.overrides, **values)


def _print_hits(hits) -> None:
    for i, node in enumerate(hits, 1):
        print(f"{i}. {node.label}  (node score {node.score:.3f})")
        for walk in node.walks:
            print(f"   {walk.score:.3f}  [{walk.kind}] {walk.text}")
            print("          " + "  ".join(f"({h} | {r} | {t})" for h, r, t in walk.triples))


def run(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "synth":  # needs no config
        from kgwalk.kg.synth import parse_size, write_synth

        stats = write_synth(args.out, parse_size(args.edges), args.seed)
        print(f"{args.out}: {stats.summary()}")
        return 0
    cfg = config_from_args(args)
    from kgwalk import stages

    if args.command == "query":
        from kgwalk.query.retriever import Retriever, hits_to_json

        retriever = Retriever(cfg)
        hits = retriever.retrieve(args.question, args.k_nodes, args.k_walks)
        retriever.close()
        if args.json:
            print(json.dumps({"question": args.question, "nodes": hits_to_json(hits)}, ensure_ascii=False))
        else:
            _print_hits(hits)
        return 0
    if args.command == "eval":
        from kgwalk.eval.metaqa import METAQA_DIR, load_questions, question_file, sample, score_retrieval
        from kgwalk.query.retriever import Retriever

        try:
            hops = [int(h) for h in args.hops.split(",")]
        except ValueError:
            raise KgwalkError(f"eval: --hops takes comma-separated numbers, got {args.hops!r}") from None
        files = {h: question_file(args.data or METAQA_DIR, h, args.split) for h in hops}
        retriever = Retriever(cfg)
        scores = [score_retrieval(retriever, sample(load_questions(files[h]), args.limit), h) for h in hops]
        retriever.close()
        if args.json:
            print(json.dumps([asdict(s) for s in scores]))
        else:
            print(f"MetaQA {args.split}, k_nodes={cfg.query.k_nodes}, k_walks={cfg.query.k_walks}")
            print("hops  questions  topic recall  context recall@k  extractive Hits@1")
            for s in scores:
                print(f"{s.hops:>4}  {s.questions:>9,}  {s.topic_recall:>12.4f}  {s.context_recall:>16.4f}  {s.extractive_hits1:>17.4f}")
        return 0
    if args.command == "status":
        from kgwalk.refresh.status import status_text

        print(status_text(cfg))
        return 0
    from kgwalk.refresh.state import writer_lock

    if args.command == "refresh":
        from kgwalk.refresh.job import run_refresh

        spark = None
        if args.spark:
            from kgwalk.spark import get_spark

            spark = get_spark(cfg.spark)
        report = stages.timed(
            "refresh",
            lambda: run_refresh(cfg, args.changes or args.snapshot, args.format or "auto", bool(args.snapshot), spark),
            lambda r: r.summary(),
        )
        print(json.dumps({"refresh": report.summary(), "kg": report.kg.summary() if report.kg else "already applied",
                          "seconds": {k: round(v, 2) for k, v in report.seconds.items()}}))
        return 0
    runner = {
        "build": stages.run_build,
        "ingest": stages.run_ingest,
        "walks": stages.run_walks,
        "verbalize": stages.run_verbalize,
        "embed": stages.run_embed,
        "index": stages.run_index,
    }[args.command]
    with writer_lock(cfg, f"kgwalk {args.command}"):
        runner(cfg)
    return 0


def main(argv: list[str] | None = None) -> None:
    try:
        code = run(argv)
    except BusyError as e:
        print(f"kgwalk: busy: {e}", file=sys.stderr)
        code = 75  # EX_TEMPFAIL: schedulers may retry
    except KgwalkError as e:
        print(f"kgwalk: error: {e}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print("kgwalk: interrupted", file=sys.stderr)
        code = 130
    sys.exit(code)


if __name__ == "__main__":
    main()
