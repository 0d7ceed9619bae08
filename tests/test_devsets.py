"""The development-set generator (kgwalk/eval/devsets.py) on a tiny KB: answers are what the
relation path reaches, a conjunction's what both reach, and the files read back as questions."""

from typing import get_args

import numpy as np
import pytest

from kgwalk.errors import KgwalkError
from kgwalk.eval.dev_templates import IDS, METAQA_REWORDINGS, OPAQUE, metaqa_sets
from kgwalk.eval.devsets import (ANY, Conjunction, DevSet, Kb, Kind, PathQuestions, Wordings, conjunction_questions, generate, path, path_questions, step,
                                 worded)
from kgwalk.eval.football import FOOTBALL_REWORDINGS
from kgwalk.eval.people import PEOPLE_REWORDINGS, people_sets
from kgwalk.eval.questions import read_question_lines
from kgwalk.kg.relations import relation_words, wikidata_property_labels

TRIPLES = [
    ("Kismet (1944 film)", "directed_by", "William Dieterle"),
    ("Juarez", "directed_by", "William Dieterle"),
    ("Salome", "directed_by", "William Dieterle"),
    ("Arizona Dream", "directed_by", "Emir Kusturica"),
    ("Kismet (1944 film)", "starred_actors", "Ronald Colman"),
    ("Juarez", "starred_actors", "Paul Muni"),
    ("Salome", "starred_actors", "Paul Muni"),
    ("Salome", "starred_actors", "Rita Hayworth"),
    ("Arizona Dream", "starred_actors", "Paul Muni"),
    ("William Dieterle", "born_in", "Ludwigshafen"),
    ("Emir Kusturica", "born_in", "Sarajevo"),
    ("Ludwigshafen", "located_in", "Germany"),
]
KB = Kb(TRIPLES)
SAME_DIRECTOR = PathQuestions("same director", path(ANY, "directed_by>", "<directed_by"), (("plain", "what else did the director of {e} make?"),))
DIRECTOR_COUNTRY = PathQuestions("director's country", path(ANY, "directed_by>", "born_in>", "located_in>"),
                                 (("nested", "the country of the birthplace of the director of {e}"),))
DIRECTED_AND_STARRED = Conjunction("directed and starred", path(ANY, "<directed_by"), path(ANY, "<starred_actors"),
                                   (("plain", "which films did {a} direct that {b} starred in?"),))


def test_a_path_reaches_its_answers_never_through_the_topic_again():
    assert KB.reach("Juarez", SAME_DIRECTOR.path) == {"Kismet (1944 film)", "Salome"}  # Juarez itself is no answer
    assert KB.reach("Juarez", DIRECTOR_COUNTRY.path) == {"Germany"}
    assert KB.reach("Arizona Dream", DIRECTOR_COUNTRY.path) == set()  # Sarajevo is in no country here
    films_of_actors = path(Kind(r"^Paul"), "<starred_actors", step("directed_by>", Kind(has=("born_in>",))))
    assert KB.starts(films_of_actors) == ["Paul Muni"]  # the start kind: labels matching ^Paul
    assert KB.reach("Paul Muni", films_of_actors) == {"William Dieterle", "Emir Kusturica"}
    # no node twice, as a walk goes: the actors of the other films of Juarez's actor Paul Muni are Rita Hayworth, not
    # Paul Muni again; the director of the other films of Salome's director is no answer at all
    assert KB.reach("Juarez", path(ANY, "starred_actors>", "<starred_actors", "starred_actors>")) == {"Rita Hayworth"}
    assert KB.reach("Salome", path(ANY, "directed_by>", "<directed_by", "directed_by>")) == set()


