"""The documentation keeps up with the tree: bench/README.md indexes every script and result file
with commands whose flags the scripts have, README stays a short guide, every path the pages name
exists, and the docs site builds in MkDocs' strict mode (broken links fail)."""

import re
import subprocess
import sys
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


def test_the_readme_is_a_short_guide():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    for part in ("make demo", "make test", "docs/config.md", "bench/results/", "## Layout", "kgwalk serve"):
        assert part in readme, part


def _cli_lines(text: str) -> list[list[str]]:
    """Every `kgwalk ...` command line in the text's code blocks, split into words (line continuations joined)."""
    blocks = "\n".join(re.findall(r"```[a-z]*\n(.*?)```", text, re.S)).replace("\\\n", " ")
    return [line.split("#")[0].split() for line in blocks.splitlines() if re.match(r"\s*(\S*/)?kgwalk\s", line)]


def test_the_commands_the_guide_shows_are_the_clis():
    """Each `kgwalk SUB ...` in README.md and docs/ names a subcommand, and each --flag one it has."""
    import argparse

    from kgwalk.cli import _parser

    parser = _parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    checked = 0
    for page in pages:
        for words in _cli_lines(page.read_text()):
            alternatives = [w for w in words[1:] if w not in ("|", "[", "]")][:1]
            sub = alternatives[0] if alternatives else ""
            assert sub in subparsers, f"{page.name}: kgwalk {sub}: no such subcommand"
            known = {o for a in subparsers[sub]._actions for o in a.option_strings}
            for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", " ".join(words)):
                assert flag in known, f"{page.name}: kgwalk {sub} has no {flag}"
            checked += 1
    assert checked > 40


def test_every_path_the_pages_name_exists():
    """Paths of this repository in README.md and docs/: Markdown links and the bench/results files they name
    (but for a result bench/README.md says is not made yet)."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    not_made = set(re.findall(r"([\w-]+) \(not run at this commit\)", _bench_index()))
    missing = []
    for page in pages:
        text = page.read_text()
        base = page.parent
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if not re.match(r"[a-z]+:", target) and not (base / target).exists():
                missing.append(f"{page.name}: {target}")
        for results in re.findall(r"bench/results/([\w.-]+\.(?:md|png|csv))", text):
            if not (REPO / "bench" / "results" / results).exists() and Path(results).stem not in not_made:
                missing.append(f"{page.name}: bench/results/{results}")
        for listed in re.findall(r"`bench/results/[\w.-]+`((?:, `[\w.-]+\.md`)+)", text):
            missing += [f"{page.name}: bench/results/{n}" for n in re.findall(r"`([\w.-]+\.md)`", listed)
                        if not (REPO / "bench" / "results" / n).exists()]
    assert missing == [], missing


def test_the_docs_site_builds_strictly(tmp_path):
    """MkDocs in strict mode (mkdocs.yml): a broken link or anchor, a page missing from the nav or a nav
    entry without its page fails. On the tree as it is: a page another branch adds fails here until it lands."""
    mkdocs = Path(sys.executable).with_name("mkdocs")
    run = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "site" / "config" / "index.html").exists()
