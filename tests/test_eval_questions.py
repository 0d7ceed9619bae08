"""`kgwalk eval questions`: any question file scored as MetaQA's are, over a small corpus built in
this process with the real stages' cores and a real retriever."""

import json
import re

import corpus
import pyarrow as pa
import pytest

from kgwalk.cli import main, run
from kgwalk.errors import KgwalkError
from kgwalk.eval.questions import KgLabels, label_id, parse_line, read_question_lines

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