def test_a_path_through_a_hub_is_passed_over():
    """Walks never pass through a node of more than walks.hub_degree edges: William Dieterle has 4 (three films, a
    birthplace), so with a hub degree of 3 no question may go through him, while one ending at him may."""
    assert KB.degree["William Dieterle"] == 4 and not KB.through_hub("Juarez", SAME_DIRECTOR.path, None)
    assert KB.through_hub("Juarez", SAME_DIRECTOR.path, 3) and not KB.through_hub("Juarez", SAME_DIRECTOR.path, 4)
    assert path_questions(KB, SAME_DIRECTOR, 10, np.random.default_rng(0), hub_degree=3) == []
    ends_at_hub = PathQuestions("director", path(ANY, "directed_by>"), (("terse", "who directed {e}?"),))
    assert len(path_questions(KB, ends_at_hub, 10, np.random.default_rng(0), hub_degree=3)) == 4


def test_a_reversed_path_walks_the_same_edges_back():
    forward = path(Kind(r"film"), step("directed_by>", Kind(r"Dieterle")), "born_in>")
    back = forward.reversed()
    assert [s.signature for s in back.steps] == ["<born_in", "<directed_by"]
    assert back.start == Kind() and back.steps[0].lands == Kind(r"Dieterle") and back.steps[1].lands == Kind(r"film")
    assert KB.reach("Ludwigshafen", back) == {"Kismet (1944 film)"}  # the only film of the three with "film" in its label


def test_path_questions_keep_topics_with_one_to_max_answers():
    questions = path_questions(KB, SAME_DIRECTOR, 10, np.random.default_rng(0))
    by_topic = {q.topics[0]: q.answers for q in questions}
    assert by_topic == {"Kismet (1944 film)": ("Juarez", "Salome"), "Juarez": ("Kismet (1944 film)", "Salome"),
                        "Salome": ("Juarez", "Kismet (1944 film)")}  # Arizona Dream: its director made nothing else
    assert {q.group for q in questions} == {"2-hop"}
    assert path_questions(KB, SAME_DIRECTOR, 10, np.random.default_rng(0), max_answers=1) == []
    line = next(q for q in questions if q.topics == ("Juarez",)).line()
    assert line == "what else did the director of [Juarez] make?\tKismet (1944 film)|Salome"


def test_a_conjunction_s_answers_are_what_both_topics_reach():
    """Dieterle directed three films and Paul Muni starred in three: together they narrow them to two. Colman and
    Hayworth starred in one Dieterle film each, which Dieterle's name adds nothing to; Kusturica made one film."""
    found = {(q.topics, q.answers) for seed in range(10) for q in conjunction_questions(KB, DIRECTED_AND_STARRED, 10, np.random.default_rng(seed))}
    assert found == {(("William Dieterle", "Paul Muni"), ("Juarez", "Salome"))}
    (q,) = conjunction_questions(KB, DIRECTED_AND_STARRED, 10, np.random.default_rng(next(
        seed for seed in range(10) if conjunction_questions(KB, DIRECTED_AND_STARRED, 10, np.random.default_rng(seed)))))
    assert q.group == "conj" and q.line() == "which films did [William Dieterle] direct that [Paul Muni] starred in?\tJuarez|Salome"


def test_a_set_s_files_split_by_topic_and_read_back_as_questions(tmp_path):
    questions = generate(KB, [SAME_DIRECTOR, DIRECTOR_COUNTRY], [DIRECTED_AND_STARRED], seed=3, per_path=10, per_conjunction=5)
    assert questions == generate(KB, [SAME_DIRECTOR, DIRECTOR_COUNTRY], [DIRECTED_AND_STARRED], seed=3, per_path=10, per_conjunction=5)
    renamed = DevSet("tiny", TRIPLES, questions, seed=3, relation=str.upper, label=lambda s: s.replace(" ", "_"))
    folder = renamed.write(tmp_path)
    assert (folder / "kb.txt").read_text().splitlines()[0] == "Kismet_(1944_film)|DIRECTED_BY|William_Dieterle"
    dev, held = (read_question_lines(folder / f"{split}.txt") for split in ("dev", "held"))
    assert len(dev) + len(held) == sum(q.group != "conj" for q in questions)
    assert not {t for q in dev for t in q.topics} & {t for q in held for t in q.topics}  # no topic in both splits
    by_hops = sum(len(read_question_lines(f)) for f in folder.glob("*-[0-9]hop.txt"))
    assert by_hops == len(dev) + len(held)
    conj = [line for f in folder.glob("*-conj.txt") for line in read_question_lines(f)]
    assert [(c.topics, c.answers) for c in conj] == [(("William_Dieterle", "Paul_Muni"), ("Juarez", "Salome"))]
    stats = renamed.stats()
    assert stats["kb"] == {"edges": 12, "entities": 12, "relations": 4}
    assert sum(stats["questions"]["dev by group"].values()) + sum(stats["questions"]["held by group"].values()) == len(questions)


