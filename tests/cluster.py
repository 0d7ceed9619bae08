"""Real clusters on 127.0.0.1 for tests: a standalone Spark cluster (one master, one worker)
started with the pyspark installation's own `spark-class`, and a Ray cluster (`ray start --head`
plus one worker node). Every process runs in a session of its own and is killed with its whole
process group on exit, so nothing outlives the test.

Executors and Ray workers run a Python that cannot see the editable kgwalk install of this
checkout (`hidden_kgwalk_env`): a job only passes if it ships the package the way a real cluster
needs it (--py-files, Ray's runtime_env), and fails here the way it would fail there.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pyspark

VENV_BIN = Path(sys.executable).parent

# The checkout's kgwalk is invisible to cluster-side processes, as on a real cluster where the
# checkout exists only on the submitting machine: the editable install's import hook goes, and
# `kgwalk` is looked up on sys.path minus the checkout (Ray adds a local driver's working folder
# to its workers' sys.path when no runtime env ships code; that too works only on one machine).
_HIDE_KGWALK = """import importlib.machinery, os, sys
CHECKOUT = {checkout!r}
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__module__", "") + repr(f)]


class ShippedKgwalkOnly:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "kgwalk":
            return None
        for entry in sys.path:
            if os.path.realpath(entry or os.getcwd()) == CHECKOUT:
                continue
            spec = importlib.machinery.PathFinder.find_spec(name, [entry])
            if spec is not None:
                return spec
        raise ModuleNotFoundError("No module named 'kgwalk' (the checkout is not visible here)", name=name)


sys.meta_path.insert(0, ShippedKgwalkOnly)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, timeout: float, procs: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"{what}: process {p.args[0]} exited with {p.returncode}")
        try:
            if check():
                return
        except (OSError, ValueError):  # not listening yet, or a web UI still starting answers its HTML page, not JSON
            pass
        time.sleep(0.5)
    raise TimeoutError(f"{what}: not ready after {timeout:.0f} s")


def hidden_kgwalk_env(folder: Path) -> dict[str, str]:
    """Environment for cluster-side processes: this venv's packages, minus the kgwalk checkout."""
    folder.mkdir(parents=True, exist_ok=True)
    checkout = os.path.realpath(Path(__file__).resolve().parent.parent)
    (folder / "sitecustomize.py").write_text(_HIDE_KGWALK.format(checkout=checkout))
    wrapper = folder / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{folder}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return {"PYTHONPATH": str(folder), "KGWALK_HIDDEN_PYTHON": str(wrapper), "PATH": f"{folder}:{VENV_BIN}:{os.environ['PATH']}"}


class Processes:
    """Started processes, each the leader of its own process group; `stop` kills every group."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.started: list[subprocess.Popen] = []

    def start(self, name: str, args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "wb")
        p = subprocess.Popen(args, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self.started.append(p)
        return p

    def stop(self) -> None:
        for p in reversed(self.started):
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    p.wait(timeout=15)
                    break
                except subprocess.TimeoutExpired:
                    continue


def processes_in(marker: str) -> list[str]:
    """Command lines of live processes that mention `marker` (a temp folder of the test)."""
    out = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if marker in cmd:
                out.append(f"{proc.name}: {cmd[:200]}")
    return out


@contextmanager
def spark_standalone(base: Path, procs: Processes, env: dict[str, str], cores: int = 2, memory: str = "2g") -> Iterator[tuple[str, str]]:
    """A master and one worker; yields the master URL and its web UI once the worker has registered."""
    home = Path(pyspark.__file__).parent
    port, ui = free_port(), free_port()
    work = base / "spark-work"
    work.mkdir(parents=True)
    spark_env = env | {"SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(base),
                       "SPARK_NO_DAEMONIZE": "1", "PYSPARK_PYTHON": env["KGWALK_HIDDEN_PYTHON"]}
    spark_class = str(home / "bin" / "spark-class")
    master = procs.start("spark-master", [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                          "--port", str(port), "--webui-port", str(ui)], spark_env, base)
    url = f"spark://127.0.0.1:{port}"
    worker = procs.start("spark-worker", [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                                          "--cores", str(cores), "--memory", memory, "--webui-port", str(free_port()),
                                          "--work-dir", str(work)], spark_env, base)

    def worker_alive() -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as r:
            return json.load(r).get("aliveworkers", 0) >= 1

    wait_for("spark cluster", worker_alive, 90, [master, worker])
    yield url, f"http://127.0.0.1:{ui}"


def spark_applications(master_ui: str) -> list[dict]:
    """Applications the master has run to the end, as its JSON endpoint lists them."""
    with urllib.request.urlopen(f"{master_ui}/json/", timeout=5) as r:
        return json.load(r)["completedapps"]


@contextmanager
def ray_cluster(base: Path, procs: Processes, env: dict[str, str]) -> Iterator[tuple[str, str]]:
    """A head (with the dashboard, which serves job submission) and one worker node, one CPU
    each; yields (GCS address, dashboard URL, Ray Client address)."""
    port, dashboard, client = free_port(), free_port(), free_port()
    ray = str(VENV_BIN / "ray")
    ray_env = env | {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0", "HF_HUB_OFFLINE": "1"}
    common = ["--block", "--num-cpus", "1", "--node-ip-address", "127.0.0.1"]
    head = procs.start("ray-head", [ray, "start", "--head", "--port", str(port), "--include-dashboard", "true",
                                    "--dashboard-host", "127.0.0.1", "--dashboard-port", str(dashboard),
                                    "--ray-client-server-port", str(client),
                                    "--temp-dir", str(base / "ray"), *common], ray_env, base)
    address = f"127.0.0.1:{port}"
    dashboard_url = f"http://127.0.0.1:{dashboard}"

    def nodes_alive(n: int) -> bool:
        with urllib.request.urlopen(f"{dashboard_url}/api/v0/nodes", timeout=2) as r:
            nodes = json.load(r)["data"]["result"]["result"]
        return sum(1 for node in nodes if node["state"] == "ALIVE") >= n

    wait_for("ray head", lambda: nodes_alive(1), 120, [head])
    worker = procs.start("ray-worker", [ray, "start", "--address", address, *common], ray_env, base)
    wait_for("ray worker", lambda: nodes_alive(2), 120, [head, worker])

    def job_agent_ready() -> bool:
        """The head's job agent registers some time after the node is alive (seconds under load);
        until then submissions fail with 'No available agent'. A trivial job shows it is there."""
        from ray.job_submission import JobSubmissionClient

        try:
            JobSubmissionClient(dashboard_url).submit_job(entrypoint="true")
        except RuntimeError as e:
            if "No available agent" in str(e):
                return False
            raise
        return True

    wait_for("ray job agent", job_agent_ready, 120, [head, worker])
    yield address, dashboard_url, f"ray://127.0.0.1:{client}"


@contextmanager
def loopback_clusters(base: Path) -> Iterator[dict[str, str]]:
    """Both clusters; yields the environment a client needs to use them."""
    procs = Processes(base)
    env = os.environ | hidden_kgwalk_env(base / "hide-kgwalk")
    with ExitStack() as stack:
        stack.callback(procs.stop)
        master, master_ui = stack.enter_context(spark_standalone(base, procs, env))
        address, dashboard, client = stack.enter_context(ray_cluster(base, procs, env))
        yield {"SPARK_MASTER": master, "SPARK_MASTER_UI": master_ui, "RAY_ADDRESS": address, "RAY_DASHBOARD": dashboard,
               "RAY_CLIENT_ADDRESS": client, "PYSPARK_PYTHON": env["KGWALK_HIDDEN_PYTHON"]}
