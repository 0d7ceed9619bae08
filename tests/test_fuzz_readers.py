"""Bad input never crashes ingest: every case of a fixed corpus of malformed files, and random
byte mutations of valid ones, ends in `rejected` rows or one clear error line, never a
traceback, and the valid lines of the same file still land."""

import numpy as np
import pytest

from conftest import TINY_KG
from kgwalk.cli import main
from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import normalize_label
from kgwalk.kg.ingest import ingest
from kgwalk.storage import read_table

GOOD = b"Kismet|directed_by|William Dieterle\n"
# name, file name, content, edges expected to land (None: a clear error), rows expected in `rejected`
CASES = [
    ("truncated last line", "kg.txt", GOOD + b"Kismet|directed_by", 1, 1),
    ("too many fields", "kg.txt", GOOD + b"a|b|c|d|e\n", 1, 1),
    ("bad UTF-8", "kg.txt", GOOD + b"\xff\xfeKismet|starred_actors|Marlene\n", 1, 1),
    ("NUL byte", "kg.txt", GOOD + b"Kis\x00met|starred_actors|Marlene\n", 1, 1),
    ("gigantic label", "kg.txt", GOOD + b"x" * 200_000 + b"|r|y\n", 1, 1),
    ("empty file", "kg.txt", b"", None, 0),
    ("only blank lines", "kg.txt", b"\n  \n\t\n", None, 0),
    ("CRLF line ends", "kg.txt", GOOD.replace(b"\n", b"\r\n") + b"Kismet|release_year|1944\r\n", 2, 0),
    ("UTF-8 BOM", "kg.txt", b"\xef\xbb\xbf" + GOOD, 1, 0),
    ("empty fields", "kg.txt", GOOD + b"|directed_by|x\na||b\n", 1, 2),
    ("duplicate triples", "kg.txt", GOOD * 3, 1, 0),
    ("self-loop", "kg.txt", GOOD + b"Kismet|remake_of|Kismet\n", 2, 0),
    ("a KG of one node", "kg.txt", b"Kismet|remake_of|Kismet\n", 1, 0),
    ("TSV with a missing field", "kg.tsv", b"Kismet\tdirected_by\tWilliam Dieterle\nKismet\tdirected_by\n", 1, 1),
    ("CSV with a stray quote", "kg.csv", b'head,relation,tail\nKismet,directed_by,William Dieterle\nKis"met,r,x\n', 2, 0),
    # an unclosed quote runs to the end of the file (RFC 4180: quoted fields span lines)
    ("CSV with an unclosed quote", "kg.csv", b'head,relation,tail\nKismet,directed_by,William Dieterle\n"Kismet,r,x\nA,r,B\n', 1, 1),
    ("CSV with too few fields", "kg.csv", b"head,relation,tail\nKismet,directed_by,William Dieterle\nA,r\n", 1, 1),
    ("CSV without a usable header", "kg.csv", b"x,y,z\nA,r,B\n", None, 0),
    ("CSV header only", "kg.csv", b"head,relation,tail\n", None, 0),
    ("invalid N-Triples", "kg.nt", b"<http://x/a> <http://x/r> <http://x/b> .\n<http://x/a> <http://x/r> .\nnot a triple\n\"lit\" <http://x/r> <http://x/b> .\n", 1, 3),
    ("N-Triples with bad UTF-8", "kg.nt", b"<http://x/a> <http://x/r> <http://x/b> .\n<http://x/\xff> <http://x/r> <http://x/b> .\n", 1, 1),
    ("corrupt Parquet", "kg.parquet", b"PAR1 this is not parquet", None, 0),
]


def run_ingest_cli(capsys, kg, tmp_path, *sets: str) -> tuple[int, list[str]]:
    with pytest.raises(SystemExit) as exit_info:
        main(["ingest", "--kg", str(kg), "--warehouse", str(tmp_path / "wh"), "--name", "f", *(a for s in sets for a in ("--set", s))])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return exit_info.value.code, [line for line in err.splitlines() if line.startswith("kgwalk:")]


