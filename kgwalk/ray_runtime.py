"""Thin Ray adapter: start or join Ray, and size actor pools so read tasks never starve."""

from __future__ import annotations

import os

from kgwalk.config import RayConf


def init_ray(conf: RayConf):
    import ray

    if ray.is_initialized():
        return ray
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    kwargs = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
    if conf.address:
        ray.init(address=conf.address, **kwargs)
    else:
        ray.init(num_cpus=conf.num_cpus, **kwargs)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = True
    ctx.print_on_execution_start = False
    return ray


def cluster_cpus() -> int:
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def pool_size(configured: int) -> int:
    """Actors for a CPU-bound pool: as configured, else one less than the CPUs (at least one):
    an actor pool holding every CPU starves Ray Data's read tasks (seen: a deadlock on 2 cores)."""
    return configured or max(1, cluster_cpus() - 1)


def write_dataset(ds, path: str, schema) -> int:
    """Stream a Ray Dataset's output into a Delta table (one commit); returns rows written."""
    from kgwalk.storage import write_table

    written = 0

    def batches():
        nonlocal written
        for batch in ds.iter_batches(batch_format="pyarrow", batch_size=None):
            written += batch.num_rows
            yield from batch.cast(schema).to_batches()

    write_table(path, batches(), schema=schema)
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
