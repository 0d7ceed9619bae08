"""`kgwalk eval` on plain questions (as users type them) and its answer-set recall, over a small
corpus built in this process with the real stages' cores and a real retriever."""

import json

import corpus
import pytest

from kgwalk.cli import run
from kgwalk.eval.metaqa import load_questions, plain_question, score_retrieval
from kgwalk.query import Retriever

TRIPLES = [
    ("Kismet", "directed_by", "William Dieterle"),
    ("Kismet", "written_by", "Edward Knoblock"),
    ("Juarez", "directed_by", "William Dieterle"),
    ("Abra_Catastrophe!", "performed_by", "Fizz"),
]
# Kismet: 2 gold answers, 1 in the KG; Juarez's director; a topic with punctuation at its end
QUESTIONS = [
    "who directed [Kismet]\tWilliam Dieterle|Nobody Atall",
    "who directed [Juarez]\tWilliam Dieterle",
    "who performed [Abra_Catastrophe!]\tFizz",
]


@pytest.fixture(scope="module")
def corpus_and_questions(tmp_path_factory):
    root = tmp_path_factory.mktemp("zero_shot_eval")
    kg = root / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in TRIPLES))
    cfg = corpus.config(root / "warehouse", kg, ["query.k_nodes=1", "query.k_walks=10"])
    corpus.build_in_process(cfg)
    data = root / "metaqa"
    (data / "1-hop").mkdir(parents=True)
    (data / "1-hop" / "qa_dev.txt").write_text("\n".join(QUESTIONS) + "\n")
    return cfg, data


def test_plain_questions_drop_the_brackets(tmp_path):
    assert plain_question("who directed [Kismet] and [Juarez]") == "who directed Kismet and Juarez"
    (tmp_path / "qa.txt").write_text("who performed [Abra_Catastrophe!]\tFizz\n")
    (q,) = load_questions(tmp_path / "qa.txt")
    assert (q.text, q.plain) == ("who performed [Abra_Catastrophe!]", "who performed Abra_Catastrophe!")


@pytest.mark.parametrize("plain", [False, True])
def test_answer_set_recall_counts_the_share_of_gold_answers_in_the_context(corpus_and_questions, plain):
    cfg, data = corpus_and_questions
    retriever = Retriever(cfg)
    try:
        s = score_retrieval(retriever, load_questions(data / "1-hop" / "qa_dev.txt"), 1, plain=plain)
    finally:
        retriever.close()
    assert s.plain is plain
    assert s.topic_recall == 1.0  # the topic is found with or without brackets, "!" and "_" included
    assert s.context_recall == 1.0  # some gold answer is in every question's context ...
    assert s.answer_recall == pytest.approx((0.5 + 1 + 1) / 3)  # ... but only one of Kismet's two


def test_cli_eval_plain_prints_and_returns_answer_set_recall(corpus_and_questions, capsys):
    cfg, data = corpus_and_questions
    args = ["eval", "metaqa", "--name", cfg.name, "--warehouse", cfg.warehouse, "--data", str(data), "--hops", "1",
            "--set", f"embed.model={corpus.MODEL}", "--set", "query.k_nodes=1", "--set", "query.k_walks=10"]
    assert run([*args, "--plain", "--json"]) == 0
    (scores,) = json.loads(capsys.readouterr().out)
    assert scores["plain"] is True and scores["answer_recall"] == pytest.approx(2.5 / 3)
    assert run([*args, "--plain"]) == 0
    table = capsys.readouterr().out
    assert "plain questions (brackets dropped)" in table and "answer-set recall" in table
    assert f"{2.5 / 3:.4f}" in table


def test_cli_eval_warns_once_when_the_kg_lacks_questions_topics(corpus_and_questions, tmp_path, capsys):
    """A corpus built from another KG scored zeros without a word."""
    cfg, data = corpus_and_questions
    args = ["eval", "metaqa", "--name", cfg.name, "--warehouse", cfg.warehouse, "--hops", "1,2", "--set", f"embed.model={corpus.MODEL}"]
    assert run([*args, "--hops", "1", "--data", str(data)]) == 0
    assert "warning" not in capsys.readouterr().err  # every topic is in the KG
    other = tmp_path / "metaqa"
    for hops, lines in ((1, [QUESTIONS[0], "who directed [Brazil]\tTerry Gilliam"]), (2, ["who acted in films by [Gilliam]\tX"])):
        (other / f"{hops}-hop").mkdir(parents=True)
        (other / f"{hops}-hop" / "qa_dev.txt").write_text("\n".join(lines) + "\n")
    assert run([*args, "--data", str(other), "--json"]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if "warning" in line]
    assert warnings == [f"[kgwalk] warning: 2 of 3 questions name a topic that is not an entity of the KG {cfg.name!r} "
                        "(1-hop 1 of 2, 2-hop 1 of 1); they score 0: is the KG the one the questions are about (MetaQA's kb.txt)?"]
    assert [s["topic_recall"] for s in json.loads(captured.out)] == [0.5, 0.0]


def test_cli_eval_times_questions_on_a_warm_retriever_with_its_startup_frozen(corpus_and_questions, monkeypatch, capsys):
    """As `kgwalk serve` answers them: warmed up, what startup made out of the cyclic GC's scans
    (kgwalk.query.retriever.long_lived_frozen), handed back when the eval ends."""
    import gc

    from kgwalk.eval import questions

    cfg, data = corpus_and_questions
    seen = []

    def scored(retriever, *args, **kwargs):
        seen.append((gc.get_freeze_count(), retriever._lexicon is not None))
        return score_retrieval(retriever, *args, **kwargs)

    monkeypatch.setattr(questions, "score_retrieval", scored)
    assert run(["eval", "metaqa", "--name", cfg.name, "--warehouse", cfg.warehouse, "--data", str(data), "--hops", "1", "--json",
                "--set", f"embed.model={corpus.MODEL}"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["questions"] > 0
    assert len(seen) == 1 and seen[0][0] > 10_000 and seen[0][1]
    assert gc.get_freeze_count() == 0
