"""The package keeps its shape: the import contracts in pyproject.toml ([tool.importlinter]: floors,
no import cycles) hold. `make lint` runs the same check with ruff and mypy. The scripts beside the
package (bench/, tests/, jobs/, pipelines/) import each other by module name, which import-linter
does not see: their graphs are checked here, so no import cycle runs anywhere in the tree."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_import_contracts_hold():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run([str(lint_imports), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


def test_tables_are_read_through_delta_rs_own_engine():
    """kgwalk.storage.scan is the one way rows are read: a read through pyarrow.dataset
    (`to_pyarrow_table`, or `to_pyarrow_dataset` and its batches) can abort the interpreter at exit
    after a command succeeded (SIGABRT, "terminate called without an active exception"; seen in
    `kgwalk status`, 2 of 12 runs). Counting rows from the table's metadata reads none."""
    offenders = []
    for path in sorted((REPO / "kgwalk").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "to_pyarrow_table(" in line or ("to_pyarrow_dataset()" in line and ".count_rows()" not in line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


SCRIPT_FOLDERS = ("bench", "tests", "jobs", "pipelines")


def sibling_imports(folder: Path) -> dict[str, set[str]]:
    """Each module of `folder` -> the modules of the same folder it imports (`import x`, `from x import y`,
    `from folder.x import y`), found in its whole syntax tree, function bodies included."""
    modules = {path.stem for path in folder.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in sorted(folder.glob("*.py")):
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                first, _, rest = name.partition(".")
                imported.add(rest.partition(".")[0] if first == folder.name and rest else first)
        graph[path.stem] = (imported & modules) - {path.stem}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of `graph` as the modules along it, or [] when there is none."""
    state: dict[str, str] = {}  # module -> "open" while on the path, "done" once every path from it is checked

    def visit(module: str, path: list[str]) -> list[str]:
        state[module] = "open"
        for nxt in sorted(graph.get(module, ())):
            if state.get(nxt) == "open":
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt, [*path, nxt])):
                return found
        state[module] = "done"
        return []

    for module in sorted(graph):
        if module not in state and (found := visit(module, [module])):
            return found
    return []


def test_the_cycle_finder_finds_one():
    assert cycle({"align": {"report", "temporal"}, "temporal": {"align"}, "report": set()}) == ["align", "temporal", "align"]
    assert cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []


@pytest.mark.parametrize("folder", SCRIPT_FOLDERS)
def test_no_import_cycle_among_the_scripts(folder):
    graph = sibling_imports(REPO / folder)
    assert graph, folder
    assert not cycle(graph), " -> ".join(cycle(graph))


def _top_level_modules(path: Path) -> list[str]:
    """The modules `path` imports at its top level, in order."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
    return found


def test_a_benchmark_measures_the_checkout_it_sits_in(tmp_path):
    """bench/report.py puts its own checkout first where PYTHONPATH names none, so a script run from a git worktree (and
    the kgwalk commands it starts) imports that worktree's kgwalk, not the editable install's; an explicit PYTHONPATH
    still decides. It works only if every script imports common or report before kgwalk."""
    for path in sorted((REPO / "bench").glob("*.py")):
        roots = [m.split(".")[0] for m in _top_level_modules(path)]
        if "kgwalk" in roots:
            local = [i for i, m in enumerate(roots) if m in ("common", "report")]
            assert local and local[0] < roots.index("kgwalk"), f"{path.name} imports kgwalk before report/common"
    checkout = tmp_path / "checkout"
    (checkout / "bench").mkdir(parents=True)
    (checkout / "kgwalk").mkdir()
    (checkout / "kgwalk" / "__init__.py").write_text("")
    shutil.copy(REPO / "bench" / "report.py", checkout / "bench")
    show = "import os, report, kgwalk; print(kgwalk.__file__); print(os.environ['PYTHONPATH'])"
    bare = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for env, expected in ((bare, checkout), ({**bare, "PYTHONPATH": str(REPO)}, REPO)):
        run = subprocess.run([sys.executable, "-c", show], cwd=checkout / "bench", env=env, capture_output=True, text=True, check=True)
        imported, pythonpath = run.stdout.split()
        assert Path(imported) == expected / "kgwalk" / "__init__.py" and Path(pythonpath) == expected


def test_benchmarks_share_code_through_common_and_report_only():
    """A benchmark script imports no other script: what several need is in bench/common.py (constants,
    sub-corpora, the CLI runners) and bench/report.py (the result files)."""
    graph = sibling_imports(REPO / "bench")
    libraries = {"common", "report"}
    assert graph["report"] == set() and graph["common"] <= {"report"}
    offenders = {script: sorted(imports - libraries) for script, imports in graph.items() if imports - libraries}
    assert not offenders, offenders
    defined = {node.name for node in ast.parse((REPO / "bench" / "common.py").read_text()).body
               if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    defined |= {t.id for node in ast.parse((REPO / "bench" / "common.py").read_text()).body if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)}
    for path in (REPO / "bench").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "common":
                assert {a.name for a in node.names} <= defined, (path.name, {a.name for a in node.names} - defined)
