"""Query side beyond the paper's plain Eq. 3: hybrid node search, the relation-path prior, the walk
budget, the Answerer and the harness's LLM scores, over a small corpus built in this process."""

import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import corpus
from kgwalk.cli import main
from kgwalk.errors import KgwalkError
from kgwalk.eval.metaqa import load_questions, score_retrieval
from kgwalk.query import Answerer, Retriever
from kgwalk.query.answer import PAPER_ANSWER_SYSTEM_PROMPT, is_refusal
from kgwalk.query.lexicon import EntityLexicon
from kgwalk.query.paths import PRIOR_TABLE, Example, PathPrior, fit_path_prior, masked_question, read_examples
from kgwalk.storage import read_table, write_table

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample" / "metaqa_sample.txt"


def triples():
    return [tuple(line.split("|")) for line in SAMPLE.read_text().splitlines() if line]


def lexicon_of(labels):
    return EntityLexicon(pa.table({"id": list(range(len(labels))), "label": labels}))


def test_lexicon_finds_named_entities_brackets_first_longest_first():
    lex = lexicon_of(["Kismet", "Drama", "drama", "The Lord of the Rings", "Rings", "Ocean's Eleven", "1990"])
    # brackets are the user naming the entity: only they count when present
    assert [m.entity for m in lex.mentions("is [Kismet] a Drama")] == [0]
    assert lex.mentions("is [Kismet] a Drama")[0].bracketed
    # case-insensitive: 'Drama' is found; 'drama', lowercase in a KG of capitalized names, is a
    # common word (a tag) and only counts when nothing else is named
    assert [m.entity for m in lex.mentions("which drama films")] == [1]
    assert [m.entity for m in lexicon_of(["drama", "Kismet"]).mentions("which drama films")] == [0]
    # a span inside a longer match is not a mention of its own; punctuation at the edges is dropped
    assert [m.entity for m in lex.mentions("who wrote the lord of the rings?")] == [3]
    assert [m.entity for m in lex.mentions("Ocean's Eleven, released in 1990")] == [5, 6]
    assert lex.mentions("nothing known here") == []
    assert lex.mentions("[Unknown Film] and Kismet")[0].entity == 0  # an unknown bracket falls back to words
    # a possessive after a label's qualifier: the whole label, not the label less its qualifier and a year on its own
    dated = lexicon_of(["Kismet (1944 film)", "1944"])
    assert [m.entity for m in dated.mentions("Kismet (1944 film)'s director was born where?")] == [0]


def test_masked_question_keeps_only_the_shape():
    lex = lexicon_of(["Kismet", "Juarez"])
    assert masked_question("who directed [Kismet]", lex.mentions("who directed [Kismet]")) == "who directed E"
    assert masked_question("who directed Juarez", lex.mentions("who directed Juarez")) == "who directed E"
    # what led to the question is no part of its shape, nor a wh-word's contracted "is"
    told = "I saw Juarez last night and loved it — who's the director?"
    assert masked_question(told, lex.mentions(told)) == "who is the director?"


def test_hybrid_search_puts_the_named_entity_first(sample_corpus):
    cfg = sample_corpus
    movies = sorted({h for h, _, _ in triples()})[:40]
    dense = Retriever(corpus.config(Path(cfg.warehouse), SAMPLE, ["query.node_search=dense"]))
    hybrid = Retriever(cfg, embedder=dense.embedder)
    dense_top = hybrid_top = 0
    for movie in movies:
        question = f"which person wrote the screenplay of [{movie}]"
        dense_top += dense.retrieve(question, k_nodes=1).nodes[0].label == movie
        node = hybrid.retrieve(question, k_nodes=1).nodes[0]
        hybrid_top += node.label == movie and node.matched
    assert hybrid_top == len(movies)
    assert dense_top < len(movies)  # the hashing embedder misses some: hybrid earns its place
    plain = hybrid.retrieve("which person wrote the screenplay", k_nodes=2)
    assert not any(n.matched for n in plain.nodes)  # nothing named: dense alone
    dense.close()
    hybrid.close()


