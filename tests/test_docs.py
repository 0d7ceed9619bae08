"""The documentation keeps up with the tree: bench/README.md indexes every script and result file
with commands whose flags the scripts have, README stays a short guide, every path the pages name
exists, and the docs site builds in MkDocs' strict mode (broken links fail)."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"


def _bench_index() -> str:
    return (BENCH / "README.md").read_text()


def test_the_bench_index_lists_every_script_and_result():
    index = _bench_index()
    scripts = sorted(p.name for p in BENCH.glob("*.py"))
    assert [s for s in scripts if f"`{s}`" not in index] == []
    results = sorted(p for p in (BENCH / "results").rglob("*") if p.is_file())
    unlisted = [p.relative_to(BENCH / "results") for p in results if p.name not in index and p.stem not in index.replace(".md", "")]
    assert unlisted == []
    named = set(re.findall(r"`([\w.-]+\.(?:md|csv|png))`", index)) | {f"{stem}.{ext}" for stem in re.findall(r"`([\w-]+)\.md`, `\.csv`", index)
                                                                      for ext in ("csv", "png")}
    on_disk = {p.name for p in results} | {"README.md"}
    assert sorted(named - on_disk) == []  # a listed file that is not there


def test_archived_results_are_the_ones_in_the_archive():
    index = _bench_index()
    archived = index[index.index("## Archived"):]
    for name in re.findall(r"`([\w.-]+\.md)`", archived):
        assert (BENCH / "results" / "archive" / name).is_file(), name
    assert {p.name for p in (BENCH / "results" / "archive").iterdir()} <= set(re.findall(r"`([\w.-]+\.md)`", archived))


def test_the_bench_commands_use_flags_their_scripts_have():
    rows = re.findall(r"^\| `(\w+\.py)`[^\n]*", _bench_index(), re.M)
    assert len(rows) > 30
    for line in re.findall(r"^\| `\w+\.py`[^\n]*", _bench_index(), re.M):
        script = re.match(r"\| `(\w+\.py)`", line).group(1)
        command = re.split(r"(?<!\\)\|", line)[-2]
        command = re.sub(r"`[^`]*\b(?!" + re.escape(script) + r")\w+\.py[^`]*`", "", command)  # another script's command
        source = (BENCH / script).read_text()
        for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", command):
            assert f'"{flag}"' in source, f"bench/README.md: {script} has no {flag}"
