"""What every benchmark result carries: the machine, the versions, and one place to save it; and the kgwalk it
measures, the checkout it sits in (every script imports this module before kgwalk)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

# Run from a git worktree without PYTHONPATH, a script (and the kgwalk commands it starts) would import the editable
# install's checkout, whatever that holds at the time, and report the worktree's commit beside it. An explicit
# PYTHONPATH (a snapshot's: bench/common.py's source_env, bench/query_ab.py's trees) still decides.
CHECKOUT = Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):
    os.environ["PYTHONPATH"] = str(CHECKOUT)
    sys.path.insert(0, str(CHECKOUT))


def git_head(folder: str | Path) -> str:
    """The short commit checked out in `folder` (a checkout of kgwalk a benchmark runs), "unknown" outside git."""
    done = subprocess.run(["git", "-C", str(folder), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


PACKAGES = ["kgwalk", "pyspark", "deltalake", "ray", "pyarrow", "numpy", "qdrant-edge-py", "qdrant-client", "sentence-transformers", "transformers", "torch", "model2vec"]


def machine_lines() -> list[str]:
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            pass
    lines = []
    torch = sys.modules.get("torch")  # only when the benchmark used it: importing torch is slow
    if torch is not None and torch.cuda.is_available():
        lines.append(f"- device: {torch.cuda.get_device_name(0)}")
    return lines + [
        f"- machine: {os.cpu_count()} CPUs ({cpu}), {mem_gib:.0f} GiB RAM, {platform.system()} {platform.release()}",
        f"- python {platform.python_version()}; " + ", ".join(versions),
    ]


def save_report(name: str, title: str, facts: list[str], body: list[str]) -> str:
    """Print a Markdown report (title, facts, machine and versions, body) and write it to
    bench/results/<name>.md."""
    run = [f"- commit {git_head(Path(__file__).resolve().parent)}; command: `{' '.join(['python', *sys.argv])}`"]
    report = "\n".join([f"# {title}", "", *facts, *run, *machine_lines(), "", *body]) + "\n"
    print(report)
    results = Path(__file__).resolve().parent / "results"
    results.mkdir(exist_ok=True)
    (results / f"{name}.md").write_text(report)
    return report
