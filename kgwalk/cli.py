"""`kgwalk`: one subcommand per stage, `build` for all of them, and `query`."""

from __future__ import annotations

import argparse
import errno
import importlib.util
import json
import sys
from collections.abc import Callable
from contextlib import closing
from dataclasses import asdict
from pathlib import Path
from types import ModuleType

from kgwalk.config import Config, load_config
from kgwalk.errors import BusyError, KgwalkError, PortInUse, QualityGateFailed
from kgwalk.log import engine_logs, log, log_path, timed
from kgwalk.stages import STAGES, Runner, check_kg_exists, check_refresh_input, stage_named


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--conf", help="YAML config (default: conf/local.yaml)")
    p.add_argument("--name", help="KG name: table folder and collection prefix (conf: name)")
    p.add_argument("--warehouse", help="folder of Delta tables and the embedded index (conf: warehouse)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override any config key, e.g. --set walks.depth=2 (repeatable)")
    p.add_argument("--verbose", action="store_true",
                   help="show Spark's and Ray's own output here; by default it goes to a log file, <warehouse>/<name>/_logs/<command>-<time>-<pid>.log")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kgwalk", description="Walk&Retrieve corpus builder")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="all stages: " + ", ".join(s.command for s in STAGES))
    b.add_argument("--rebuild", action="store_true",
                   help="make every stage again; by default a stage an earlier run left up to date (same input and settings) is kept, "
                        "so a build run again after a kill goes on where it stopped")
    stage_commands = [(b, True)]
    stage_commands += [(sub.add_parser(s.command, help=s.help), s.reads_kg_file) for s in STAGES]
    for p, reads_kg_file in stage_commands:
        _common(p)
        if reads_kg_file:
            p.add_argument("--kg", help="KG file (conf: kg.path)")
            p.add_argument("--format", help="pipe | tsv | csv | nt | parquet (default: by suffix)")
    r = sub.add_parser("refresh", help="apply a change set or a new snapshot; recompute only what it reaches")
    _common(r)
    source = r.add_mutually_exclusive_group(required=True)
    source.add_argument("--changes", help="change set: a KG file with an op (add/remove) per triple")
    source.add_argument("--snapshot", help="the new full KG, diffed against the current one")
    r.add_argument("--format", help="pipe | tsv | csv | nt | parquet (default: by suffix)")
    r.add_argument("--spark", action="store_true", help="walk the affected roots as a Spark job (spark-submit jobs/refresh_walks.py)")
    _common(sub.add_parser("status", help="table versions and what each derived table and the index reflect"))
    v = sub.add_parser("vacuum", help="delete the Delta files of table versions nothing reads any more (old versions a refresh replaced)")
    _common(v)
    v.add_argument("--keep-hours", type=int, default=24, help="keep files a table stopped using less than this long ago (default 24)")
    v.add_argument("--dry-run", action="store_true", help="list what would be deleted; delete nothing")
    for command, text in (("query", "top-k nodes, then top-k walks of each (Eq. 3)"),
                          ("answer", "retrieve, then one LLM call with the paper's answer prompt (Fig. 2b; conf: answer.*)")):
        q = sub.add_parser(command, help=text)
        _common(q)
        q.add_argument("question")
        q.add_argument("--k-nodes", type=int, help="nodes to retrieve (conf: query.k_nodes)")
        q.add_argument("--k-walks", type=int, help="walks per node (conf: query.k_walks; the nodes the question names take the places the others leave: query.unnamed_walks)")
        q.add_argument("--json", action="store_true", help="print JSON for programs")
    sv = sub.add_parser("serve", help="HTTP service: /retrieve, /answer, /health (conf: serve.*)")
    _common(sv)
    sv.add_argument("--host", help="address to bind (conf: serve.host, loopback by default)")
    sv.add_argument("--port", type=int, help="port (conf: serve.port)")
    _common(sub.add_parser("mcp", help="MCP server over stdio: tools search, answer, entity, status (the mcp extra; `kgwalk serve` has them at /mcp)"))
    f = sub.add_parser("fit-paths", help="fit the relation-path prior of query.rerank=paths from example questions")
    _common(f)
    f.add_argument("--questions", action="append", default=[],
                   help="a file of `question with [topic]<TAB>answer|answer` lines (MetaQA's format; repeatable)")
    f.add_argument("--generated", type=int, metavar="N",
                   help="also fit on N questions generated from the corpus's own relation paths, no labels needed (kgwalk/query/kg_questions.py)")
    f.add_argument("--seed", type=int, default=0, help="--generated: the draw's seed (default 0)")
    e = sub.add_parser("eval", help="retrieval quality on MetaQA or on your own question files (no LLM): topic recall, context recall@k, answer-set recall, extractive Hits@1")
    _common(e)
    e.add_argument("dataset", choices=["metaqa", "questions"], help="metaqa: MetaQA's hop files | questions: the --file question files")
    e.add_argument("--file", action="append", default=[], help="questions: a file of `question with [topic]<TAB>answer|answer` lines (repeatable; a row each)")
    e.add_argument("--split", choices=["dev", "test"], help="metaqa: tune on dev, report on test (default: dev)")
    e.add_argument("--hops", help="metaqa: comma-separated hop counts (default: 1,2,3)")
    e.add_argument("--limit", type=int, help="questions per hop count or file, sampled deterministically (default: all)")
    e.add_argument("--data", help="metaqa: MetaQA folder (default: ../shared/data/metaqa)")
    e.add_argument("--json", action="store_true", help="print JSON for programs")
    e.add_argument("--answer", action="store_true", help="also answer with the configured LLM (answer.*): Hits@1, accurate, hallucinated, missing")
    e.add_argument("--plain", action="store_true", help="ask the questions as users type them: the topics' [brackets] dropped")
    e.add_argument("--misses", metavar="FILE", help="write each question whose best walk misses to FILE (JSON Lines): what ranked first, "
                                                   "and the best-ranked walk to an answer; the commonest pairs are printed")
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


