"""`kgwalk eval questions`: any question file scored as MetaQA's are, over a small corpus built in
this process with the real stages' cores and a real retriever."""

import json
import re

import corpus
import pyarrow as pa
import pytest

from kgwalk.cli import main, run
from kgwalk.errors import KgwalkError
from kgwalk.eval.questions import KgLabels, Question, common_misses, label_id, miss_record, parse_line, read_question_lines
from kgwalk.query.hits import NodeHit, Retrieval, WalkHit

TRIPLES = [
    ("Kismet", "directed_by", "William Dieterle"),
    ("Juarez", "directed_by", "William Dieterle"),
    ("Kismet", "starred_actors", "Ronald Colman"),
    ("Juarez", "starred_actors", "Paul Muni"),
    ("Kismet", "written_by", "Edward Knoblock"),
    ("Abra_Catastrophe!", "performed_by", "Fizz"),
]
GOOD = [
    "who directed [Kismet]\tWilliam Dieterle",
    "which film did [William Dieterle] direct that [Ronald Colman] starred in\tKismet",  # two topics
    "who performed [Abra_Catastrophe!]\tFizz",
]
UNKNOWN = [
    "who directed [Nowhere Film]\tWilliam Dieterle",  # a topic the KG does not have
    "who wrote [Kismet]\tEdward Knoblock|Nobody Atall",  # one of two answers it does not have
    "who directed [Juarez]\tWilliam Dieterle",
]
SETTINGS = ["--set", f"embed.model={corpus.MODEL}", "--set", "query.k_nodes=3", "--set", "query.k_walks=10"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("eval_questions")
    kg = root / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in TRIPLES))
    cfg = corpus.config(root / "warehouse", kg)
    corpus.build_in_process(cfg)
    for name, lines in (("good.txt", GOOD), ("unknown.txt", UNKNOWN)):
        (root / name).write_text("\n".join(lines) + "\n\n")  # a blank line at the end is no question
    return cfg, root


def _eval(cfg, *args: str) -> list[str]:
    return ["eval", "questions", "--name", cfg.name, "--warehouse", cfg.warehouse, *SETTINGS, *args]


def test_a_question_line_names_its_topics_and_answers():
    line = parse_line("which film did [William Dieterle] direct that [Ronald Colman] starred in\tKismet| Juarez\n")
    assert line.topics == ("William Dieterle", "Ronald Colman") and line.answers == ("Kismet", "Juarez")
    for bad, why in (("who directed Kismet\tWilliam Dieterle", "no [bracketed] topic"), ("who directed [Kismet]", "no tab"),
                     ("who directed [Kismet]\t", "no answers"), ("who directed [Kismet]\tA\tB", "more than one tab")):
        with pytest.raises(ValueError, match=re.escape(why)):
            parse_line(bad)


def test_labels_take_the_kg_s_entity_ids_and_unknown_ones_name_none():
    """An N-Triples KG keys entities by IRI: the id is not the label's hash, so labels are looked up."""
    entities = pa.table({"id": pa.array([7, 5], pa.int64()), "label": ["Kismet", "Kismet"]})
    labels = KgLabels(entities, ["Kismet ", "Juarez"])
    assert labels("Kismet") == 5 and "Kismet" in labels  # the lowest id of two with one label
    assert "Juarez" not in labels and labels("Juarez") == label_id("Juarez")


def test_eval_questions_scores_each_file_with_metaqa_s_columns(files, capsys):
    cfg, root = files
    assert run(_eval(cfg, "--file", str(root / "good.txt"), "--file", str(root / "unknown.txt"), "--plain", "--json")) == 0
    out = capsys.readouterr()
    good, unknown = json.loads(out.out)
    assert good["file"] == "good.txt" and good["hops"] is None and good["questions"] == 3 and good["plain"] is True
    assert good["topic_recall"] == 1.0  # both topics of the two-topic question are among its nodes
    assert good["context_recall"] == 1.0 and good["unknown_topics"] == 0 and good["unknown_answers"] == 0
    # kept and counted: the unknown topic is a topic miss, the unknown answer caps its question's share at a half
    assert unknown["questions"] == 3 and unknown["unknown_topics"] == 1 and unknown["unknown_answers"] == 1
    assert unknown["topic_recall"] == pytest.approx(2 / 3)
    assert unknown["answer_recall"] <= (1 + 0.5 + 1) / 3
    (warning,) = out.err.strip().splitlines()  # one line for all files
    assert warning.startswith("kgwalk: warning:") and "unknown.txt: 1 of 3 questions name a topic the KG does not have" in warning
    assert "1 of 4 answers are not in it" in warning and "good.txt" not in warning

    assert run(_eval(cfg, "--file", str(root / "good.txt"), "--plain", "--limit", "2")) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("question files, plain questions (brackets dropped)")
    assert table[1].split()[:2] == ["file", "questions"] and "extractive Hits@1" in table[1]
    assert table[2].split()[:2] == ["good.txt", "2"]