def test_metaqa_s_id_twins_rename_every_relation_one_to_wikidata_s_words_the_other_to_none(tmp_path):
    metaqa_kb = [(h, r, t) for h, r, t in TRIPLES if r in OPAQUE] + [("Juarez", r, "x") for r in OPAQUE if r not in ("directed_by", "starred_actors")]
    sets = {s.name: s for s in metaqa_sets(metaqa_kb, 0, per_path=5, per_conjunction=5, hub_degree=None)}
    assert list(sets) == ["metaqa-dotted", "metaqa-opaque", "metaqa-upper", "metaqa-ids"]
    assert sets["metaqa-ids"].questions == sets["metaqa-opaque"].questions == sets["metaqa-dotted"].questions
    kb = (sets["metaqa-ids"].write(tmp_path) / "kb.txt").read_text().splitlines()
    assert {line.split("|")[1] for line in kb} == set(IDS.values())
    assert all(relation_words(r) == [r.lower()] for r in IDS.values())  # nothing reads them
    listed = [r for r in OPAQUE.values() if r in wikidata_property_labels()]
    assert len(listed) >= 8 and all(relation_words(r) != [r.lower()] for r in listed)  # Wikidata's labels read them


def test_fresh_wordings_ask_the_same_paths_of_the_same_topics_in_other_words():
    """A fresh wording checks the dev templates' figures: the same path, topics and answers, in words the dev
    templates never used, and no two-topic questions (none are reworded)."""
    fresh_director = {"fresh": {"same director": (("plain", "which other films were made by whoever made {e}?"),)}}
    dev, _ = worded([SAME_DIRECTOR, DIRECTOR_COUNTRY], [DIRECTED_AND_STARRED], fresh_director, "dev")
    assert dev == [SAME_DIRECTOR, DIRECTOR_COUNTRY]
    paths, conjunctions = worded([SAME_DIRECTOR, DIRECTOR_COUNTRY], [DIRECTED_AND_STARRED], fresh_director, "fresh")
    assert conjunctions == [] and [p.name for p in paths] == ["same director"] and paths[0].path == SAME_DIRECTOR.path
    with pytest.raises(KgwalkError, match="fresh2 wordings for no path: same writer"):
        worded([SAME_DIRECTOR], [], {"fresh2": {"same writer": (("plain", "{e}?"),)}}, "fresh2")

    people, _ = people_sets(0, per_path=5, per_conjunction=5, hub_degree=50)
    asked = {(q.source, q.topics): q.answers for q in people.questions}
    seen = {q.template for q in people.questions}
    for wordings in (w for w in get_args(Wordings) if w != "dev"):  # every wording the Literal names, a new one too
        fresh, _ = people_sets(0, per_path=5, per_conjunction=5, hub_degree=50, wordings=wordings)
        assert fresh.questions and {q.group for q in fresh.questions} == {"1-hop", "2-hop", "3-hop"}
        assert all(asked[q.source, q.topics] == q.answers for q in fresh.questions)  # same topics, same answers
        assert not seen & {q.template for q in fresh.questions}  # in words no other wording used
        seen |= {q.template for q in fresh.questions}
    for family in (PEOPLE_REWORDINGS, FOOTBALL_REWORDINGS, METAQA_REWORDINGS):
        assert all(text.count("{e}") == 1 for wording in family.values() for templates in wording.values() for _, text in templates)
