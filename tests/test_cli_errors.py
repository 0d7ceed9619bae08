"""One-line errors of the commands that read a KG, for a KG that is not there: its name and the
warehouse, and how to build it (a query advised `--set query.node_search=dense`, which then
failed differently; `status` printed an empty KG and exited 0); and input paths that are not
regular files."""

import pytest

from kgwalk.cli import main


def run_cli(capsys, *args: str) -> tuple[int, list[str]]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return exit_info.value.code, captured.err.splitlines()


@pytest.mark.parametrize("command", [
    ["status"], ["query", "who directed Kismet"], ["query", "--set", "query.node_search=dense", "who"], ["answer", "who"],
    ["eval", "metaqa", "--limit", "1"], ["fit-paths", "--questions", "q.txt"], ["serve", "--port", "0"],
])
def test_a_kg_that_is_not_there_is_one_line_naming_it(tmp_path, capsys, command):
    warehouse = tmp_path / "wh"
    code, err = run_cli(capsys, *command, "--name", "nope", "--warehouse", str(warehouse))
    assert code == 2 and err == [f"kgwalk: error: no KG named 'nope' in the warehouse {warehouse}: check --name and --warehouse, "
                                 "or build it with `kgwalk build --name nope --kg FILE`"]
    assert not warehouse.exists()  # a reader creates nothing


def test_a_failed_first_ingest_is_no_kg(tmp_path, capsys):
    """What it leaves (its rejected lines and gate reports) is not a KG to read."""
    kg = tmp_path / "kg.txt"
    kg.write_text("a|r|b\nbroken\n")
    code, _ = run_cli(capsys, "ingest", "--kg", str(kg), "--name", "q", "--warehouse", str(tmp_path / "wh"))
    assert code == 3 and (tmp_path / "wh" / "q" / "rejected").is_dir()
    code, err = run_cli(capsys, "status", "--name", "q", "--warehouse", str(tmp_path / "wh"))
    assert code == 2 and len(err) == 1 and err[0].startswith("kgwalk: error: no KG named 'q' in the warehouse")


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null"])
def test_a_kg_file_that_is_not_a_regular_file_says_so(tmp_path, capsys, path):
    code, err = run_cli(capsys, "ingest", "--kg", path, "--name", "q", "--warehouse", str(tmp_path / "wh"))
    assert code == 2 and err == [f"kgwalk: error: KG file {path} is not a regular file"]
    assert not (tmp_path / "wh").exists()
