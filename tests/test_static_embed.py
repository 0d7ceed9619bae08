"""Static embedders (model2vec): distilled once and cached (concurrent and broken caches too), the
same vectors from the embed stage and the question encoder, a build, a CLI query without torch,
and a refresh that equals a full build. One distillation of all-MiniLM-L6-v2 serves the session."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from conftest import TINY_KG
from corpus import build_in_process, config, corpus, embedder_output_matches
from test_embed import SENTENCES
from test_refresh import random_changes, random_kg, random_spec, write_pipe

from kgwalk.config import load_config
from kgwalk.embed.model import make_embedder, resolve_model
from kgwalk.embed.pipeline import arrow_to_vectors, block_rows, embed_texts
from kgwalk.embed.static import StaticEmbedder, cache_entry, distilled_model, is_static
from kgwalk.errors import KgwalkError
from kgwalk.index.store import collection_names, open_store
from kgwalk.refresh.job import run_refresh
from kgwalk.storage import read_table, write_table

DISTILLING = "[kgwalk] distilling a static model"
# Modules a static question encoder must not load (each costs seconds at a CLI query's start).
HEAVY = ("torch", "transformers", "onnxruntime", "sentence_transformers")


@pytest.fixture(scope="session")
def static_cache(tmp_path_factory) -> Path:
    """An XDG cache folder holding `static` (all-MiniLM-L6-v2 distilled), made once per session."""
    xdg = tmp_path_factory.mktemp("xdg")
    distilled_model("all-MiniLM-L6-v2", xdg / "kgwalk" / "static")
    return xdg


@pytest.fixture()
def static_env(static_cache, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(static_cache))
    return static_cache


@pytest.fixture(scope="session")
def tiny_source(tmp_path_factory) -> str:
    """A real but tiny BERT (random weights, MiniLM's tokenizer): distilled in seconds, for the
    cache tests that distill more than once."""
    import torch
    from transformers import BertConfig, BertModel

    folder = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
    BertModel(config).save_pretrained(folder)
    minilm = Path(resolve_model("all-MiniLM-L6-v2"))
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(minilm / name, folder / name)
    return str(folder)


def cache_listing(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if not p.name.endswith(".lock"))


def test_static_model_is_distilled_once_then_read_from_the_cache(static_env, capfd):
    root = static_env / "kgwalk" / "static"
    entry = cache_entry("all-MiniLM-L6-v2", root)
    written = (entry / "model.safetensors").stat().st_mtime_ns
    embedder = make_embedder("static")
    assert isinstance(embedder, StaticEmbedder) and embedder.dim == 256 and embedder.batch_size == 1024
    assert DISTILLING not in capfd.readouterr().err
    assert (entry / "model.safetensors").stat().st_mtime_ns == written and cache_listing(root) == [entry.name]
    vectors = embedder.encode(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 256) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    question = embedder.encode(["who directed Kismet"])[0]
    assert question @ vectors[0] > max(question @ vectors[2], question @ vectors[4]) + 0.1  # a model, not noise
    # a sentence's vector does not depend on its batch (a refresh embeds a subset)
    assert np.array_equal(np.concatenate([embedder.encode([s]) for s in SENTENCES]), vectors)
    assert embedder.encode([]).shape == (0, 256)
    for same in ("static:all-MiniLM-L6-v2", str(entry), f"static:{entry}"):  # distilled by name, or the folder as is
        assert is_static(same) and np.array_equal(make_embedder(same).encode(SENTENCES), vectors)
    assert not is_static("all-MiniLM-L6-v2") and not is_static(resolve_model("all-MiniLM-L6-v2"))


def test_static_settings_that_cannot_work_are_one_line_errors(static_env, tmp_path):
    assert block_rows(load_config(None, ["embed.model=static"]).embed) == 131072  # seconds of work a block, not 4,096 rows
    with pytest.raises(KgwalkError, match="runs on the CPU"):
        make_embedder("static", device="cuda")
    with pytest.raises(KgwalkError, match="precision=int8 applies to transformer models"):
        make_embedder("static", precision="int8")
    with pytest.raises(KgwalkError, match="got 'static:'"):
        make_embedder("static:")
    with pytest.raises(KgwalkError, match="no model folder at"):
        make_embedder(f"static:{tmp_path / 'no-such-model'}")
    with pytest.raises(KgwalkError, match="cannot distill 'no-such-model'"):  # not a folder, and not on the (offline) Hub
        make_embedder("static:no-such-model")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text('{"model_type": "model2vec"}')
    with pytest.raises(KgwalkError, match="cannot load the static model"):
        make_embedder(str(tmp_path / "broken"))
    root = static_env / "kgwalk" / "static"
    assert cache_listing(root) == [cache_entry("all-MiniLM-L6-v2", root).name]  # nothing cached for a failure


def test_concurrent_first_uses_distill_once(tiny_source, tmp_path):
    """Three processes asking for the same model at once: one distills, the others wait for it and
    load its result; the cache ends with one entry and no temporary folders."""
    root = tmp_path / "cache"
    go = tmp_path / "go"
    script = (
        "import sys, time, pathlib, hashlib\n"
        "from kgwalk.embed.static import StaticEmbedder\n"
        "pathlib.Path(sys.argv[1]).touch()\n"
        "while not pathlib.Path(sys.argv[2]).exists(): time.sleep(0.01)\n"
        f"v = StaticEmbedder('static:' + sys.argv[3], cache=pathlib.Path(sys.argv[4])).encode({SENTENCES!r})\n"
        "print(hashlib.sha256(v.tobytes()).hexdigest(), v.shape[1])\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path / f"ready{i}"), str(go), tiny_source, str(root)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(3)]
    while not all((tmp_path / f"ready{i}").exists() for i in range(3)):  # all imported: they ask at the same moment
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.01)
    go.touch()
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert sum(err.count(DISTILLING) for _, err in outs) == 1
    assert len({out for out, _ in outs}) == 1 and outs[0][0].split()[1] == "32"  # hidden size 32: PCA keeps 32
    assert cache_listing(root) == [cache_entry(f"{tiny_source}", root).name]


def test_a_broken_cache_entry_is_distilled_again(tiny_source, tmp_path, capfd):
    root = tmp_path / "cache"
    source = f"static:{tiny_source}"
    reference = StaticEmbedder(source, cache=root).encode(SENTENCES)
    assert capfd.readouterr().err.count(DISTILLING) == 1
    entry = cache_entry(tiny_source, root)
    weights = entry / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])  # truncated
    assert np.allclose(StaticEmbedder(source, cache=root).encode(SENTENCES), reference, atol=1e-6)
    (entry / "tokenizer.json").unlink()  # partial
    assert np.allclose(StaticEmbedder(source, cache=root).encode(SENTENCES), reference, atol=1e-6)
    assert capfd.readouterr().err.count(DISTILLING) == 2
    assert cache_listing(root) == [entry.name]
    StaticEmbedder(source, cache=root)
    assert DISTILLING not in capfd.readouterr().err  # healthy again


def test_embed_stage_and_question_encoder_give_the_same_vectors(static_env, tmp_path):
    """The Ray stage (the model shipped from the driver to the actors) and the retriever's encoder."""
    from kgwalk.query.retriever import Retriever

    cfg = load_config(None, ["embed.model=static", "query.encoder=onnx"], name="t", warehouse=str(tmp_path))
    texts = [SENTENCES[i % len(SENTENCES)] + f" ({i})" for i in range(600)]
    write_table(cfg.table("texts"), pa.table({"walk_id": np.arange(600, dtype=np.int64), "text": texts,
                                              "text_id": np.arange(600, dtype=np.int64) * 7}))
    assert embed_texts(cfg) == 600
    written = read_table(cfg.table("vectors")).sort_by("walk_id")
    retriever = Retriever(cfg)
    assert isinstance(retriever.embedder, StaticEmbedder)  # not ONNX Runtime, whatever query.encoder says
    assert np.array_equal(arrow_to_vectors(written["vector"]), retriever.embedder.encode(texts))
    retriever.close()
    with pytest.raises(KgwalkError, match="runs on the CPU"):  # refused before Ray or any actor
        embed_texts(load_config(None, ["embed.model=static", "embed.device=cuda"], name="t", warehouse=str(tmp_path)))


def test_token_ids_taken_a_word_at_a_time_give_the_models_own_vectors(static_env):
    """StaticEmbedder tokenizes ASCII sentences a word at a time from a cache (kgwalk.embed.static.WordPieces), others
    through the tokenizer: the vectors are model2vec's own encode's for every kind of text, a sentence's the same
    alone as in any batch, and the same again after its cache was emptied mid-batch."""
    from kgwalk.embed.common import unit_rows

    embedder = StaticEmbedder("static")
    assert embedder._pieces is not None  # MiniLM's BERT tokenizer
    texts = [*SENTENCES, "", "   ", "Café Müller (1985 film) — 東京物語", "x" * 3000, "a\x00b\tc\nd\x7fe", "word " * 700, "a [UNK] b [PAD] c",
             "AT&T's 2nd-best (film)!", "e.g. U.S.A. ~#1", "y" * 150, "Olène Ashaett (actor)", "Ñandú in São Tomé, naïve FAÇADE",
             "Zoë [ÚNK] x", "Ærø ßtraße đ", "é" * 3000, "Kismet directed by William Dieterle, which directed The Devil and Daniel Webster"]
    reference = unit_rows(np.asarray(embedder.model.encode(texts, normalize=False, use_multiprocessing=False), np.float32))
    got = embedder.encode(texts)
    assert np.allclose(got, reference, atol=1e-6)
    assert all(np.array_equal(embedder.encode([text])[0], got[i]) for i, text in enumerate(texts))
    embedder._pieces.max_words = 5  # every batch overflows the cache
    assert np.array_equal(embedder.encode(texts[::-1]), got[::-1])
    assert embedder.learn_words(pa.array(texts)) == 0  # more words than half its room: none learned

    fresh = StaticEmbedder("static")  # words learned ahead (a retriever's warm-up): no tokenizer call for an ASCII text
    ascii_texts = [t for t in texts if t.isascii() and "[" not in t and len(t) < 1000]  # (a longer one is cut inside a word)
    assert fresh.learn_words(pa.array([*ascii_texts, None, "東京"])) > 10
    calls: list[int] = []
    real_tokenize = fresh.model.tokenize
    fresh.model.tokenize = lambda batch: calls.append(len(batch)) or real_tokenize(batch)
    assert np.array_equal(fresh.encode(ascii_texts), embedder.encode(ascii_texts)) and calls == []


def label_kinds_walks():
    """(labels, verbalizer, walks): template walks over every kind of label and phrase a walk's vector is summed from."""
    from kgwalk.verbalize.template import TemplateVerbalizer
    from kgwalk.walks.labels import LabelLookup

    names = ["Kismet", "Vincente Minnelli", "Café Müller (1985 film)", "東京物語", "AT&T's 2nd-best", "O'Brien", "a [UNK] b", "",
             "word " * 700, "tab\tand\nnewline", "3.14", "Blonde Venus"]
    relations = ["directed_by", "plays_for_country", "partner_of", "glued", "in_language"]
    phrases = {"partner_of": ["is {}'s partner", "has partner"], "glued": ["pre{}post", "is glued to"]}
    labels = LabelLookup(pa.table({"id": pa.array(range(100, 100 + len(names)), pa.int64()), "label": names}),
                         pa.table({"id": pa.array([-7, 3, 5, 9, 11], pa.int64()), "label": relations}))
    rel = dict(zip(relations, [-7, 3, 5, 9, 11]))
    steps = [  # (nodes, relations, inverse)
        ([100, 101], ["directed_by"], [False]), ([101, 100, 111], ["directed_by", "directed_by"], [True, False]),
        ([102, 103, 104], ["plays_for_country", "in_language"], [False, True]), ([105, 106], ["partner_of"], [False]),
        ([106, 107, 105], ["partner_of", "plays_for_country"], [True, True]), ([109, 110], ["in_language"], [False]),
        ([100, 101], ["glued"], [False]), ([101, 100], ["glued"], [True]), ([100, 108], ["directed_by"], [False]), ([111], [], []),
    ]
    walks = pa.table({"walk_id": pa.array(range(len(steps)), pa.int64()), "kind": ["bfs"] * len(steps),
                      "nodes": pa.array([n for n, _, _ in steps], pa.list_(pa.int64())),
                      "rels": pa.array([[rel[r] for r in rs] for _, rs, _ in steps], pa.list_(pa.int64())),
                      "inverse": pa.array([inv for _, _, inv in steps], pa.list_(pa.bool_()))})
    return labels, TemplateVerbalizer(phrases), walks


def test_walk_vectors_summed_from_labels_and_phrases_are_the_models_vectors_of_their_sentences(static_env):
    """kgwalk.query.walk_sums: a template walk's vector summed from its labels' and phrases' token sums is model2vec's
    vector of its sentence, for every kind of label; walks whose phrase meets a label inside a word, or longer than
    the model reads, are embedded from their sentences, and only those."""
    from kgwalk.embed.common import unit_rows
    from kgwalk.query.walk_sums import WalkSums

    labels, verbalizer, walks = label_kinds_walks()
    embedder = StaticEmbedder("static")
    texts = verbalizer.sentences(labels.attach(walks)).to_pylist()
    whole: list[list[int]] = []
    got = WalkSums(embedder, labels, verbalizer).vectors(walks, lambda rows: whole.append(rows.tolist()) or [texts[r] for r in rows])
    reference = unit_rows(np.asarray(embedder.model.encode(texts, normalize=False, use_multiprocessing=False), np.float32))
    assert np.allclose(got, reference, atol=1e-6)
    assert whole == [[6, 8]]  # "pre{}post" forward (its inverse phrase splits), and the label of 700 words (past the 512 tokens the model reads)
    assert texts[3] == "O'Brien is a [UNK] b's partner." and texts[9] == "Blonde Venus."


def test_segment_sums_add_each_run_in_order_as_a_loop_over_it_would():
    """walk_sums._segment_sums, which sums runs longest first: each run's rows added in order from zero, float for float
    as a loop per run adds them (a walk's vector must not depend on the other walks it is summed with); a run of none
    is zero."""
    from kgwalk.query.walk_sums import _segment_sums

    rng = np.random.default_rng(7)
    table = rng.standard_normal((40, 16)).astype(np.float32)
    counts = rng.integers(0, 5, 300)
    rows = rng.integers(0, len(table), int(counts.sum()))
    expected = np.zeros((len(counts), 16), np.float32)
    for run, (start, count) in enumerate(zip(np.cumsum(counts) - counts, counts)):
        for row in rows[start : start + count]:
            expected[run] += table[row]
    assert np.array_equal(_segment_sums(table, rows, counts), expected)
    assert _segment_sums(table, rows[:0], counts[:0]).shape == (0, 16)


def test_label_parts_kept_across_calls_give_the_same_vectors_and_stay_within_their_bound(static_env):
    """A WalkSums keeps its labels' token sums across calls (kgwalk.query.walk_sums.LabelParts): walks summed from kept
    parts, from parts all summed at once beforehand, from a cache emptied when full, and from one too small for a call's
    labels get the vectors of a WalkSums that keeps none, and it never keeps more labels than its bound."""
    from kgwalk.query.walk_sums import WalkSums

    labels, verbalizer, walks = label_kinds_walks()
    embedder = StaticEmbedder("static")
    texts = verbalizer.sentences(labels.attach(walks)).to_pylist()
    sentences = lambda part: lambda rows: [texts[part[r]] for r in rows]  # noqa: E731
    parts = [[0, 1, 2], [1, 3, 4], [0, 1, 2], [5, 6, 7, 8, 9], list(range(walks.num_rows)), [9, 3]]
    fresh = [WalkSums(embedder, labels, verbalizer, max_labels=0).vectors(walks.take(p), sentences(p)) for p in parts]
    for bound, every_label in ((100, False), (100, True), (6, False), (3, False)):
        kept = WalkSums(embedder, labels, verbalizer, max_labels=bound)
        if every_label:  # as walk_encoder(every_label=True) does: all of them summed in one call, before any walk
            kept.label_parts.of(labels.entity_ids)
            assert len(kept.label_parts) == len(labels.entity_ids)
        for part, expected in zip(parts, fresh):
            assert np.array_equal(kept.vectors(walks.take(part), sentences(part)), expected)
            assert len(kept.label_parts) <= bound
        assert len(kept.label_parts) > 0


def test_a_refresh_that_relabels_an_entity_scores_its_walks_by_the_new_label(static_env, tmp_path):
    """A retriever's walk vectors summed from labels kept across questions (query.walk_search=graph) are of the records'
    versions: once a refresh relabels an entity, its walks read and score as their new sentences."""
    from kgwalk.query import Retriever

    edges = [("kismet", "directed_by", "dieterle"), ("kismet", "starred_actors", "dietrich"), ("devil", "directed_by", "dieterle")]
    names = {"kismet": "Kismet", "dieterle": "William Dieterle", "dietrich": "Marlene Dietrich", "devil": "The Devil and Daniel Webster"}

    def kg(path: Path, renamed: dict[str, str]) -> Path:
        label = "<http://www.w3.org/2000/01/rdf-schema#label>"
        path.write_text("".join(f"<http://x/{h}> <http://x/{r}> <http://x/{t}> .\n" for h, r, t in edges)
                        + "".join(f'<http://x/{e}> {label} "{n}" .\n' for e, n in (names | renamed).items()))
        return path

    settings = ["embed.model=static", "query.walk_search=graph", "query.node_search=dense", "query.rerank=none", "query.hub_walks=index"]
    cfg = config(tmp_path, kg(tmp_path / "kg.nt", {}), settings)
    build_in_process(cfg)
    retriever = Retriever(cfg)
    try:
        question = "who directed Kismet"
        q = retriever.embedder.encode([question])[0]
        for renamed in ({}, {"dieterle": "Wilhelm Dieterle"}):
            if renamed:
                run_refresh(cfg, str(kg(tmp_path / "relabel.nt", renamed)), snapshot=True)
            walks = [w for n in retriever.retrieve(question, k_nodes=2, k_walks=4).nodes for w in n.walks]
            texts = [w.text for w in walks]
            assert any(names["dieterle"] in t for t in texts) != bool(renamed) and any("Wilhelm Dieterle" in t for t in texts) == bool(renamed)
            assert np.allclose([w.score for w in walks], retriever.embedder.encode(texts) @ q, atol=1e-6)
    finally:
        retriever.close()


def test_build_and_cli_query_with_a_static_model_load_no_torch(static_env, spark, tmp_path):
    from kgwalk.index.store import collection_names, open_store
    from kgwalk.stages import run_build

    cfg = load_config(None, ["embed.model=static", "ray.num_cpus=2"], name="tiny", warehouse=str(tmp_path), **{"kg.path": str(TINY_KG)})
    report = run_build(cfg)
    assert read_table(cfg.table("vectors")).num_rows == 0  # a static model's vectors are embedded by the index, not stored
    store = open_store(cfg)
    assert report.walks == store.count(collection_names(cfg)[1]) > 0
    _, vectors, _ = store.retrieve(collection_names(cfg)[0], read_table(cfg.table("entities"), ["id"]).column("id").to_numpy())
    store.close()
    assert vectors.shape[1] == 256 and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "kgwalk.cli", "query", "--name", "tiny", "--warehouse", str(tmp_path),
         "--set", "embed.model=static", "--set", "query.prior_encoder=embed", "--json", "who directed Kismet"],
        check=False, capture_output=True, text=True, env=dict(os.environ, HF_HUB_OFFLINE="1"), timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    payload = json.loads(out.stdout)
    assert payload["nodes"][0]["label"] == "Kismet"
    # among Kismet's top 3 walks (the default k_walks); a static model ranks it below MiniLM does
    assert any(["Kismet", "directed_by", "William Dieterle"] in w["triples"] for w in payload["nodes"][0]["walks"])
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    # the static model as its own prior encoder: no transformer runtime at all (by default the prior's few texts a
    # question are MiniLM's on ONNX Runtime, still without torch: tests/test_query_model.py)
    assert "model2vec" in imported and not imported & set(HEAVY)


def test_refresh_with_a_static_model_equals_a_full_build(static_env, tmp_path):
    """tests/test_refresh.py's property (incremental refresh == full build), one seed, static vectors:
    the index's fixed-point node sums and 256-dimension points, bit for bit."""
    rng = np.random.default_rng(1003)
    overrides = random_spec(rng) + ["embed.model=static"]
    triples = random_kg(rng)
    refreshed = config(tmp_path / "refreshed", write_pipe(tmp_path / "old.txt", triples), overrides)
    build_in_process(refreshed)
    ops, triples = random_changes(rng, triples)
    report = run_refresh(refreshed, str(write_pipe(tmp_path / "changes.txt", ops)))
    assert report.verbalized == report.embedded == report.walks_added > 0
    expected = config(tmp_path / "full", write_pipe(tmp_path / "new.txt", triples), overrides)
    build_in_process(expected)
    assert corpus(refreshed) == corpus(expected)
    assert embedder_output_matches(refreshed)
    store = open_store(refreshed)
    _, vectors, _ = store.retrieve(collection_names(refreshed)[1], read_table(refreshed.table("walks"), ["walk_id"]).column("walk_id").to_numpy())
    store.close()
    assert vectors.shape[1] == 256
