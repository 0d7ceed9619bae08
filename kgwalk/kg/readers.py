"""Readers for every supported KG format, each yielding clean triples plus rejected lines.

A reader never raises on a bad line: the line lands in `rejected` with its number and the reason.
Formats: `pipe` (MetaQA's head|relation|tail), `tsv`, `csv` (with a header), `nt` (N-Triples),
`parquet`. Keys are normalized labels (or IRIs for N-Triples); ids are hashed from keys later.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq

from kgwalk.config import KgFileFormat
from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import normalize_label

FORMATS = get_args(KgFileFormat)
_SUFFIX_FORMAT = {".txt": "pipe", ".tsv": "tsv", ".csv": "csv", ".nt": "nt", ".parquet": "parquet"}
# Accepted column names for header-carrying formats (csv, parquet), in (head, relation, tail) order.
_COLUMN_ALIASES = (
    ("head", "subject", "src", "source", "h", "s"),
    ("relation", "predicate", "rel", "r", "p", "edge"),
    ("tail", "object", "dst", "target", "t", "o"),
)
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass
class ReadResult:
    """What a reader found: triples of keys, display labels (where not the key), rejections."""

    triples: list[tuple[int, str, str, str]] = field(default_factory=list)  # (line, head, rel, tail)
    ops: list[str] = field(default_factory=list)  # change sets only: "add" | "remove", one per triple
    labels: dict[str, str] = field(default_factory=dict)
    rejected: list[tuple[int, str, str]] = field(default_factory=list)  # (line, reason, text)
    blank_lines: int = 0


def detect_format(path: str | Path, fmt: str = "auto") -> str:
    if fmt != "auto":
        if fmt not in FORMATS:
            raise KgwalkError(f"unknown KG format '{fmt}' (known: {', '.join(FORMATS)})")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIX_FORMAT:
        raise KgwalkError(f"cannot tell the format of {path} from its suffix; pass --format ({', '.join(FORMATS)})")
    return _SUFFIX_FORMAT[suffix]


_OPS = {"add": "add", "+": "add", "a": "add", "insert": "add", "remove": "remove", "-": "remove", "d": "remove", "delete": "remove"}


def input_file(path: str | Path, what: str = "KG file") -> Path:
    """`path` as a Path, checked to be a readable file: checked before a writer takes its lock, so
    a wrong path ends in one line and leaves nothing behind."""
    p = Path(path)
    if p.is_dir():
        raise KgwalkError(f"{what} {path} is a directory, not a file")
    if p.exists() and not p.is_file():  # a device (/dev/zero), a pipe, a socket: not read to the end
        raise KgwalkError(f"{what} {path} is not a regular file")
    if not p.is_file():
        raise KgwalkError(f"{what} not found: {path}")
    if not os.access(p, os.R_OK):
        raise KgwalkError(f"{what} {path} is not readable (permission denied)")
    return p


def read_kg(path: str | Path, fmt: str = "auto", max_label_length: int = 1000, with_op: bool = False) -> ReadResult:
    """Read a KG file of any supported format.

    with_op: read a change set instead: every triple also carries an op, add or remove (also
    +/-, a/d, insert/delete). pipe/tsv: a 4th field; csv/parquet: an `op` column; N-Triples:
    RDF Patch style, each statement prefixed by `A` (add) or `D` (delete).
    """
    p = input_file(path, "change set" if with_op else "KG file")
    fmt = detect_format(p, fmt)
    out = ReadResult()
    if fmt == "parquet":
        _read_parquet(p, out, max_label_length, with_op)
    elif fmt == "csv":
        _read_csv(p, out, max_label_length, with_op)  # its own reader: quoted fields may span lines
    else:
        for line_no, text in _lines(p, out):
            if fmt == "nt":
                op = None
                if with_op:
                    op, _, text = text.lstrip().partition(" ")
                _nt_line(line_no, text, out, max_label_length, op if with_op else None)
            else:
                fields = text.split("|" if fmt == "pipe" else "\t")
                expected = 4 if with_op else 3  # a change set's 4th field is its op
                if len(fields) != expected:
                    out.rejected.append((line_no, _field_count(fmt, expected, len(fields), text), text))
                    continue
                _add(out, line_no, fields[:3], text, max_label_length, fields[3] if with_op else None)
    return out


def _field_count(fmt: str, expected: int, found: int, text: str) -> str:
    """Why a pipe or tsv line is not head, relation, tail (and op); names the other separator
    when the line holds it, the usual cause."""
    other = {"pipe": ("\t", "tab", "tsv"), "tsv": ("|", "pipe", "pipe")}[fmt]
    hint = f" ({other[1]}-separated? pass --format {other[2]})" if other[0] in text else ""
    return f"expected {expected} fields, found {found}{hint}"


def _lines(path: Path, out: ReadResult) -> Iterator[tuple[int, str]]:
    """Decoded, newline-stripped lines with 1-based numbers; bad UTF-8 and blank lines are accounted."""
    with open(path, "rb") as f:
        for line_no, raw in enumerate(f, start=1):
            raw = raw.rstrip(b"\r\n")
            if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                out.rejected.append((line_no, f"invalid UTF-8 at byte {e.start}", raw.decode("utf-8", "replace")))
                continue
            if not text.strip():
                out.blank_lines += 1
                continue
            yield line_no, text


def _clean(value: object, what: str, max_len: int) -> tuple[str, None] | tuple[None, str]:
    """(normalized value, None) or (None, reason)."""
    if value is None:
        return None, f"missing {what}"
    text = normalize_label(str(value))
    if not text:
        return None, f"empty {what}"
    if _CONTROL.search(text):
        return None, f"control character in {what}"
    if len(text) > max_len:
        return None, f"{what} longer than {max_len} characters"
    return text, None


def _add(out: ReadResult, line_no: int, fields: list, text: str, max_len: int, op: str | None = None) -> None:
    """Validate one record; `op` is None for a KG, the raw op field for a change set."""
    if op is not None and _OPS.get(str(op).strip().lower()) is None:
        out.rejected.append((line_no, f"op must be add or remove, found {str(op)[:20]!r}", text))
        return
    if len(fields) != 3:
        out.rejected.append((line_no, f"expected 3 fields, found {len(fields)}", text))
        return
    clean = []
    for value, what in zip(fields, ("head", "relation", "tail")):
        cleaned = _clean(value, what, max_len)
        if cleaned[0] is None:
            out.rejected.append((line_no, cleaned[1], text))
            return
        clean.append(cleaned[0])
    out.triples.append((line_no, clean[0], clean[1], clean[2]))
    if op is not None:
        out.ops.append(_OPS[str(op).strip().lower()])


def _column_order(names: list[str], source: str) -> list[int]:
    lowered = [n.strip().lower() for n in names]
    order = []
    for aliases in _COLUMN_ALIASES:
        hit = next((i for i, n in enumerate(lowered) if n in aliases), None)
        if hit is None:
            raise KgwalkError(
                f"{source}: no '{aliases[0]}' column in header {names} (accepted names: {', '.join(aliases)})"
            )
        order.append(hit)
    return order


def _op_column(names: list[str], source: str) -> int:
    lowered = [n.strip().lower() for n in names]
    if "op" not in lowered:
        raise KgwalkError(f"{source}: a change set needs an 'op' column (add or remove) in header {names}")
    return lowered.index("op")


def _read_csv(path: Path, out: ReadResult, max_len: int, with_op: bool = False) -> None:
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8", "replace")  # bad bytes are caught per row below
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as e:
        raise KgwalkError(f"{path}: unreadable CSV header: {e}") from None
    order = _column_order(header, str(path))
    op_at = _op_column(header, str(path)) if with_op else None
    while True:
        line_no = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            out.rejected.append((line_no, f"CSV error: {e}", ""))
            continue
        raw = ",".join(row)
        if not row or not "".join(row).strip():
            out.blank_lines += 1
            continue
        if "\ufffd" in raw:
            out.rejected.append((line_no, "invalid UTF-8", raw))
            continue
        if len(row) != len(header):
            out.rejected.append((line_no, f"expected {len(header)} fields, found {len(row)}", raw))
            continue
        _add(out, line_no, [row[i] for i in order], raw, max_len, None if op_at is None else row[op_at])


def _read_parquet(path: Path, out: ReadResult, max_len: int, with_op: bool = False) -> None:
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as e:
        raise KgwalkError(f"{path}: not a readable Parquet file ({str(e).splitlines()[0]})") from None
    order = _column_order(table.column_names, str(path))
    cols = [table.column(i).to_pylist() for i in order]
    ops = table.column(_op_column(table.column_names, str(path))).to_pylist() if with_op else [None] * table.num_rows
    for row_no, (fields, op) in enumerate(zip(zip(*cols), ops), start=1):
        _add(out, row_no, list(fields), "|".join("" if v is None else str(v) for v in fields), max_len, ("" if op is None else op) if with_op else None)


# N-Triples: IRIs, blank nodes, literals with optional language tag or datatype.
_NT_TERM = r'<[^<>"{}|^`\\\s]*>|_:[A-Za-z0-9_\-.]+|"(?:[^"\\]|\\.)*"(?:@[A-Za-z\-]+|\^\^<[^>]*>)?'
_NT_LINE = re.compile(rf"^\s*({_NT_TERM})\s*({_NT_TERM})\s*({_NT_TERM})\s*\.\s*(#.*)?$")
_NT_ESCAPE = re.compile(r'\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[tbnrf"\'\\])')
_SIMPLE_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _nt_unescape(s: str) -> str:
    return _NT_ESCAPE.sub(lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] in "uU" else _SIMPLE_ESCAPES[m.group(1)], s)


def _local_name(iri: str) -> str:
    tail = re.split(r"[/#]", iri.rstrip("/#"))[-1] or iri
    return unquote(tail).replace("_", " ")


def _nt_term(term: str) -> tuple[str, str, bool]:
    """(key, display label, is_literal) of one N-Triples term."""
    if term.startswith("<"):
        iri = term[1:-1]
        return iri, _local_name(iri), False
    if term.startswith("_:"):
        return term, term, False
    lexical = _nt_unescape(term[1 : term.rindex('"')])
    return lexical, lexical, True


def _nt_line(line_no: int, text: str, out: ReadResult, max_len: int, op: str | None = None) -> None:
    if text.lstrip().startswith("#"):
        out.blank_lines += 1
        return
    m = _NT_LINE.match(text)
    if not m:
        out.rejected.append((line_no, "not a valid N-Triples statement", text))
        return
    (s, s_label, s_lit), (p, p_label, p_lit), (o, o_label, _) = (_nt_term(m.group(i)) for i in (1, 2, 3))
    if s_lit or p_lit or p.startswith("_:"):
        out.rejected.append((line_no, "literal or blank node in subject/predicate position", text))
        return
    if p == RDFS_LABEL:  # in a change set too: a label statement sets the label
        cleaned = _clean(o_label, "label", max_len)
        if cleaned[0] is None:
            out.rejected.append((line_no, cleaned[1], text))
        else:
            out.labels[normalize_label(s)] = cleaned[0]  # an explicit label beats the IRI's local name
        return
    before = len(out.triples)
    _add(out, line_no, [s, p, o], text, max_len, op)
    if len(out.triples) > before:
        for key, label in ((s, s_label), (p, p_label), (o, o_label)):
            key = normalize_label(key)
            label = normalize_label(label)
            if label and label != key:
                out.labels.setdefault(key, label)
