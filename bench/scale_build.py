"""A default `kgwalk build` of a big synthetic KG on this machine (issue 45: 10M edges), watched
from outside: peak memory, peak disk, each stage's time, what the progress lines showed, and a
kill in the middle that a rerun must finish.

    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/scale_build.py --edges 10M \\
        --warehouse /tmp/scale10m --kill-in index --kill-after 300 --report scale_build_10m

1. `kgwalk synth --edges N` once (not timed as part of the build).
2. `kgwalk build` with the defaults, its stderr (kgwalk's lines and progress bars) kept in
   `<warehouse>/build-<try>.log`. Every 2 s the script samples
   - the resident memory of the build's whole process tree (the driver, Spark's JVM, Ray's
     raylet, GCS and workers): a sum of RSS, so pages that two processes share (Ray's object
     store) count twice, an upper bound;
   - the machine's used memory (total - available) above what was used before the build: what
     the build took from the machine, the page cache left out;
   - the disk used on the warehouse's file system above the start (Spark's and Ray's spill
     folders included).
3. With `--kill-in STAGE --kill-after S`: S seconds after the build logs `STAGE: started`, its
   whole process group is killed (SIGKILL, as an OOM killer or a lost node would), and the same
   command is run again. The rerun must finish the build; its lines say which stages it skipped.
   The build's time is then the first try's stages before the kill plus the rerun's; the time
   the kill cost (work done and thrown away) is reported beside it.
Results: bench/results/<report>.md; the samples and lines in <warehouse>/scale-results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import shutil
import subprocess
import threading
import time
from pathlib import Path

import psutil
from common import KGWALK
from report import save_report

SAMPLE_SECONDS = 2.0
STAGE_LINE = re.compile(r"\[kgwalk\] (\w[\w ]*?): (.*?) in ([\d.]+) s$")


def tree_rss(proc: psutil.Process) -> int:
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.Error:  # a worker that ended between the listing and the read
            pass
    return total


def used_memory() -> int:
    vm = psutil.virtual_memory()
    return vm.total - vm.available


class Watch:
    """Samples a running build's memory and disk until stopped; keeps the peaks and a timeline."""

    def __init__(self, proc: subprocess.Popen, disk_of: Path, memory_base: int, disk_base: int):
        self.proc = psutil.Process(proc.pid)
        self.disk_of, self.memory_base, self.disk_base = disk_of, memory_base, disk_base
        self.peak_rss = self.peak_used = self.peak_disk = 0
        self.timeline: list[tuple[float, int, int, int]] = []  # (seconds, tree RSS, used above base, disk above base)
        self.stop = threading.Event()
        self.start = time.perf_counter()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.wait(SAMPLE_SECONDS):
            rss, used = tree_rss(self.proc), used_memory() - self.memory_base
            disk = shutil.disk_usage(self.disk_of).used - self.disk_base
            self.peak_rss, self.peak_used, self.peak_disk = max(self.peak_rss, rss), max(self.peak_used, used), max(self.peak_disk, disk)
            self.timeline.append((round(time.perf_counter() - self.start, 1), rss, used, disk))

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