def director_examples():
    """'which films share a director with [M]' for every movie whose director made another film."""
    by_director, directors = defaultdict(set), defaultdict(set)
    for h, r, t in triples():
        if r == "directed_by":
            by_director[t].add(h)
            directors[h].add(t)
    lines = []
    for films in by_director.values():
        for film in sorted(films):
            if len(films) > 1 and len(directors[film]) == 1:
                lines.append(f"which films share a director with [{film}]\t" + "|".join(sorted(films - {film})))
    return lines


def test_path_prior_reranks_walks_to_the_questions_relation_path(sample_corpus, tmp_path):
    cfg = sample_corpus
    lines = director_examples()
    assert len(lines) >= 6
    qa = tmp_path / "qa.txt"
    qa.write_text("\n".join(lines[::2] + ["no topic here\tKismet", "who is [Nobody Known]\tKismet"]) + "\n")
    plain = Retriever(cfg)
    assert plain.rerank == "none"  # query.rerank=auto with no fitted prior: the paper's cosine order
    examples, skipped = read_examples(str(qa), plain.lexicon)
    assert skipped == 2 and len(examples) == len(lines[::2])
    table = fit_path_prior(cfg, examples, plain.embedder, plain.lexicon, plain.prior_model)
    assert table.num_rows == len(examples) and set(table.column("encoder").to_pylist()) == {cfg.embed.model}
    # every walk from the topic to an answer is an example's signature: the shared director always, a shared writer or actor too
    sigs = table.column("signatures").to_pylist()
    assert all("directed_by>|<directed_by" in s for s in sigs)
    write_table(cfg.table(PRIOR_TABLE), table)
    assert Retriever(cfg, embedder=plain.embedder).rerank == "paths"  # auto, once a prior is fitted
    reranked = Retriever(corpus.config(Path(cfg.warehouse), SAMPLE, ["query.rerank=paths", "query.rerank_weight=1.0", "serve.max_k=1000"]),
                         embedder=plain.embedder)
    held_out = load_questions(_write(tmp_path / "held.txt", lines[1::2]))
    plain_hits = reranked_hits = answerable = 0
    for q in held_out:
        result = reranked.retrieve(q.text)
        best = result.walks[0]
        reranked_hits += best.end_node in q.answers
        votes = reranked.prior.votes(reranked.embedder.encode([masked_question(q.text, reranked.lexicon.mentions(q.text))])[0])
        assert best.score == pytest.approx(best.cosine + 1.0 * votes.get(best.signature, 0.0))
        plain_hits += plain.retrieve(q.text).walks[0].end_node in q.answers
        # the corpus can answer it: walks.bfs_mode paths gives every topic its shared-director walk
        # (under `reached`, a film reached first through a shared actor or writer had none)
        answerable += any(w.signature == "directed_by>|<directed_by" for w in reranked.retrieve(q.text, k_nodes=1, k_walks=1000).walks)
    assert answerable == len(held_out)
    # the prior's examples also vote for a shared writer or actor where the director wrote or acted
    assert reranked_hits >= 0.85 * answerable and reranked_hits > plain_hits + 0.3 * len(held_out)
    plain.close()
    reranked.close()
    shutil.rmtree(cfg.table(PRIOR_TABLE))  # the module's other tests expect the paper's order under auto