def _print_retrieval(result) -> None:
    for i, node in enumerate(result.nodes, 1):
        print(f"{i}. {node.label}  (node score {node.score:.3f}{', named in the question' if node.matched else ''})")
        for walk in node.walks:
            # the prior, the joint term and the time filter move a walk's score off its cosine: say by how much, so that
            # 2.4 beside 0.7 reads as what it is
            moved = walk.score - walk.cosine
            rerank = f" = cosine {walk.cosine:.3f} {'+' if moved >= 0 else '-'} rerank {abs(moved):.3f}" if abs(moved) >= 5e-4 else ""
            print(f"   {walk.score:.3f}{rerank}  [{walk.kind}] {walk.text}")
            print("          " + "  ".join(f"({h} | {r} | {t})" for h, r, t in walk.triples))
            if walk.also_labels:  # the other ends of its relation path (query.also_chars)
                print("          also: " + ", ".join(walk.also_labels))
    if result.no_good_match:
        print(result.match_note)
    print("ms: " + ", ".join(f"{k} {v:.1f}" for k, v in result.timings_ms.items()))


def _print_scores(heading: str, cfg: Config, rerank: str, column: str, rows: list) -> None:
    """One row per question set: `rows` are (the set's name, its RetrievalScores)."""
    q = cfg.query
    asked = "plain questions (brackets dropped)" if any(s.plain for _, s in rows) else "bracketed questions"
    width = max([len(column), *(len(name) for name, _ in rows)])
    print(f"{heading}, {asked}, k_nodes={q.k_nodes}, k_walks={q.k_walks}, node_search={q.node_search}, rerank={rerank}")
    print(f"{column:>{width}}  questions  topic recall  context recall@k  answer-set recall  multi-answer  extractive Hits@1  retrieval ms p50/p99")
    for name, s in rows:
        lat = s.latency_ms.get("retrieval", {})
        print(f"{name:>{width}}  {s.questions:>9,}  {s.topic_recall:>12.4f}  {s.context_recall:>16.4f}  {s.answer_recall:>17.4f}"
              f"  {s.multi_answer_recall:>12.4f}  {s.extractive_hits1:>17.4f}  {lat.get('p50', 0):>8.1f} / {lat.get('p99', 0):.1f}")
    if any(s.answers for _, s in rows):
        print(f"{column:>{width}}  answers  Hits@1  accurate  hallucinated  missing  llm ms p50")
        for name, s in rows:
            print(f"{name:>{width}}  {s.answers:>7,}  {s.hits1:>6.4f}  {s.accurate:>8.4f}  {s.hallucinated:>12.4f}  {s.missing:>7.4f}"
                  f"  {s.latency_ms.get('llm', {}).get('p50', 0):>10.1f}")