def run_build(cmd: list[str], log: Path, warehouse: Path, kill_in: str | None, kill_after: float) -> dict:
    """One try of the build: its exit, stage lines (with the second each was logged), the progress
    bars' last state per stage, the peaks, and whether it was killed."""
    memory_base, disk_base = used_memory(), shutil.disk_usage(warehouse).used
    start = time.perf_counter()
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=out, start_new_session=True)
    watch = Watch(proc, warehouse, memory_base, disk_base)
    killed_at = None
    stage_started: float | None = None
    while proc.poll() is None:
        time.sleep(1)
        if kill_in and stage_started is None and f"[kgwalk] {kill_in}: started" in log.read_text(errors="replace"):
            stage_started = time.perf_counter()
        if stage_started is not None and killed_at is None and time.perf_counter() - stage_started >= kill_after:
            os.killpg(proc.pid, signal.SIGKILL)
            killed_at = round(time.perf_counter() - start, 1)
    watch.close()
    # Ray's processes run in their own sessions: a kill of the driver's group leaves them; they end
    # with their driver, and the next try's memory base is taken once they have
    if killed_at is not None:
        time.sleep(10)
    text = log.read_text(errors="replace")
    lines = [x for x in re.split(r"[\r\n]", text) if x.startswith("[kgwalk]")]
    stages = [{"stage": m.group(1), "did": m.group(2), "seconds": float(m.group(3))} for x in lines if (m := STAGE_LINE.match(x))]
    bars: dict[str, str] = {}  # a progress bar's last text per description: the ETA a user saw
    for x in re.split(r"[\r\n]", text):
        if m := re.match(r"^(index walks|index nodes|[\w ]+?):\s+\d+%\|", x):
            bars[m.group(1)] = x.strip()
    return {"returncode": proc.returncode, "seconds": round(time.perf_counter() - start, 1), "killed_at": killed_at,
            "lines": lines, "stages": stages, "bars": bars, "peak_tree_rss": watch.peak_rss, "peak_used": watch.peak_used,
            "peak_disk": watch.peak_disk, "timeline": watch.timeline}


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file())