def test_a_prior_encoder_of_its_own_encodes_what_the_prior_compares(sample_corpus, tmp_path):
    """query.prior_encoder: the walks and the question's search vector stay the embed model's; the masked question,
    the path questions and the fitted examples are the prior encoder's, and a prior fitted with one is refused by another."""
    cfg = sample_corpus
    own = ["query.prior_encoder=hashing-32"]
    synthetic = Retriever(corpus.config(Path(cfg.warehouse), SAMPLE, [*own, "query.rerank=synthetic"]))
    assert (synthetic.embedder.dim, synthetic.prior_embedder.dim, synthetic.prior_model) == (64, 32, "hashing-32")
    assert {v.shape[-1] for v in synthetic.prior.vectors["whole"].values()} == {32}
    result = synthetic.retrieve("which films share a director with [Kismet]")
    best = result.walks[0]
    assert best.score > best.cosine  # the prior's share, from 32-dimension vectors, on 64-dimension walk cosines
    # its texts are encoded on a thread while the walks are searched, into the vectors it would give at once
    assert "prior_embed" in result.timings_ms
    texts = synthetic.prior.question_texts("which films share a director with E")
    question, pending = synthetic._encode("which films share a director with Kismet", texts)
    assert question.shape == (64,) and np.array_equal(pending.result(), synthetic.prior_embedder.encode(texts))
    synthetic.close()
    qa = _write(tmp_path / "qa.txt", director_examples())
    with pytest.raises(SystemExit) as fit:
        main(["fit-paths", "--warehouse", cfg.warehouse, "--name", cfg.name, "--questions", str(qa),
              *[a for kv in [f"embed.model={cfg.embed.model}", *own] for a in ("--set", kv)]])
    assert fit.value.code == 0
    try:
        assert set(read_table(cfg.table(PRIOR_TABLE)).column("encoder").to_pylist()) == {"hashing-32"}
        fitted = Retriever(corpus.config(Path(cfg.warehouse), SAMPLE, [*own, "query.rerank=paths"]))
        assert fitted.retrieve("which films share a director with [Kismet]").walks
        fitted.close()
        with pytest.raises(KgwalkError, match="fitted with hashing-32's question vectors, not hashing-64's"):
            Retriever(corpus.config(Path(cfg.warehouse), SAMPLE, ["query.rerank=paths"])).retrieve("who directed [Kismet]")
    finally:
        shutil.rmtree(cfg.table(PRIOR_TABLE))  # the module's other tests expect the paper's order under auto


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n")
    return path


def _prior_table(rows: list[tuple[str, list[float], list[str]]], encoder: str) -> pa.Table:
    return pa.table({"question": [q for q, _, _ in rows], "vector": pa.array([v for _, v, _ in rows], pa.list_(pa.float32(), 2)),
                     "signatures": [s for _, _, s in rows], "encoder": [encoder] * len(rows)})


