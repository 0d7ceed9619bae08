"""Questions generated from the KG's own relation paths (kgwalk/query/kg_questions.py) and
`kgwalk fit-paths --generated N`, over the MetaQA sample's corpus built in this process."""

import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

import corpus
from conftest import SAMPLE_KG
from kgwalk.cli import main
from kgwalk.kg.relations import relation_words
from kgwalk.query import Retriever
from kgwalk.query.corpus_paths import read_corpus_paths
from kgwalk.query.kg_questions import MAX_ANSWERS, SHAPES, generate_questions
from kgwalk.query.paths import PRIOR_TABLE, PathPrior, masked_question
from kgwalk.storage import read_table
from kgwalk.verbalize.template import TemplateVerbalizer
from kgwalk.walks.labels import signature

GLUE = {"what", "is", "the", "of", "has", "as", "its", "something", "which"}  # the shapes' own words


@pytest.fixture(scope="module")
def generated(sample_corpus):
    return generate_questions(sample_corpus, 60, seed=3)


def labels_by_id(cfg):
    entities = read_table(cfg.table("entities"), ["id", "label"])
    return dict(zip(entities.column("id").to_pylist(), entities.column("label").to_pylist()))


def reached(triples, start, relations, inverse):
    """The labels the path reaches from `start`, read off the KG file's triples, not the corpus."""
    forward, backward = defaultdict(set), defaultdict(set)
    for head, relation, tail in triples:
        forward[head, relation].add(tail)
        backward[tail, relation].add(head)
    frontier = {start}
    for relation, back in zip(relations, inverse):
        frontier = {n for f in frontier for n in (backward if back else forward)[f, relation]}
    return frontier - {start}


def test_each_answer_set_is_what_the_stated_path_reaches_in_the_kg(sample_corpus, generated):
    cfg = sample_corpus
    triples = [tuple(line.split("|")) for line in SAMPLE_KG.read_text().splitlines() if line]
    label = labels_by_id(cfg)
    corpus_paths = {(tuple(r), tuple(i)) for r, i in read_corpus_paths(cfg.table("walks"), cfg.table("relations"))}
    assert len(generated) == 60
    assert {len(q.relations) for q in generated} == {1, 2, 3}
    for q in generated:
        assert f"[{label[q.topic]}]" in q.text
        assert (q.relations, q.inverse) in corpus_paths  # a path the walks take, asked from one of its roots
        assert {label[a] for a in q.answers} == reached(triples, label[q.topic], q.relations, q.inverse)
        assert 0 < len(q.answers) <= MAX_ANSWERS
    assert len({(q.topic, q.relations, q.inverse) for q in generated}) == len(generated)


def test_questions_are_phrased_from_the_relation_names_alone(sample_corpus, generated):
    """Every word outside the [topic] is a word of the path's relation names or of their automatic phrases, or one of
    the shapes' few function words: nothing of a development set's templates ("who directed", "filmography")."""
    verbalizer = TemplateVerbalizer(sample_corpus.verbalize.phrases)
    assert {q.shape for q in generated} == set(SHAPES)
    for q in generated:
        words = set(re.findall(r"[A-Za-z']+", re.sub(r"\[[^\]]*\]", " ", q.text).lower()))
        named = [{w.lower() for w in relation_words(r)} | {w.lower() for way in (False, True) for w in re.findall(r"[A-Za-z']+", verbalizer.phrase(r, way))}
                 for r in q.relations]
        assert words <= GLUE.union(*named), (q.text, words - GLUE.union(*named))
        assert all(words & (relation - GLUE) for relation in named), q.text  # every step's relation is named


def test_the_draw_is_the_same_for_the_same_seed_only(sample_corpus, generated):
    assert generate_questions(sample_corpus, 60, seed=3) == generated
    assert generate_questions(sample_corpus, 60, seed=4) != generated


def test_fit_paths_generated_fits_a_prior_that_reranks_walks(sample_corpus, capsys):
    cfg = sample_corpus
    base = ["--warehouse", cfg.warehouse, "--name", cfg.name, "--set", f"embed.model={cfg.embed.model}"]
    with pytest.raises(SystemExit) as fit:
        main(["fit-paths", *base, "--generated", "80", "--seed", "1"])
    out = capsys.readouterr().out
    assert fit.value.code == 0 and "80 questions generated from the KG's relation paths" in out
    try:
        table = read_table(cfg.table(PRIOR_TABLE))
        assert table.num_rows == 80 and all(table.column("signatures").to_pylist())
        assert "E" in table.column("question")[0].as_py() and "[" not in "".join(table.column("question").to_pylist())
        retriever = Retriever(corpus.config(Path(cfg.warehouse), SAMPLE_KG, ["query.rerank=paths"]))
        kismet = [w for w in retriever.retrieve("what is the release year of [Kismet]").walks if w.node_labels[0] == "Kismet"]
        assert any(w.score > w.cosine for w in kismet)  # query.rerank=paths reads the prior the generated questions fitted
        prior = PathPrior.from_table(table)
        for q in generate_questions(cfg, 80, seed=1):  # the CLI's draw: each question's own path has a share of its vote
            vector = retriever.prior_embedder.encode([masked_question(q.text, retriever.lexicon.mentions(q.text))])[0]
            assert prior.votes(vector).get(signature(list(q.relations), list(q.inverse)), 0) > 0, q.text
        retriever.close()
    finally:
        shutil.rmtree(cfg.table(PRIOR_TABLE))


@pytest.mark.parametrize(("args", "error"), [
    ([], "fit-paths: name example questions with --questions FILE, or --generated N to generate them from the KG"),
    (["--generated", "0"], "fit-paths: --generated takes a number of questions of at least 1, got 0"),
])
def test_fit_paths_without_questions_is_one_line(sample_corpus, capsys, args, error):
    cfg = sample_corpus
    with pytest.raises(SystemExit) as fit:
        main(["fit-paths", "--warehouse", cfg.warehouse, "--name", cfg.name, "--set", f"embed.model={cfg.embed.model}", *args])
    assert fit.value.code == 2 and capsys.readouterr().err.strip() == f"kgwalk: error: {error}"