def _synth(args: argparse.Namespace) -> int:
    from kgwalk.kg.synth import parse_size, write_synth

    stats = write_synth(args.out, parse_size(args.edges), args.seed)
    print(f"{args.out}: {stats.summary()}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from kgwalk.serve import run_server

    cfg = config_from_args(args)
    # the MCP server at /mcp, where the mcp extra is installed
    addons = (_mcp_module().serve_addon(cfg),) if importlib.util.find_spec("mcp") else ()
    run_server(cfg, args.host, args.port, addons)
    return 0


def _mcp_module() -> ModuleType:
    """kgwalk.integrations.mcp, where the mcp extra is installed."""
    try:
        from kgwalk.integrations import mcp
    except ModuleNotFoundError as e:
        raise KgwalkError(f"the MCP server needs the mcp extra: pip install 'kgwalk[mcp]' (no module {e.name!r})") from None
    return mcp


def _mcp(args: argparse.Namespace) -> int:
    _mcp_module().run_stdio(config_from_args(args))
    return 0


def _check_k(cfg: Config, args: argparse.Namespace) -> None:
    """The retriever's own check, before any model loads, naming the flags."""
    from kgwalk.query.steps import check_request

    check_request(args.question, args.k_nodes, args.k_walks, None, cfg.query, cfg.serve.max_k, names=("--k-nodes", "--k-walks"))


def _query(args: argparse.Namespace) -> int:
    from kgwalk.query import Retriever

    cfg = config_from_args(args)
    _check_k(cfg, args)
    check_kg_exists(cfg)
    with closing(Retriever(cfg, records="tables")) as retriever:  # one question: its walks' rows, not every walk's
        retrieval = retriever.retrieve(args.question, args.k_nodes, args.k_walks)
    if args.json:
        print(json.dumps(retrieval.to_json(), ensure_ascii=False))
    else:
        _print_retrieval(retrieval)
    return 0


def _answer(args: argparse.Namespace) -> int:
    from kgwalk.query import Answerer

    cfg = config_from_args(args)
    _check_k(cfg, args)
    check_kg_exists(cfg)
    with closing(Answerer(cfg)) as answerer:
        result = answerer.answer(args.question, args.k_nodes, args.k_walks)
    print(json.dumps(result.to_json(), ensure_ascii=False) if args.json else result.answer)
    if not args.json:
        _print_retrieval(result.retrieval)
    return 0


def _fit_paths(args: argparse.Namespace) -> int:
    from kgwalk.query.paths import PRIOR_TABLE, fit_path_prior, read_examples
    from kgwalk.query.retriever import Retriever
    from kgwalk.storage import write_table

    if not args.questions and args.generated is None:
        raise KgwalkError("fit-paths: name example questions with --questions FILE, or --generated N to generate them from the KG")
    cfg = config_from_args(args)
    check_kg_exists(cfg)
    with closing(Retriever(cfg)) as retriever:
        examples, skipped = [], 0
        for path in args.questions:
            read, bad = read_examples(path, retriever.lexicon)
            examples += read
            skipped += bad
        if args.generated is not None:
            from kgwalk.query.kg_questions import generate_questions

            generated = [q.example() for q in generate_questions(cfg, args.generated, args.seed)]
            print(f"{len(generated):,} questions generated from the KG's relation paths")
            examples += generated
        table = fit_path_prior(cfg, examples, retriever.prior_embedder, retriever.lexicon, retriever.prior_model)
        write_table(cfg.table(PRIOR_TABLE), table)
    print(f"{cfg.table(PRIOR_TABLE)}: {table.num_rows:,} examples with a walk to an answer "
          f"({len(examples) - table.num_rows:,} without; {skipped:,} lines without a known topic or answer)")
    return 0


def _metaqa_sets(args: argparse.Namespace) -> dict[str, tuple[int | None, list]]:
    """MetaQA's hop files: hop count -> (hops, questions)."""
    from kgwalk.eval.metaqa import METAQA_DIR, load_questions, question_file, sample

    if args.file:
        raise KgwalkError("eval metaqa: --file is for `kgwalk eval questions`; MetaQA's files come from --data, --split and --hops")
    try:
        hops = [int(h) for h in (args.hops or "1,2,3").split(",")]
    except ValueError:
        raise KgwalkError(f"eval: --hops takes comma-separated numbers, got {args.hops!r}") from None
    files = {h: question_file(args.data or METAQA_DIR, h, args.split or "dev") for h in hops}
    return {str(h): (h, sample(load_questions(files[h]), args.limit)) for h in hops}


def _question_files(args: argparse.Namespace, cfg: Config) -> tuple[dict[str, tuple[int | None, list]], dict[str, dict[str, object]]]:
    """The --file question files: name -> (None, questions), and name -> its JSON fields: what of it the KG lacks.
    Every file is read and checked before anything loads."""
    from pathlib import Path

    from kgwalk.eval.questions import load_kg_questions, read_question_lines, sample
    from kgwalk.storage import read_table

    if not args.file:
        raise KgwalkError("eval questions: name a question file with --file (repeatable)")
    unused = [flag for flag, value in (("--split", args.split), ("--hops", args.hops), ("--data", args.data)) if value]
    if unused:
        raise KgwalkError(f"eval questions: {', '.join(unused)} are for `kgwalk eval metaqa`")
    names = [Path(f).name for f in args.file]
    names = [n if names.count(n) == 1 else f for n, f in zip(names, args.file)]  # two dev.txt: their paths
    lines = {name: read_question_lines(path) for name, path in zip(names, args.file)}
    entities = read_table(cfg.table("entities"), ["id", "label"], what="ingest")
    loaded = {name: load_kg_questions(read, entities) for name, read in lines.items()}
    sets: dict[str, tuple[int | None, list]] = {name: (None, sample(questions, args.limit)) for name, (questions, _) in loaded.items()}
    coverage = {name: known for name, (_, known) in loaded.items()}
    lacking = [f"{name}: {c.note()}" for name, c in coverage.items() if not c.complete]
    if lacking:  # scored as misses, and said once
        print("kgwalk: warning: labels the KG does not have (their questions count as misses): " + "; ".join(lacking), file=sys.stderr)
    return sets, {name: {"file": name, "unknown_topics": c.unknown_topics, "unknown_answers": c.unknown_answers, "unanswerable": c.unanswerable}
                  for name, c in coverage.items()}


def _eval(args: argparse.Namespace) -> int:
    from kgwalk.eval import questions as scorer
    from kgwalk.query import Answerer, Retriever
    from kgwalk.query.retriever import long_lived_frozen

    cfg = config_from_args(args)
    check_kg_exists(cfg)
    misses_file = _misses_file(args.misses)
    if args.dataset == "metaqa":
        from kgwalk.eval.metaqa import missing_topics_warning
        from kgwalk.storage import read_table

        sets = _metaqa_sets(args)
        entity_ids = read_table(cfg.table("entities"), ["id"], what="ingest").column("id")
        warning = missing_topics_warning({int(hops): questions for hops, (_, questions) in sets.items()}, entity_ids, cfg.name)
        if warning:
            log(warning)
        extra: dict[str, dict[str, object]] = dict.fromkeys(sets, {})
        heading, column = f"MetaQA {args.split or 'dev'}", "hops"
    else:
        sets, extra = _question_files(args, cfg)
        heading, column = "question files", "file"
    retriever = Retriever(cfg)
    answerer = Answerer(cfg, retriever=retriever) if args.answer else None
    with closing(retriever):  # all an Answerer holds open is its retriever
        retriever.warm_up()  # the timed questions start as a server's do
        misses: dict[str, list[dict[str, object]]] | None = {name: [] for name in sets} if misses_file else None
        with long_lived_frozen():
            scores = {name: scorer.score_retrieval(retriever, questions, hops, answerer=answerer, plain=args.plain,
                                                   misses=misses[name] if misses is not None else None)
                      for name, (hops, questions) in sets.items()}
    if misses_file and misses is not None:
        _write_misses(misses_file, misses)
    if args.json:
        print(json.dumps([asdict(s) | extra[name] | {"rerank": retriever.rerank} for name, s in scores.items()]))
    else:
        _print_scores(heading, cfg, retriever.rerank, column, list(scores.items()))
        if misses_file and misses is not None:
            _print_misses(misses_file, misses, sum(s.questions for s in scores.values()))
    return 0


def _misses_file(path: str | None) -> Path | None:
    """--misses' file, checked before anything loads: its folder must exist and it must not be one."""
    if not path:
        return None
    target = Path(path)
    if target.is_dir() or not target.parent.is_dir():
        raise KgwalkError(f"eval: --misses {path}: " + ("is a folder" if target.is_dir() else f"no folder {target.parent}"))
    return target


def _write_misses(path: Path, misses: dict[str, list[dict[str, object]]]) -> None:
    """One JSON object a line, each with its question set ("set": the file, or MetaQA's hop count); written whole or not at all."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text("".join(json.dumps({"set": name} | record) + "\n" for name, records in misses.items() for record in records),
                       encoding="utf-8")
    partial.replace(path)


def _print_misses(path: Path, misses: dict[str, list[dict[str, object]]], questions: int) -> None:
    from kgwalk.eval.questions import common_misses

    records = [r for rs in misses.values() for r in rs]
    print(f"\n{len(records):,} of {questions:,} questions missed (best walk's end no gold answer), written to {path}")
    if records:
        print("most common: count, best walk's relation path -> the best-ranked path to an answer ('-': none shown), an example")
        for count, best, reaching, example in common_misses(records):
            print(f"{count:>6,}  {best} -> {reaching}  e.g. {example!r}")


def _status(args: argparse.Namespace) -> int:
    from kgwalk.refresh.status import status_text

    cfg = config_from_args(args)
    check_kg_exists(cfg)
    print(status_text(cfg))
    return 0


def _vacuum(args: argparse.Namespace) -> int:
    from kgwalk.refresh.vacuum import vacuum

    report = vacuum(config_from_args(args), keep_hours=args.keep_hours, dry_run=args.dry_run)
    if report.dry_run:  # one file a line, then the summary (the last line, JSON, as without --dry-run)
        print("\n".join(str(path) for paths in report.paths.values() for path in paths) or "nothing to delete")
    print(json.dumps({"vacuum": report.summary(), "dry_run": report.dry_run, "files": report.files, "bytes": report.bytes}))
    return 0


def _refresh(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    path, snapshot = args.changes or args.snapshot, bool(args.snapshot)
    check_refresh_input(cfg, path, snapshot)  # before "refresh: started"
    spark = None
    if args.spark:
        from kgwalk.spark import get_spark

        spark = get_spark(cfg.spark)
    report = timed("refresh", lambda: Runner(cfg, spark).refresh(path, args.format or "auto", snapshot), lambda r: r.summary())
    print(json.dumps({"refresh": report.summary(), "kg": report.kg.summary() if report.kg else "already applied",
                      "seconds": {k: round(v, 2) for k, v in report.seconds.items()}}))
    return 0


def _build(args: argparse.Namespace) -> int:
    Runner(config_from_args(args)).build(keep_done=not args.rebuild)
    return 0


def _stage(args: argparse.Namespace) -> int:
    Runner(config_from_args(args)).run(stage_named(args.command))
    return 0


_HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "synth": _synth, "serve": _serve, "mcp": _mcp, "query": _query, "answer": _answer, "fit-paths": _fit_paths, "eval": _eval,
    "status": _status, "vacuum": _vacuum, "refresh": _refresh, "build": _build,
    **dict.fromkeys((s.command for s in STAGES), _stage),
}


# the commands that may start Spark or Ray: all writers, each under its KG's writer lock
_ENGINE_COMMANDS = frozenset({"build", "refresh", *(s.command for s in STAGES)})


def run(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logs = None
    if args.command in _ENGINE_COMMANDS and not args.verbose:
        logs = log_path(config_from_args(args).root, args.command)
    with engine_logs(logs):
        return _HANDLERS[args.command](args)


_DISK_ERRNOS = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded", errno.EROFS: "read-only file system", errno.EACCES: "permission denied"}


def _disk_error(e: BaseException) -> str | None:
    """What a storage failure mid-stage was, in words, or None for anything else. delta-rs and
    Arrow report the OS error inside their own exception's text, so match that too."""
    if isinstance(e, OSError) and e.errno in _DISK_ERRNOS:
        return f"{_DISK_ERRNOS[e.errno]}" + (f" writing {e.filename}" if e.filename else "")
    text = str(e)
    return next((words for words in _DISK_ERRNOS.values() if words in text.lower()), None)


def main(argv: list[str] | None = None) -> None:
    try:
        code = run(argv)
    except BusyError as e:
        print(f"kgwalk: busy: {e}", file=sys.stderr)
        code = 75  # EX_TEMPFAIL: schedulers may retry
    except QualityGateFailed as e:
        print(f"kgwalk: {e}", file=sys.stderr)
        code = 3  # the data, not the command, is wrong: previous versions stay current
    except PortInUse as e:
        print(f"kgwalk: error: {e}", file=sys.stderr)
        code = 98  # EADDRINUSE's errno: a supervisor can tell "port taken" from bad input (2)
    except KgwalkError as e:
        print(f"kgwalk: error: {e}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print("kgwalk: interrupted", file=sys.stderr)
        code = 130
    except Exception as e:
        if not _disk_error(e):
            raise  # a bug: keep its traceback
        print(f"kgwalk: error: {_disk_error(e)}; the table being written keeps its previous version: make room or fix the path, then rerun", file=sys.stderr)
        code = 74  # EX_IOERR
    sys.exit(code)


if __name__ == "__main__":
    main()