def test_a_fitted_prior_groups_its_examples_by_shape_and_is_read_anew_when_refitted(sample_corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the grouped prior goes to the table cache
    cfg = sample_corpus
    model = cfg.embed.model
    first = _prior_table([("who directed E", [1, 0], ["directed_by>"]), ("who directed E", [1, 0], ["directed_by>", "written_by>"]),
                          ("who wrote E", [0, 1], ["written_by>"])], model)
    write_table(cfg.table(PRIOR_TABLE), first)
    try:
        prior = PathPrior.load(cfg, model)
        assert prior.counts.tolist() == [2.0, 1.0]  # two shapes, the first asked twice
        assert prior.votes_of == [{"directed_by>": 1.5, "written_by>": 0.5}, {"written_by>": 1.0}]
        assert prior.votes(np.array([1.0, 0.0])) == pytest.approx(PathPrior.from_table(first).votes(np.array([1.0, 0.0])))
        assert list((tmp_path / "cache" / "kgwalk" / "tables").glob("path-prior-*.npz"))
        write_table(cfg.table(PRIOR_TABLE), _prior_table([("who starred in E", [1, 0], ["starred_actors>"])], model))
        assert PathPrior.load(cfg, model).votes_of == [{"starred_actors>": 1.0}]  # the new version, not the cached grouping
        write_table(cfg.table(PRIOR_TABLE), _prior_table([("who starred in E", [1, 0], ["starred_actors>"])], "hashing-32"))
        with pytest.raises(KgwalkError, match="fitted with hashing-32's question vectors"):
            PathPrior.load(cfg, model)
    finally:
        shutil.rmtree(cfg.table(PRIOR_TABLE))  # the module's other tests expect the paper's order under auto


def test_path_prior_needs_a_fit_and_examples(tmp_path):
    cfg = corpus.config(tmp_path, SAMPLE, ["query.rerank=paths"])
    with pytest.raises(KgwalkError, match="kgwalk fit-paths"):
        PathPrior.load(cfg, cfg.embed.model)
    with pytest.raises(KgwalkError, match="no examples"):
        PathPrior.from_table(pa.table({"question": pa.array([], pa.string()), "vector": pa.array([], pa.list_(pa.float32(), 2)),
                            "signatures": pa.array([], pa.list_(pa.string()))}))
    with pytest.raises(KgwalkError, match="query.rerank"):
        Retriever(corpus.config(tmp_path, SAMPLE, ["query.rerank=magic"]))
    assert Example("q", (1,), frozenset({2})).topics == (1,)


def test_walk_budget_keeps_the_best_walks_over_all_nodes(sample_corpus):
    cfg = sample_corpus
    full = Retriever(cfg).retrieve("who starred in [16 Blocks]", k_nodes=3, k_walks=3)
    budget = Retriever(corpus.config(Path(cfg.warehouse), SAMPLE, ["query.walk_budget=4"]))
    limited = budget.retrieve("who starred in [16 Blocks]", k_nodes=3, k_walks=3)
    assert [w.walk_id for w in limited.walks] == [w.walk_id for w in full.walks[:4]]
    assert set(limited.timings_ms) == {"lexicon", "embed", "node_search", "walk_search", "walk_records", "rerank", "answer_sets"}
    with pytest.raises(KgwalkError, match="max_question_chars"):
        budget.retrieve("x" * 5000)
    budget.close()


def test_a_question_embedded_by_another_model_is_refused_in_one_line(sample_corpus, capsys):
    cfg = sample_corpus  # built with hashing-64
    argv = ["query", "--warehouse", str(cfg.warehouse), "--name", cfg.name, "--set", "embed.model=hashing-32", "who starred in [16 Blocks]"]
    with pytest.raises(SystemExit) as exit:
        main(argv)
    err = capsys.readouterr().err
    assert exit.value.code == 2 and err.count("\n") == 1, err
    # refused from the state table's record, before the model loads (tests/test_query_model.py)
    assert "vectors were made with another embed.model than hashing-32" in err


class ScriptedModel:
    """A chat model answering from a script keyed by question text; records the prompts it saw."""

    def __init__(self, script):
        self.script, self.prompts = script, []

    def chat(self, conversations):
        self.prompts += conversations
        return [next((a for q, a in self.script.items() if q in c[1]["content"]), "") for c in conversations]


def test_answerer_builds_the_papers_prompt_and_detects_refusals(sample_corpus):
    cfg = sample_corpus
    model = ScriptedModel({"[16 Blocks]": "Richard Donner directed it.", "[3 Ring Circus]": "i don't know the answer"})
    answerer = Answerer(cfg, model=model)
    a = answerer.answer("who directed [16 Blocks]")
    assert a.answer == "Richard Donner directed it." and a.known
    system, user = model.prompts[0]
    assert system["content"] == PAPER_ANSWER_SYSTEM_PROMPT
    assert user["content"].startswith("Please answer the following question: who directed [16 Blocks].")
    assert all(w.text in user["content"] for w in a.retrieval.walks)
    assert a.timings_ms["llm"] >= 0 and a.timings_ms["total"] >= a.timings_ms["llm"]
    assert not answerer.answer("who directed [3 Ring Circus]").known
    assert not answerer.answer("who directed [A Double Life]").known  # an empty reply answers nothing
    for reply in ("I do not know the answer.", "I DON'T KNOW THE ANSWER", "Sorry, I don’t know the answer"):
        assert is_refusal(reply)
    assert not is_refusal("I know the answer: Kismet")
    with pytest.raises(KgwalkError, match="answer.backend"):
        Answerer(cfg)
    with pytest.raises(KgwalkError, match="answer.llm.base_url"):
        Answerer(corpus.config(Path(cfg.warehouse), SAMPLE, ["answer.backend=openai", "answer.llm.model=m"]))


def test_harness_scores_llm_answers_three_ways(sample_corpus, tmp_path):
    cfg = sample_corpus
    qa = _write(tmp_path / "qa.txt", ["who directed [16 Blocks]\tRichard Donner", "who directed [A Double Life]\tGeorge Cukor",
                                      "who directed [A Blueprint for Murder]\tAndrew L. Stone"])
    model = ScriptedModel({"[16 Blocks]": "It was richard donner.", "[A Double Life]": "I do not know the answer.",
                           "[A Blueprint for Murder]": "Alfred Hitchcock"})
    answerer = Answerer(cfg, model=model)
    s = score_retrieval(answerer.retriever, load_questions(qa), 1, answerer=answerer)
    assert s.answers == 3
    assert (s.hits1, s.accurate, s.hallucinated, s.missing) == pytest.approx((1 / 3, 1 / 3, 1 / 3, 1 / 3))
    assert s.topic_recall == 1.0 and s.context_recall == 1.0
    assert set(s.latency_ms) >= {"embed", "node_search", "walk_search", "retrieval", "llm"}
    assert s.latency_ms["retrieval"]["p99"] >= s.latency_ms["retrieval"]["p50"] > 0


def test_onnx_question_encoder_matches_torch_and_exports_once(tmp_path, monkeypatch):
    from kgwalk.embed.model import SentenceTransformerEmbedder, make_embedder
    from kgwalk.embed.onnx import OnnxEmbedder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    texts = ["who directed [Kismet]", "which films share a director with [Juarez]", "x", "a much longer question " * 40]
    reference = make_embedder("all-MiniLM-L6-v2", precision="float32").encode(texts)
    onnx = OnnxEmbedder("all-MiniLM-L6-v2")
    got = onnx.encode(texts)
    assert got.shape == reference.shape and np.min(np.sum(got * reference, axis=1)) > 0.99999
    (exported,) = (tmp_path / "kgwalk" / "onnx").glob("*.onnx")
    written = exported.stat().st_mtime_ns
    again = OnnxEmbedder("all-MiniLM-L6-v2")  # reuses the export
    assert exported.stat().st_mtime_ns == written and np.allclose(again.encode(texts), got, atol=1e-6)
    # a cached export loads without torch or sentence-transformers (a CLI question's encoder), to the same vectors
    lean = subprocess.run([sys.executable, "-c", "import sys, numpy as np; from kgwalk.embed.onnx import OnnxEmbedder; "
                           f"v = OnnxEmbedder('all-MiniLM-L6-v2').encode({texts!r}); np.save(sys.argv[1], v); "
                           "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))",
                           str(tmp_path / "lean.npy")], env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)},
                          check=True, stdout=subprocess.PIPE, text=True)
    assert lean.stdout.strip() == "[]" and np.allclose(np.load(tmp_path / "lean.npy"), got, atol=1e-6)
    assert onnx.encode([]).shape == (0, 384)
    # the retriever's question encoder follows query.encoder (the hashing stand-in has no model to
    # export); an unbuilt KG, as the sample corpus's hashing vectors would refuse MiniLM questions
    minilm = ["embed.model=all-MiniLM-L6-v2"]
    warehouse = tmp_path / "unbuilt"
    for overrides, kind in ((minilm, OnnxEmbedder), (minilm + ["query.encoder=torch"], SentenceTransformerEmbedder)):
        retriever = Retriever(corpus.config(warehouse, SAMPLE, overrides))
        assert isinstance(retriever.embedder, kind)
        if kind is OnnxEmbedder:  # a question encoder's threads sleep between runs, where the corpus embedder's spin
            spinning = "session.intra_op.allow_spinning"
            assert retriever.embedder.session.get_session_options().get_session_config_entry(spinning) == "0"
            assert onnx.session.get_session_options().get_session_config_entry(spinning) == "1"
        retriever.close()
    with pytest.raises(KgwalkError, match="query.encoder"):
        Retriever(corpus.config(tmp_path, SAMPLE, ["query.encoder=tensorrt"]))
