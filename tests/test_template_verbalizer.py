"""Template phrasing: a relation's forward and inverse phrases, fallbacks, whole walks as one sentence."""

import pyarrow as pa
import pytest

from kgwalk.config import VerbalizeConf, load_config
from kgwalk.errors import KgwalkError
from kgwalk.verbalize import TemplateVerbalizer, make_verbalizer
from kgwalk.verbalize.template import fallback_phrases


def test_phrase_map_forward_and_inverse():
    v = TemplateVerbalizer({"directed_by": ["was directed by", "directed"]})
    assert v.sentence(["Kismet", "William Dieterle"], ["directed_by"], [False]) == "Kismet was directed by William Dieterle."
    assert v.sentence(["William Dieterle", "Kismet"], ["directed_by"], [True]) == "William Dieterle directed Kismet."


def test_multi_step_sentence_is_one_sentence():
    v = TemplateVerbalizer({"directed_by": ["was directed by", "directed"]})
    text = v.sentence(["Kismet", "William Dieterle", "Juarez", "Drama"], ["directed_by", "directed_by", "has_genre"], [False, True, False])
    assert text == "Kismet was directed by William Dieterle, which directed Juarez, which has genre Drama."


@pytest.mark.parametrize(
    "relation,forward,inverse",
    [
        ("directed_by", "was directed by", "directed"),
        ("release_year", "has release year", "is the release year of"),
        ("has_genre", "has genre", "is the genre of"),
        ("in_language", "is in language", "is the language of"),
        ("capitalOf", "is the capital of", "has capital"),
    ],
)
def test_fallback_phrases(relation, forward, inverse):
    assert fallback_phrases(relation) == (forward, inverse)


def test_verbalize_arrow_batch():
    walks = pa.table(
        {"node_labels": [["A", "B"], ["B", "A"]], "rel_labels": [["written_by"], ["written_by"]], "inverse": [[False], [True]]}
    )
    sentences, source = make_verbalizer(VerbalizeConf()).verbalize(walks)
    assert sentences.to_pylist() == ["A was written by B.", "B wrote A."]
    assert source.to_pylist() == ["template", "template"]
    with pytest.raises(KgwalkError, match="unknown verbalizer"):  # refused as the config loads
        make_verbalizer(load_config(None, ["verbalize.verbalizer=gpt"]).verbalize)


def test_a_batch_column_wise_and_a_few_walks_one_by_one_make_the_same_sentences():
    """TemplateVerbalizer.sentences makes a batch's sentences column-wise, and fewer than FEW_WALKS one `sentence` at a
    time: the same sentences either way, for walks of every length and direction, phrases with `{}` and without."""
    import random

    from kgwalk.verbalize.template import FEW_WALKS

    rng = random.Random(5)
    v = TemplateVerbalizer({"directed_by": ["was directed by", "directed"], "plays_for": ["is the country {} plays for", "has player {}"]})
    relations, names = ["directed_by", "plays_for", "has_genre", "people.person.gender"], ["Kismet", "Brazil", "O'Brien", "Café Müller", "", "3.14"]
    walks = []
    for _ in range(3 * FEW_WALKS):
        steps = rng.randint(0, 3)
        walks.append({"node_labels": [rng.choice(names) for _ in range(steps + 1)], "rel_labels": [rng.choice(relations) for _ in range(steps)],
                      "inverse": [rng.random() < 0.5 for _ in range(steps)]})
    batch = pa.Table.from_pylist(walks)
    expected = [v.sentence(w["node_labels"], w["rel_labels"], w["inverse"]) for w in walks]
    assert v.sentences(batch).to_pylist() == expected
    assert [t for start in range(0, len(walks), FEW_WALKS // 2) for t in v.sentences(batch.slice(start, FEW_WALKS // 2)).to_pylist()] == expected
    assert any("plays for" in t for t in expected) and any(", which " in t for t in expected)
