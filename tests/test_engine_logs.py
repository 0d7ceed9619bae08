"""`kgwalk build` prints kgwalk's own lines and progress bars; Spark's and Ray's output (JVM
warnings, Ray Data's INFO lines, the core worker's error-level notices) goes to a log file in the
KG's folder, named in one line, and `--verbose` shows it on the terminal instead. Real
subprocesses: a tiny build, then one stage again with --verbose."""

import os
import re
import subprocess
import sys

from conftest import TINY_KG

BARS = ("walks", "verbalize", "embed", "index walks", "index nodes")  # kgwalk's progress bars (tqdm)


def kgwalk(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAY_AUTH_MODE": "disabled"}
    return subprocess.run([sys.executable, "-m", "kgwalk.cli", *args], capture_output=True, text=True, timeout=600, env=env, check=False)


def test_build_output_is_kgwalks_own_and_the_engines_go_to_a_log_file(tmp_path):
    base = ["--name", "quiet", "--warehouse", str(tmp_path), "--set", "embed.model=hashing-64", "--set", "ray.num_cpus=2"]
    built = kgwalk("build", *base, "--kg", str(TINY_KG))
    assert built.returncode == 0, built.stderr
    assert built.stdout == ""
    pieces = [p for p in re.split(r"[\r\n]", built.stderr) if p.strip()]
    foreign = [p for p in pieces if not p.startswith("[kgwalk] ") and not p.startswith(BARS)]
    assert foreign == [], foreign  # no JVM, Spark or Ray line
    assert any(p.startswith("index walks") for p in pieces) and any(p.startswith("verbalize") for p in pieces)
    assert any(re.match(r"walks: 100%.* (\d+)/\1 ", p) for p in pieces)  # the walks job's Spark tasks, all done
    (log,) = (tmp_path / "quiet" / "_logs").iterdir()
    assert log.name.startswith("build-") and log.suffix == ".log"
    assert [p for p in pieces if str(log) in p] == [f"[kgwalk] Spark's and Ray's logs: {log} (--verbose shows them here)"]
    text = log.read_text()
    assert "log4j" in text or "WARN" in text, text[:2000]  # Spark's JVM
    assert re.search(r"INFO .*Dataset", text), text[:2000]  # Ray Data
    assert "[kgwalk]" not in text  # kgwalk's lines stay on the terminal

    verbose = kgwalk("verbalize", *base, "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    assert re.search(r"INFO .*Dataset", verbose.stderr) and "Spark's and Ray's logs" not in verbose.stderr
    assert list((tmp_path / "quiet" / "_logs").iterdir()) == [log]  # no new log file