@pytest.mark.parametrize("name, file_name, content, edges, rejected", CASES, ids=[c[0] for c in CASES])
def test_malformed_input_is_rejected_or_a_clear_error(tmp_path, capsys, name, file_name, content, edges, rejected):
    kg = tmp_path / file_name
    kg.write_bytes(content)
    # the rejected-ratio gate would stop most of these tiny files; here it is the readers' turn
    code, lines = run_ingest_cli(capsys, kg, tmp_path, "quality.max_rejected_ratio=1")
    if edges is None:
        assert code == 2 and len(lines) == 1 and lines[0].startswith("kgwalk: error: ")
        assert not (tmp_path / "wh" / "f" / "edges").exists()
        return
    assert code == 0 and lines == []
    assert read_table(tmp_path / "wh" / "f" / "edges").num_rows == edges
    assert read_table(tmp_path / "wh" / "f" / "rejected").num_rows == rejected
    keys = set(read_table(tmp_path / "wh" / "f" / "entities").column("key").to_pylist())
    assert all("\r" not in k and "\ufeff" not in k and "\x00" not in k for k in keys)


def test_default_gate_stops_a_mostly_broken_file_in_one_line(tmp_path, capsys):
    kg = tmp_path / "kg.txt"
    kg.write_bytes(GOOD + b"broken\n" * 3)
    code, lines = run_ingest_cli(capsys, kg, tmp_path)
    assert code == 3 and len(lines) == 1 and "3 of 4 lines rejected (75.0% > quality.max_rejected_ratio 5%)" in lines[0]
    assert not (tmp_path / "wh" / "f" / "edges").exists()


def test_unknown_relation_is_a_gate_failure_naming_it(tmp_path, capsys):
    kg = tmp_path / "kg.txt"
    kg.write_bytes(GOOD + b"Kismet|direcetd_by|Someone\n")
    code, lines = run_ingest_cli(capsys, kg, tmp_path, "quality.relations=[directed_by]")
    assert code == 3 and len(lines) == 1 and "e.g. key direcetd_by" in lines[0]


PALETTE = [b"\x00", b"\xff", b"\xc3", b"|", b"\n", b"\r", b'"', b"\t", b"\xef\xbb\xbf", b"<", b" .", b"x" * 1500]


def mutate(lines: list[bytes], rng: np.random.Generator) -> tuple[list[bytes], set[int]]:
    """Insert a random troublesome byte sequence into a few random lines; returns the lines and
    which ones were touched."""
    touched = set(rng.choice(len(lines), size=int(rng.integers(1, 6)), replace=False).tolist())
    out = []
    for i, line in enumerate(lines):
        if i in touched:
            at = int(rng.integers(0, len(line) + 1))
            line = line[:at] + PALETTE[int(rng.integers(len(PALETTE)))] + line[at:]
        out.append(line)
    return out, touched


@pytest.mark.parametrize("fmt", ["pipe", "nt"])
def test_random_mutations_lose_no_line_and_keep_every_untouched_triple(tmp_path, fmt):
    source = [line for line in TINY_KG.read_bytes().splitlines() if line.strip()][:60]
    if fmt == "nt":
        source = [b" ".join(b"<http://x/" + f.replace(b" ", b"_") + b">" for f in line.split(b"|")) + b" ." for line in source]
    for seed in range(60):
        rng = np.random.default_rng(seed)
        lines, touched = mutate(source, rng)
        content = b"\n".join(lines) + b"\n"
        kg = tmp_path / f"kg{seed}.{'txt' if fmt == 'pipe' else 'nt'}"
        kg.write_bytes(content)
        try:
            result = ingest(kg, tmp_path / f"wh{seed}", max_label_length=1000)
        except KgwalkError as e:  # the one acceptable failure: a clear message
            assert str(e) and "\n" not in str(e)
            continue
        physical = content.count(b"\n")
        assert result.lines_read + result.blank_lines == physical, seed  # every line accounted for
        assert read_table(tmp_path / f"wh{seed}" / "rejected").num_rows == result.rejected.num_rows, seed
        keys = set(result.entities.column("key").to_pylist())
        for i, line in enumerate(source):
            if i not in touched:
                if fmt == "pipe":
                    assert {normalize_label(f.decode()) for f in (line.split(b"|")[0], line.split(b"|")[2])} <= keys, (seed, line)
                else:
                    assert {t.decode()[1:-1] for t in (line.split(b" ")[0], line.split(b" ")[2])} <= keys, (seed, line)