def measured(kg: Path, stages: dict[str, float], walks: int) -> dict:
    """The build in bench/scale_estimate.py's --measured format: stage seconds and bytes per part
    (each table, and the live index generation)."""
    parts = {f"table {t.name}": folder_bytes(t) for t in sorted(kg.iterdir()) if t.is_dir() and t.name not in ("qdrant", "_logs", "_quality")}
    generation = json.loads((kg / "qdrant" / "CURRENT").read_text())["generation"]
    parts["index"] = folder_bytes(kg / "qdrant" / generation)
    return {"times": {**stages, "walks_count": walks}, "parts": parts}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--edges", default="10M")
    p.add_argument("--warehouse", type=Path, required=True)
    p.add_argument("--kill-in", help="the stage whose start line starts the kill's clock (its name in the build's lines)")
    p.add_argument("--kill-after", type=float, default=300.0, help="seconds into --kill-in's stage to kill the build")
    p.add_argument("--report", default="scale_build")
    p.add_argument("--report-only", action="store_true", help="write the report of the tries an earlier run left in the warehouse")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    args = p.parse_args()
    wh: Path = args.warehouse
    name = "synth"
    if not args.report_only:
        wh.mkdir(parents=True, exist_ok=True)
        kg_file = wh / f"synth-{args.edges}.parquet"
        if not kg_file.exists():
            t = time.perf_counter()
            subprocess.run([KGWALK, "synth", "--edges", args.edges, "--out", str(kg_file)], check=True)
            print(f"synth: {time.perf_counter() - t:.0f} s", flush=True)
        shutil.rmtree(wh / name, ignore_errors=True)
        cmd = [KGWALK, "build", "--kg", str(kg_file), "--name", name, "--warehouse", str(wh),
               *[a for s in args.overrides for a in ("--set", s)]]
        tries = [run_build(cmd, wh / "build-1.log", wh, args.kill_in, args.kill_after)]
        if tries[0]["killed_at"] is not None:
            tries.append(run_build(cmd, wh / "build-2.log", wh, None, 0))
        (wh / "scale-results.json").write_text(json.dumps({"edges": args.edges, "tries": tries}))
    tries = json.loads((wh / "scale-results.json").read_text())["tries"]
    final = tries[-1]
    done = next((x for x in final["lines"] if x.startswith("[kgwalk] build:")), None)
    failed = final["returncode"] != 0 or done is None  # reported as it went: the stages done, the peaks, the memory over time
    walked = next((s["did"] for t in tries for s in t["stages"] if s["stage"] == "walks"), "")
    walks = int(re.search(r"build: ([\d,]+) walks", done).group(1).replace(",", "")) if done else int(re.match(r"([\d,]+) walks", walked).group(1).replace(",", ""))
    # each stage's time from the try that made it (a stage the rerun kept has its first try's)
    kept = set(re.findall(r"\[kgwalk\] (\w+): kept", "\n".join(final["lines"])))
    stages = {s["stage"]: s["seconds"] for t in tries for s in t["stages"] if s["stage"] != "build" and not (t is final and s["stage"] in kept)}
    if not failed:
        (wh / "scale-measured.json").write_text(json.dumps({"default": measured(wh / name, stages, walks)}))

    body = ["## The build", "", "| try | exit | seconds | killed at, s | peak RSS of its processes, GiB | peak memory taken from the machine, GiB | peak disk above the start, GB |",
            "|---:|---:|---:|---:|---:|---:|---:|"]
    for i, t in enumerate(tries, 1):
        body.append(f"| {i} | {t['returncode']} | {t['seconds']:.0f} | {t['killed_at'] or ''} | {t['peak_tree_rss'] / 2**30:.1f} | {t['peak_used'] / 2**30:.1f} | {t['peak_disk'] / 1e9:.1f} |")
    body += ["", "Stages, as each try's lines report them (a try killed in a stage has no line for it; a stage a rerun kept, 0 s):", "",
             "| try | stage | seconds | what it did |", "|---:|---|---:|---|"]
    for i, t in enumerate(tries, 1):
        body += [f"| {i} | {s['stage']} | {s['seconds']:.1f} | {s['did']} |" for s in t["stages"]]
    total = sum(stages.values())
    lost = tries[0]["seconds"] - sum(s["seconds"] for s in tries[0]["stages"]) if len(tries) > 1 else 0.0
    if failed:
        body += ["", f"- **the build did not finish**: try {len(tries)} ended with exit {final['returncode']} (-9: SIGKILL; see the kernel log for the OOM killer)"
                 f" after {final['seconds']:,.0f} s; {walks:,} walks; the stages it finished: " + (", ".join(f"{k} {v:,.0f} s" for k, v in stages.items()) or "none")]
    else:
        disk = folder_bytes(wh / name)
        body += ["", f"- walks: {walks:,}; warehouse: {disk / 1e9:.1f} GB, {disk / walks:.0f} B a walk",
                 f"- the build's time, each stage once: {total:,.0f} s ({total / 3600:.2f} h): "
                 + ", ".join(f"{k} {v:,.0f} s" for k, v in stages.items())]
    if len(tries) > 1:
        body.append(f"- the kill threw away {lost:,.0f} s of work (the killed stage's part done), and the rerun kept the stages done before it")
    body += ["", "## Memory and disk over time", "", "| try | second | RSS of its processes, GiB | taken from the machine, GiB | disk above the start, GB |", "|---:|---:|---:|---:|---:|"]
    for i, t in enumerate(tries, 1):
        timeline = t["timeline"]
        body += [f"| {i} | {sec:,.0f} | {rss / 2**30:.1f} | {used / 2**30:.1f} | {disk_ / 1e9:.1f} |" for sec, rss, used, disk_ in timeline[:: max(1, len(timeline) // 20)]]
    body += ["", "## What the terminal showed", "", "Each try's kgwalk lines, and each progress bar's last state:", ""]
    for i, t in enumerate(tries, 1):
        body += [f"Try {i}:", "", "```", *t["lines"], *t["bars"].values(), "```", ""]
    save_report(args.report, f"A {args.edges}-edge synthetic KG built on this machine, at the defaults" + (": the build did not finish" if failed else ""),
                [f"- `kgwalk synth --edges {args.edges}`, then `kgwalk build` with the defaults" + (f" and {args.overrides}" if args.overrides else "")
                 + (f"; killed {args.kill_after:.0f} s into `{args.kill_in}` and run again" if args.kill_in else "")], body)


if __name__ == "__main__":
    main()