@pytest.mark.parametrize("content, message", [
    ("who directed [Kismet]\tWilliam Dieterle\nwho directed Juarez\tWilliam Dieterle\n", "line 2: no [bracketed] topic"),
    ("who directed [Kismet] William Dieterle\n", "line 1: no tab"),
])
def test_a_bad_line_is_a_one_line_error(files, tmp_path, capsys, content, message):
    cfg, _ = files
    bad = tmp_path / "bad.txt"
    bad.write_text(content)
    with pytest.raises(SystemExit) as exit_:
        main(_eval(cfg, "--file", str(bad)))
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.strip().splitlines()) == 1
    assert f"{bad} {message}" in err and "expected `question with [topic]<TAB>answer|answer`" in err


@pytest.mark.parametrize("args, message", [
    ([], "name a question file with --file"),
    (["--file", "nowhere.txt"], "no question file nowhere.txt"),
    (["--file", "x.txt", "--hops", "1"], "--hops are for `kgwalk eval metaqa`"),
])
def test_eval_questions_usage_errors(files, capsys, args, message):
    cfg, _ = files
    with pytest.raises(SystemExit) as exit_:
        main(_eval(cfg, *args))
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_metaqa_reads_question_lines_the_same_way(tmp_path):
    (tmp_path / "qa.txt").write_text("who directed [Kismet]\tWilliam Dieterle\nbroken line\n")
    with pytest.raises(KgwalkError, match="line 2: no tab"):
        read_question_lines(tmp_path / "qa.txt")


def _walk(walk_id: int, score: float, nodes: list[int], labels: list[str], signature: str, also: list[int] | None = None) -> WalkHit:
    return WalkHit(walk_id, score, "walk", "", nodes, labels, [], signature, score, also or [])


def test_a_miss_record_says_what_ranked_first_and_how_far_an_answer_was():
    question = Question("who directed [Kismet]", topic=1, answers=frozenset({3}), answer_labels=("William Dieterle",))
    wrong = _walk(10, 0.9, [1, 2], ["Kismet", "Ronald Colman"], "starred_actors>")
    through = _walk(11, 0.8, [1, 3, 4], ["Kismet", "William Dieterle", "Juarez"], "directed_by>|<directed_by")
    result = Retrieval("who directed Kismet", [NodeHit(1, "Kismet", 1.0, walks=[through, wrong])], {}, best=wrong)
    record = miss_record(question, "who directed Kismet", result)
    assert record == {"question": "who directed Kismet", "answers": ["William Dieterle"], "answer_count": 1, "topics_found": True,
                      "best_path": "starred_actors>", "best_end": "Ronald Colman",
                      "answer_path": "directed_by>",  # the walk through the answer, cut there
                      "answer_in_context": True}
    listed = _walk(11, 0.8, [1, 5], ["Kismet", "Salome"], "written_by>", also=[3])  # the answer in its answer-set list only
    elsewhere = Retrieval("q", [NodeHit(7, "Juarez", 0.5, walks=[wrong, listed])], {}, best=wrong)
    record = miss_record(question, "q", elsewhere)
    assert record["answer_path"] == "written_by>" and record["answer_in_context"] and not record["topics_found"]
    nothing = miss_record(question, "q", Retrieval("q", [NodeHit(1, "Kismet", 1.0, walks=[wrong])], {}, best=wrong))
    assert nothing["answer_path"] is None and not nothing["answer_in_context"]
    pairs = common_misses([record, nothing, nothing])
    assert pairs == [(2, "starred_actors>", "-", "q"), (1, "starred_actors>", "written_by>", "q")]


def test_eval_writes_each_miss_and_prints_the_commonest(files, tmp_path, capsys):
    cfg, root = files
    out = tmp_path / "misses.jsonl"
    assert run(_eval(cfg, "--file", str(root / "good.txt"), "--file", str(root / "unknown.txt"), "--plain", "--json",
                     "--misses", str(out))) == 0
    rows = json.loads(capsys.readouterr().out)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    for row in rows:  # one record per question whose best walk missed, no more
        mine = [r for r in records if r["set"] == row["file"]]
        assert len(mine) == round(row["questions"] * (1 - row["extractive_hits1"]))
    assert records and all(set(r) == {"set", "question", "answers", "answer_count", "topics_found", "best_path", "best_end",
                                      "answer_path", "answer_in_context"} for r in records)
    assert all(r["topics_found"] or r["question"] == "who directed Nowhere Film" for r in records)  # the one topic not in the KG
    assert not list(tmp_path.glob("*.partial"))

    assert run(_eval(cfg, "--file", str(root / "unknown.txt"), "--plain", "--misses", str(out))) == 0  # replaces the file
    text = capsys.readouterr().out.splitlines()
    again = out.read_text().splitlines()
    assert f"{len(again)} of 3 questions missed (best walk's end no gold answer), written to {out}" in text
    shown = text[text.index(next(line for line in text if line.startswith("most common"))) + 1:]
    assert sum(int(line.split()[0]) for line in shown) == len(again)  # every pair, each with its count, fewer than 5 here


@pytest.mark.parametrize("where, message", [("nowhere/misses.jsonl", "no folder"), (".", "is a folder")])
def test_a_misses_file_that_cannot_be_written_is_a_one_line_error(files, tmp_path, capsys, where, message):
    cfg, root = files
    with pytest.raises(SystemExit) as exit_:
        main(_eval(cfg, "--file", str(root / "good.txt"), "--misses", str(tmp_path / where)))
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and len(err.strip().splitlines()) == 1
