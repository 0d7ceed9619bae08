"""`kgwalk build` killed with SIGKILL at random moments (inside Spark, inside Ray, between a
Delta commit and the index upsert: wherever the clock lands), then run again: the rerun
completes (keeping the stages the killed build finished), and walks, texts, vectors and every index point equal an uninterrupted build's.

Each kill costs about two builds (a minute here), so this is in `make test-slow`: 35 kills by
default, KGWALK_KILLS=N to change. `make test` kills refresh at its 15 named crash points
(tests/test_refresh_safety.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import TINY_KG
from corpus import MODEL, config, corpus

TESTS = Path(__file__).resolve().parent


def build_cli(warehouse: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    args = [sys.executable, "-m", "kgwalk.cli", "build", "--kg", str(TINY_KG), "--warehouse", str(warehouse), "--name", "t",
            "--set", f"embed.model={MODEL}", "--set", "quality.max_rejected_ratio=0.5", "--set", "spark.master=local[2]",
            "--set", "ray.num_cpus=2"]
    # a session of its own, so SIGKILL reaches the whole tree: Spark's JVM and Ray's workers too
    return subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)


def finished(proc: subprocess.Popen) -> None:
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]


def kill_tree(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=60)


def kills(default: int) -> int:
    return int(os.environ.get("KGWALK_KILLS", default))


def killed_and_rerun(tmp_path: Path, count: int, seed: int) -> None:
    reference = tmp_path / "reference"
    start = time.perf_counter()
    finished(build_cli(reference))
    seconds = time.perf_counter() - start
    expected = corpus(config(reference))
    rng = np.random.default_rng(seed)
    for i in range(count):
        # a fresh warehouse each time: a rerun keeps the stages the killed build finished, so a
        # second kill in the same one would only ever land in the index stage
        warehouse = tmp_path / f"killed-{i}"
        proc = build_cli(warehouse)
        moment = float(rng.uniform(0.05, 1.0)) * seconds
        time.sleep(moment)
        died = proc.poll() is None
        kill_tree(proc)
        finished(build_cli(warehouse))
        assert corpus(config(warehouse)) == expected, f"kill {i} at {moment:.1f} s of {seconds:.1f} s (still running: {died})"
        shutil.rmtree(warehouse)


@pytest.mark.slow
def test_build_killed_at_random_moments_is_completed_by_rerunning_it(tmp_path):
    killed_and_rerun(tmp_path, kills(35), seed=1)
