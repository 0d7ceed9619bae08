"""Thin Ray adapter: start or join Ray, and size actor pools so read tasks never starve."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from kgwalk.config import RayConf
from kgwalk.errors import KgwalkError
from kgwalk.log import quiet_engines, terminal

# Every Ray worker needs these, on a laptop or a cluster: the models ship inside PyPI packages.
WORKER_ENV = {"HF_HUB_OFFLINE": "1"}


def cluster_runtime_env(conf: RayConf) -> dict[str, Any]:
    """What workers of a Ray cluster need: the kgwalk package itself (uploaded by the driver, so
    the cluster runs this very code) and the conf's runtime_env on top (pip, more env_vars...)."""
    package = str(Path(__file__).parent)  # the kgwalk folder (not the module: Ray deep-copies the env)
    env: dict[str, Any] = {"py_modules": [package], "env_vars": dict(WORKER_ENV)}
    for key, value in conf.runtime_env.items():
        if key == "py_modules":
            env[key] = env[key] + list(value)
        elif key == "env_vars":
            env[key] |= {str(k): str(v) for k, v in value.items()}
        else:
            env[key] = value
    return env


def ray_address(conf: RayConf) -> str | None:
    """The cluster to join: ray.address, else RAY_ADDRESS; None = start a local Ray."""
    return conf.address or os.environ.get("RAY_ADDRESS")


def init_ray(conf: RayConf):
    """Join the cluster at ray.address or RAY_ADDRESS (HEAD:6379; `ray job submit` sets it for its
    drivers), else start a local Ray."""
    import ray

    address = ray_address(conf)
    if address and address.startswith("ray://"):  # Ray Data's executor needs a core worker; Ray Client has none
        raise KgwalkError(
            f"ray: {address!r} is a Ray Client address, and Ray Data cannot run through Ray Client: "
            "submit the stage as a Ray job (ray job submit --address http://HEAD:8265 --working-dir . -- python pipelines/...) "
            "or run it on a cluster node with RAY_ADDRESS=HEAD:6379"
        )
    if ray.is_initialized():
        return ray
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    for key, value in WORKER_ENV.items():
        os.environ.setdefault(key, value)
    quiet_engines()  # Ray's log lines go to the command's log file (the CLI without --verbose)
    if address:
        try:
            ray.init(address=address, runtime_env=cluster_runtime_env(conf))
        except ConnectionError as e:
            raise KgwalkError(f"ray: cannot reach the Ray cluster at {address!r} (ray.address / RAY_ADDRESS): {str(e).splitlines()[0]}") from None
    else:
        ray.init(num_cpus=conf.num_cpus, runtime_env=conf.runtime_env or None,
                 include_dashboard=False, log_to_driver=False, configure_logging=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = True
    ctx.print_on_execution_start = False
    return ray


def release_ray() -> None:
    """End this process's use of Ray, once nothing left to run needs it. A local Ray stops: its
    object store keeps the shared memory its biggest stage touched, and its idle workers their
    heaps (4.2 GB after the 10M-edge KG's verbalize), which a build's index stage, run in this
    process, needs more. From a cluster this process only disconnects."""
    ray = sys.modules.get("ray")  # not imported: nothing to release (importing Ray takes seconds)
    if ray is not None and ray.is_initialized():
        ray.shutdown()


def cluster_cpus() -> int:
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def pool_size(configured: int) -> int:
    """Actors for a CPU-bound pool: as configured, else one less than the CPUs (at least one):
    an actor pool holding every CPU starves Ray Data's read tasks (seen: a deadlock on 2 cores)."""
    return configured or max(1, cluster_cpus() - 1)


def actor_cpus(actors: int) -> float:
    """CPUs each actor of a CPU-bound pool reserves: one, or an equal share of CPUs - 1 when more
    actors are asked for, so a read task always finds a CPU (two one-thread actors on 2 cores
    share them with the reads instead of starving them)."""
    return min(1.0, max(1, cluster_cpus() - 1) / actors)


def write_dataset(
    ds, path: str, schema, each: Callable[[pa.Table], pa.Table] | None = None, before_commit: Callable[[], object] | None = None,
    progress: str | None = None, total: int | None = None,
) -> int:
    """Stream a Ray Dataset's output into a Delta table (one commit); returns rows written.
    `each` sees every output batch on the driver and returns what to write of it;
    `before_commit` (a quality gate) runs after the last batch and raises to stop the commit;
    `progress`: a progress bar's label, counting the rows written on the terminal, out of `total`
    (the rows expected: the bar then shows an ETA)."""
    from tqdm import tqdm

    from kgwalk.storage import write_table

    written, stopped = 0, []
    bar = tqdm(desc=progress, total=total, unit=" rows", disable=progress is None, file=terminal())

    def batches():
        nonlocal written
        for batch in ds.iter_batches(batch_format="pyarrow", batch_size=None):
            batch = each(batch) if each else batch
            written += batch.num_rows
            bar.update(batch.num_rows)
            yield from batch.cast(schema).to_batches()
        if before_commit is not None:
            try:
                before_commit()
            except BaseException as e:  # delta-rs wraps it in its own error; re-raised as is below
                stopped.append(e)
                raise

    try:
        with bar:
            write_table(path, batches(), schema=schema)
    except Exception:
        if stopped:
            raise stopped[0] from None
        raise
    return written


def read_delta(path: str, columns: list[str], rows_per_block: int, what: str = ""):
    """A Delta table's current files as a Ray Dataset in blocks of at most `rows_per_block` rows.

    Our tables are often one large row group; without the split Ray Data sees one block, so one
    actor does all the work and nothing streams downstream until it is done.
    """
    import ray

    from kgwalk.storage import current_files

    ds = ray.data.read_parquet(current_files(path, what), columns=columns)
    return ds.repartition(target_num_rows_per_block=rows_per_block)
