"""Machine and version lines that every benchmark result carries."""

from __future__ import annotations

import os
import platform
from importlib.metadata import PackageNotFoundError, version

PACKAGES = ["kgwalk", "pyspark", "deltalake", "ray", "pyarrow", "numpy", "qdrant-edge-py", "qdrant-client", "sentence-transformers", "torch"]


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
    return [
        f"- machine: {os.cpu_count()} CPUs ({cpu}), {mem_gib:.0f} GiB RAM, {platform.system()} {platform.release()}",
        f"- python {platform.python_version()}; " + ", ".join(versions),
    ]
