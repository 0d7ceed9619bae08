"""A label-free relation-path prior: every relation path of the corpus read as a question.

The labelled prior (kgwalk.query.paths) learns from example questions which relation path a
question shape asks for; a new KG has no examples. Its walks' relation paths and the
verbalizer's phrases are enough to write questions per path, two readings of it: from the
answer back to the topic, as users often ask ("what directed something, which was written by
E?" for written_by walked backwards, then directed_by), and from the topic to the answer ("E
wrote something, which was directed by what?"). Where the verbalizer has a phrase map, each path
is read both ways once more with the automatic phrases of its relation names, which often keep
nouns a map drops ("starred_actors": "starred" in MetaQA's map, "has starred actors" read from
the name; a map is what makes a KG of opaque names like P57 readable). At query time the
question with its topic masked is compared with every reading of each path among the topic's
candidate walks (the best cosine counts), a softmax over those paths (query.synthetic_temperature) turns the
cosines into shares, and each walk scores cosine + query.rerank_weight x its path's share, as
with the labelled prior.

Three corrections make the cosines tell paths apart (bench/results/zero_shot_ranking.md):
- centring (query.synthetic_center): every path question of a KG about films reads like films,
  the longer ones more, so a question about films is closest to long paths whatever it asks
  ("the film E was written by who" to "E was written by something, which directed what?");
  the question and the path questions are compared less their mean, what all paths share.
- a step count (query.hop_weight, query.words_per_hop): cosine cannot count, but a question's
  length can; every step costs a relation word and often a noun ("what movies did E act in": 2
  content words, "who directed the films E acted in": 4). Each path loses hop_weight per step it
  differs from the question's content words / words_per_hop (expected_hops). words_per_hop is
  MetaQA dev's; a setting for questions that spend more or fewer words per step. A question that
  names more relations than that counts query.mention_hops per relation named instead
  (relation_mentions, on the words of the KG's relation phrases): "who directed the films
  written by the writer of E" spends 4 words on 3 steps, naming written_by for two of them.
- content words (query.synthetic_content_mix): a static embedder averages its tokens, so "who is
  listed as director for E" is as close to "E was released in what?" as to "E was directed by
  what?" on their shared "who is E what" alone. The match is also read from the content words
  of both (function words and the placeholders left out: "listed director" to "directed"), and
  the two cosines mixed; the question's content words are encoded in the batch with the question.

A fourth adds what a sentence vector blurs: each of the path's words should be one the question
speaks of (query.synthetic_coverage). "who wrote movies that share actors with E" reads about as
close to "what starred in something, which was directed by something, which wrote E?" as to "what
wrote something, which starred something, which starred in E?", though nothing in it speaks of
directing. Per path, each content word of its question (read from the answer) takes its best
match among the question's content words (the cosine of their word vectors, 1 for words of one
stem: "director" and "directed", "screenwriter" and "writer"); their mean, the path's coverage,
adds synthetic_coverage to its cosine per unit (bench/results/path_words.md).

A fifth reads where in the question each word stands (query.synthetic_focus). Coverage cannot tell
"the films that share directors with E are written by who" (the writers of films by E's
directors) from the directors of films by E's writers: both paths speak of directing and writing.
What tells them apart is which relation the question asks its answer by, and questions put that
one next to their wh-word ("who directed ...", "... are written by who", "when did ... release").
The question's content words are weighted by nearness to the wh-word (FOCUS_DECAY per rank); each
step of a path gets their weighted match with the words of its relation's phrases (both ways:
"written by" and "wrote" are one relation; a compound's last part counts, "screenwriter" for
"written"), and the path gains
synthetic_focus x (its last step's, the answer's, less the mean over its steps). Relative to the
path's own steps, so a one-step path, or one that repeats one relation, is left as it is, and a
type word beside the wh-word ("what movies") moves little; and a path more than a step longer than
the question asks for gains nothing, since a path that wanders off before reaching the asked
relation ends in it too (bench/results/answer_focus.md).

Measured on MetaQA dev (bench/results/zero_shot_ranking.md): either reading alone ranks the
answer path first less often than the better of the two (the end-first one misses "what year
was E released", the topic-first one "who directed the films written by E"), and the walk's own
masked sentence ("E wrote something, which was directed by something.") less often still. The
path vectors are embedded once per corpus and model and cached in
`$XDG_CACHE_HOME/kgwalk/synthetic` (else `~/.cache/kgwalk/synthetic`), keyed by the model and
the questions; a path a refresh adds is embedded when a query first meets it.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable

import numpy as np
import pyarrow as pa

from kgwalk.config import Config
from kgwalk.embed.model import Embedder
from kgwalk.errors import KgwalkError
from kgwalk.storage import user_cache
from kgwalk.verbalize.template import TemplateVerbalizer
from kgwalk.walks.graph import fold64
from kgwalk.walks.labels import signature

CACHE = "synthetic"


# English function words: what is left of a question without them (and its masked topic) names
# the relations and the types it asks about. "has" among them: automatic phrases read a noun
# relation backwards as "has" ("what has starred actors E?"), a word no question needs to match
FUNCTION_WORDS = frozenset({
    "a", "an", "the", "of", "in", "on", "by", "to", "for", "is", "are", "was", "were", "be", "been", "did",
    "do", "does", "has", "have", "had", "what", "which", "who", "whom", "whose", "that", "this", "these", "those", "and", "or",
    "with", "as", "at", "from", "it", "its", "their", "his", "her", "they", "there", "e",
})
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
PLACEHOLDER = "something"  # a path question's inner entities
STEM = 4  # leading letters two words of at least this length share to count as one word
MAX_WORDS = 200_000  # word vectors a prior keeps: a server's questions keep bringing new words
WH_WORDS = frozenset({"who", "what", "which", "when", "where", "whom", "whose", "how"})
FOCUS_DECAY = 0.3  # the weight of the question's n-th content word nearest its wh-word: FOCUS_DECAY ** n (MetaQA dev)
FOCUS_SLACK = 1.0  # steps beyond expected_hops up to which a path may gain from the focus (MetaQA dev)
RELATIVE_PRONOUNS = frozenset({"that", "who", "which", "whom"})


def _is_content(word: str) -> bool:
    """Neither a function word nor a placeholder (`word` lower-cased)."""
    return word not in FUNCTION_WORDS and word != PLACEHOLDER


def _content(text: str) -> list[str]:
    """The words of `text` that are neither function words nor placeholders, as written."""
    return [w for w in _WORD.findall(text) if _is_content(w.lower())]


def content_words(text: str) -> str:
    """`text` without its function words and placeholders (the masked topic among them): what
    names relations and types; the text itself where nothing is left."""
    return " ".join(_content(text)) or text


def words_of(text: str) -> list[str]:
    """The distinct content words of `text`, lower-cased, in order (none where only function words
    and placeholders are left)."""
    return list(dict.fromkeys(w.lower() for w in _content(text)))


def same_stem(a: str, b: str, *, compounds: bool = False) -> bool:
    """Two forms of one word, as far as spelling tells: both begin with the same STEM letters
    ("directed", "director") or one holds the other ("writer", "screenwriter"). With `compounds`, also
    where the longer word holds the shorter's first STEM letters after its own first letter, a compound's
    last part in another form ("screenwriter", "written")."""
    if len(a) < STEM or len(b) < STEM:
        return a == b
    if a[:STEM] == b[:STEM] or a in b or b in a:
        return True
    longer, shorter = (a, b) if len(a) >= len(b) else (b, a)
    return compounds and shorter[:STEM] in longer[1:]


def focus_weights(masked_question: str) -> dict[str, float]:
    """The question's content words weighted by nearness to its first wh-word (the wh-word itself where it is one:
    "when"): FOCUS_DECAY ** n for the n-th nearest, summed over a word's repeats; none without a wh-word."""
    tokens = [w.lower() for w in _WORD.findall(masked_question)]
    wh = next((i for i, w in enumerate(tokens) if w in WH_WORDS), None)
    if wh is None:
        return {}
    near = sorted((abs(i - wh), i) for i, w in enumerate(tokens) if _is_content(w))
    weights: dict[str, float] = {}
    for rank, (_, i) in enumerate(near):
        weights[tokens[i]] = weights.get(tokens[i], 0.0) + FOCUS_DECAY**rank
    return weights


def expected_hops(masked_question: str, words_per_hop: float) -> float:
    """How many relation steps a question with its topic masked as 'E' asks for, read from how many
    content words it spends."""
    return sum(w.lower() not in FUNCTION_WORDS for w in _WORD.findall(masked_question)) / words_per_hop


def relation_word_matches(word: str, relations_of: dict[str, list[str]]) -> dict[str, frozenset[str]]:
    """Per relation, the words of its phrases that `word` (lower-cased) is a form of (`same_stem`, compounds counted);
    only relations with some. `relations_of`: each word of the KG's relation phrases, the relations it is a word of
    (a KG of thousands of relations has far fewer distinct words)."""
    if not _is_content(word):
        return {}
    found: dict[str, set[str]] = {}
    for phrase_word in relations_of:
        if same_stem(word, phrase_word, compounds=True):
            for relation in relations_of[phrase_word]:
                found.setdefault(relation, set()).add(phrase_word)
    return {r: frozenset(words) for r, words in found.items()}


def relation_mentions(masked_question: str, matches: Callable[[str], dict[str, frozenset[str]]]) -> int:
    """How many relation steps the question names, counted on the words of the KG's relation phrases (`matches`: a word's
    `relation_word_matches`). Per relation, its words' most repeated one counts: "release year" is one mention of release_year,
    "directed the films written by the writer of E" two of written_by. A word goes to the relation matching the most words
    of the question; one restating the noun before its relative pronoun is no new mention ("the director that directed E")."""
    tokens = [w.lower() for w in _WORD.findall(masked_question)]
    by_relation: dict[str, dict[int, frozenset[str]]] = {}
    for i, token in enumerate(tokens):
        for relation, words in matches(token).items():
            by_relation.setdefault(relation, {})[i] = words
    taken: set[int] = set()
    mentions = 0
    for relation in sorted(by_relation, key=lambda r: (-len(by_relation[r]), r)):
        own = {i: words for i, words in by_relation[relation].items() if i not in taken}
        taken |= set(own)
        repeats: dict[str, int] = {}
        for i, words in own.items():
            if not (i >= 2 and tokens[i - 1] in RELATIVE_PRONOUNS and i - 2 in own):
                for w in words:
                    repeats[w] = repeats.get(w, 0) + 1
        mentions += max(repeats.values(), default=0)
    return mentions


def phrase_words(relation: str, inverse: bool, verbalizer: TemplateVerbalizer) -> list[str]:
    """The content words of the relation's phrases both ways ("written by" and "wrote": one relation), in reading order
    from the step's answer."""
    return words_of(" ".join(path_questions([relation], [inverse], verbalizer)))


def path_readings(rel_labels: list[str], inverse: list[bool], verbalizers: list[TemplateVerbalizer]) -> tuple[str, ...]:
    """`path_questions` by each verbalizer in turn: from its end, from the topic, and so on."""
    return tuple(q for verbalizer in verbalizers for q in path_questions(rel_labels, inverse, verbalizer))


def path_questions(rel_labels: list[str], inverse: list[bool], verbalizer: TemplateVerbalizer) -> tuple[str, str]:
    """The relation path as two questions about its end, the topic masked as 'E': the walk
    reversed (each step's phrase inverted) and verbalized from 'what', and the walk as it is
    with 'what' at its end."""
    middle = [PLACEHOLDER] * (len(rel_labels) - 1)
    from_end = verbalizer.sentence(["what", *middle, "E"], rel_labels[::-1], [not i for i in inverse[::-1]])
    from_topic = verbalizer.sentence(["E", *middle, "what"], rel_labels, inverse)
    return from_end[:-1] + "?", from_topic[:-1] + "?"


def corpus_paths(walks: pa.Table, relations: pa.Table) -> list[tuple[list[str], list[bool]]]:
    """The distinct relation paths (relation labels, directions) of a walks table (columns rels,
    inverse), without a Python loop per walk: each step is coded as (relation, direction), and
    the codes of a walk folded into one hash."""
    rel_ids = np.sort(relations.column("id").to_numpy())
    label_of = dict(zip(relations.column("id").to_pylist(), relations.column("label").to_pylist()))
    rels, inverse = walks.column("rels").combine_chunks(), walks.column("inverse").combine_chunks()
    steps = rels.value_lengths().to_numpy(zero_copy_only=False)
    codes = np.searchsorted(rel_ids, rels.flatten().to_numpy()) * 2 + inverse.flatten().to_numpy(zero_copy_only=False)
    starts = np.concatenate([[0], np.cumsum(steps)[:-1]]).astype(np.int64)
    keys = fold64(np.zeros(len(steps), np.uint64), steps)
    for position in range(int(steps.max(initial=0))):
        longer = steps > position
        keys[longer] = fold64(keys[longer], codes[starts[longer] + position])
    _, first = np.unique(keys, return_index=True)
    rows = pa.array(np.sort(first))
    return [([label_of[r] for r in rs], inv) for rs, inv in zip(rels.take(rows).to_pylist(), inverse.take(rows).to_pylist())]


def read_corpus_paths(walks: str, relations: str) -> list[tuple[list[str], list[bool]]]:
    """`corpus_paths` of these tables' current versions, from the table cache when found before
    (kgwalk/query/table_cache.py): reading every walk's relations took 0.25 s of a CLI query on
    MetaQA's 762K walks."""
    import sys

    from kgwalk.query.table_cache import cached_arrays
    from kgwalk.storage import read_version
    from kgwalk.walks import graph

    def build(versions: dict[str, int]) -> dict[str, np.ndarray]:
        paths = corpus_paths(read_version(walks, versions[walks], ["rels", "inverse"]), read_version(relations, versions[relations], ["id", "label"]))
        return {"steps": np.array([len(rels) for rels, _ in paths], np.int64),
                "labels": np.array([label for rels, _ in paths for label in rels], str),
                "inverse": np.array([step for _, inv in paths for step in inv], bool)}

    stored = cached_arrays("relation-paths", [walks, relations], [sys.modules[__name__], graph], build)
    labels, inverse = stored["labels"].tolist(), stored["inverse"].tolist()
    ends = np.cumsum(stored["steps"]).tolist()
    return [(labels[end - steps : end], inverse[end - steps : end]) for steps, end in zip(stored["steps"].tolist(), ends)]


def _parse_signature(sig: str) -> tuple[list[str], list[bool]]:
    """(relation labels, directions) of a signature string (kgwalk.walks.labels.signature)."""
    steps = sig.split("|")
    return [s[1:] if s.startswith("<") else s[:-1] for s in steps], [s.startswith("<") for s in steps]


def embed_cached(embedder: Embedder, model: str, texts: list[str]) -> np.ndarray:
    """The unit vectors of `texts`, from the cache when this model embedded these texts before."""
    key = hashlib.sha256("\n".join([model, *texts]).encode()).hexdigest()[:24]
    path = user_cache(CACHE) / f"{key}.npy"
    if path.exists():
        vectors = np.load(path)
        if vectors.shape[0] == len(texts):
            return vectors
    vectors = _unit(embedder.encode(texts)) if texts else np.empty((0, 1), np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")
    np.save(partial, vectors)
    os.replace(partial, path)  # readers see a whole file or none
    return vectors


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Unit rows (along the last axis)."""
    vectors = np.asarray(vectors, np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12)


class SyntheticPrior:
    """Question vectors by path (signature); `rerank` has the labelled PathPrior's interface."""

    def __init__(self, paths: list[tuple[list[str], list[bool]]], verbalizer: TemplateVerbalizer,
                 embedder: Embedder, model: str, temperature: float, *, words_per_hop: float, hop_weight: float,
                 content_mix: float, center: bool = True, coverage: float = 0.0, focus: float = 0.0, mention_hops: float = 0.0,
                 words_embedder: Embedder | None = None, words_model: str | None = None) -> None:
        """`coverage`, `focus`: query.synthetic_coverage and synthetic_focus (0: off); their word vectors come from
        `words_embedder` (`words_model`'s; the prior's own embedder and model when None). `mention_hops`:
        query.mention_hops (0: expected hops from the question's word count alone)."""
        if temperature <= 0:
            raise KgwalkError(f"query.synthetic_temperature must be > 0, got {temperature}")
        if words_per_hop <= 0 or hop_weight < 0:
            raise KgwalkError(f"query.words_per_hop must be > 0 and query.hop_weight >= 0, got {words_per_hop} and {hop_weight}")
        if not 0.0 <= content_mix <= 1.0:
            raise KgwalkError(f"query.synthetic_content_mix must be within [0, 1], got {content_mix}")
        if coverage < 0 or focus < 0 or mention_hops < 0:
            raise KgwalkError("query.synthetic_coverage, query.synthetic_focus and query.mention_hops must be >= 0, "
                              f"got {coverage}, {focus} and {mention_hops}")
        self.embedder, self.temperature = embedder, temperature
        # the phrase map's readings, then the relation names' own (automatic phrases) where a map changes them
        self.verbalizers = [verbalizer, TemplateVerbalizer({})] if verbalizer.phrase_map else [verbalizer]
        self.readings = 2 * len(self.verbalizers)
        self.words_per_hop, self.hop_weight, self.content_mix, self.mention_hops = words_per_hop, hop_weight, content_mix, mention_hops
        self.coverage, self.focus, self.words_embedder = coverage, focus, words_embedder or embedder
        self.questions = {signature(r, i): path_readings(r, i, self.verbalizers) for r, i in paths}
        # per form (the whole questions; their content words where mixed in): path -> (readings, dim)
        # vectors, and the mean path question the form's cosines are taken less (0: no centring)
        self.forms = ["whole", "content"] if content_mix > 0 else ["whole"]
        self.vectors: dict[str, dict[str, np.ndarray]] = {form: {} for form in self.forms}
        self.centers: dict[str, np.ndarray | float] = dict.fromkeys(self.forms, 0.0)
        if self.questions:
            for form in self.forms:
                texts = [self._form(q, form) for pair in self.questions.values() for q in pair]
                vectors = embed_cached(embedder, model, texts)
                self.vectors[form] = dict(zip(self.questions, vectors.reshape(len(self.questions), self.readings, -1)))
                if center:
                    self.centers[form] = vectors.mean(axis=0)
        self.word_vectors: dict[str, np.ndarray] = {}
        self.path_words: dict[str, list[list[str]]] = {}  # per path, the words of each reading from the answer
        self.step_words: dict[str, list[list[list[str]]]] = {}  # per path and step, the words of each verbalizer's phrases
        self.relations_of: dict[str, list[str]] = {}  # per word of a relation phrase (both ways, every verbalizer), its relations
        self.relations_read: set[str] = set()  # the relations whose words relations_of holds
        self.word_relations: dict[str, dict[str, frozenset[str]]] = {}  # per question word, its relation_word_matches
        self._add_relations(self.questions)
        if (coverage or focus) and self.questions:
            vocabulary = list(dict.fromkeys(w for sig in self.questions for words in self._path_words(sig) for w in words))
            self.word_vectors = dict(zip(vocabulary, embed_cached(self.words_embedder, words_model or model, vocabulary)))

    @staticmethod
    def _form(text: str, form: str) -> str:
        return content_words(text) if form == "content" else text

    @property
    def center(self) -> np.ndarray | float:
        """The mean path question (whole questions): what every path of this KG shares."""
        return self.centers["whole"]

    @classmethod
    def load(cls, cfg: Config, embedder: Embedder, model: str, *, words_embedder: Embedder | None = None) -> SyntheticPrior:
        """`embedder`: `model`'s, query.prior_encoder's (the walks' embed.model by default); `words_embedder`: embed.model's,
        for the word vectors of query.synthetic_coverage (the prior's own when None)."""
        from kgwalk.storage import table_exists

        if not table_exists(cfg.table("walks")):
            raise KgwalkError(f"query.rerank=synthetic reads relation paths from {cfg.table('walks')}, which does not exist "
                              "(run `kgwalk walks`, or --set query.rerank=none)")
        paths = read_corpus_paths(cfg.table("walks"), cfg.table("relations"))
        q = cfg.query
        return cls(paths, TemplateVerbalizer(cfg.verbalize.phrases), embedder, model, q.synthetic_temperature,
                   words_per_hop=q.words_per_hop, hop_weight=q.hop_weight, mention_hops=q.mention_hops,
                   content_mix=q.synthetic_content_mix, center=q.synthetic_center, coverage=q.synthetic_coverage, focus=q.synthetic_focus,
                   words_embedder=words_embedder, words_model=cfg.embed.model if words_embedder else None)

    def _vectors_of(self, sigs: list[str], form: str) -> np.ndarray:
        """(paths, readings, dim): the vectors of each path's questions in `form`; a path the corpus did not have at load (a refresh
        since) is embedded now, once."""
        new = [s for s in sigs if s not in self.vectors[form]]
        for sig in new:
            self.questions.setdefault(sig, path_readings(*_parse_signature(sig), self.verbalizers))
        self._add_relations(new)
        if new:
            texts = [self._form(q, form) for sig in new for q in self.questions[sig]]
            vectors = _unit(self.embedder.encode(texts)).reshape(len(new), self.readings, -1)
            self.vectors[form].update(zip(new, vectors))
        return np.stack([self.vectors[form][s] for s in sigs])

    def _cosines(self, sigs: list[str], question_vector: np.ndarray, form: str) -> np.ndarray:
        """Per path, the best cosine of its readings to the question, all less the form's mean path question.
        Centred: on a KG about films every path question reads like films, and the longer ones the more, so raw
        cosines favour paths by that, not by the relations asked; without the shared part the relations decide."""
        center = self.centers[form]
        q = _unit((question_vector / (np.linalg.norm(question_vector) or 1.0) - center)[None])[0]
        # einsum, not BLAS: see PathPrior.votes (OpenBLAS's spinning threads slow the next embedding)
        return np.einsum("ikj,j->ik", _unit(self._vectors_of(sigs, form) - center), q).max(axis=1)

    def _add_relations(self, sigs: Iterable[str]) -> None:
        """Record the phrase words of these paths' relations not known yet (a refresh may bring new ones)."""
        new = {r for sig in sigs for r in _parse_signature(sig)[0]} - self.relations_read
        if not new:
            return
        # copied, not changed in place: a server's threads may be matching words against the one they read
        relations_of = {word: list(relations) for word, relations in self.relations_of.items()}
        for relation in sorted(new):
            for word in dict.fromkeys(w for v in self.verbalizers for w in phrase_words(relation, False, v)):
                relations_of.setdefault(word, []).append(relation)
        self.relations_of, self.relations_read = relations_of, self.relations_read | new
        self.word_relations = {}  # the words' matches may change

    def _word_relations(self, word: str) -> dict[str, frozenset[str]]:
        """`relation_word_matches` of a question word, once per word (replaced when full, as `_word_vectors`)."""
        known = self.word_relations
        if word not in known:
            if len(known) > MAX_WORDS:
                self.word_relations = known = {}
            known[word] = relation_word_matches(word, self.relations_of)
        return known[word]

    def expected_hops(self, masked_question: str) -> float:
        """The steps the question asks for: `expected_hops` by its content words, or `mention_hops` per relation it names
        (`relation_mentions`) where more. The words per step vary: "who directed the films written by the writer of E"
        spends 4 content words on 3 steps (written_by named for two); "what is E about", 1 on 1."""
        by_words = expected_hops(masked_question, self.words_per_hop)
        if not self.mention_hops:
            return by_words
        return max(by_words, self.mention_hops * relation_mentions(masked_question, self._word_relations))

    def _word_vectors(self, words: list[str]) -> np.ndarray:
        """Unit vectors of `words`, embedded once. A server's threads may share the prior: the cache is
        replaced when full, never emptied in place, so the one this call looked in keeps its words."""
        known = self.word_vectors
        new = [w for w in words if w not in known]
        found = dict(zip(new, _unit(self.words_embedder.encode(new)))) if new else {}
        if found:
            if len(known) > MAX_WORDS:
                self.word_vectors = {}
            self.word_vectors.update(found)
        return np.stack([found[w] if w in found else known[w] for w in words])

    def _path_words(self, sig: str) -> list[list[str]]:
        if sig not in self.path_words:
            self.path_words[sig] = [words_of(q) for q in self.questions[sig][::2]]  # the readings from the answer
        return self.path_words[sig]

    def _steps_words(self, sig: str) -> list[list[list[str]]]:
        if sig not in self.step_words:
            rels, inverse = _parse_signature(sig)
            # the relation's phrases both ways: "are written by who" asks by the relation a step reads as "wrote" from its answer
            self.step_words[sig] = [[phrase_words(r, i, v) for v in self.verbalizers] for r, i in zip(rels, inverse)]
        return self.step_words[sig]

    def _matches(self, vocabulary: list[str], asked: list[str], *, compounds: bool = False) -> np.ndarray:
        """(vocabulary, asked): how well each path word matches each question word: the cosine of their word
        vectors, 1 for one stem (`same_stem`, with `compounds`)."""
        # einsum, not BLAS: see PathPrior.votes
        match = np.einsum("ij,kj->ik", self._word_vectors(vocabulary), self._word_vectors(asked))
        stems = np.array([[same_stem(a, b, compounds=compounds) for b in asked] for a in vocabulary])
        return np.where(stems, 1.0, match)

    def coverages(self, sigs: list[str], masked_question: str) -> np.ndarray:
        """Per path, how much of it the question speaks of: the mean over the content words of its question read from the
        answer of each one's best match among the question's (cosine of word vectors; 1 for one stem); the better of
        the phrase map's and the relation names' questions where both are read."""
        asked = words_of(masked_question)
        path_words = [self._path_words(s) for s in sigs]
        vocabulary = list(dict.fromkeys(w for readings in path_words for words in readings for w in words))
        if not asked or not vocabulary:
            return np.zeros(len(sigs))
        best = dict(zip(vocabulary, self._matches(vocabulary, asked).max(axis=1).tolist()))
        return np.array([max((sum(best[w] for w in words) / len(words) if words else 0.0) for words in readings) for readings in path_words])

    def focuses(self, sigs: list[str], masked_question: str) -> np.ndarray:
        """Per path, how much more the question's wh-phrase asks about its last step than about its steps on average:
        each step's match is the mean of the question's words weighted by `focus_weights` of each one's best match
        among the words of the step's relation phrases, both ways (the better verbalizer's); 0 for a question without
        a wh-word, and no gain for a path more than FOCUS_SLACK steps longer than `expected_hops`."""
        weights = focus_weights(masked_question)
        steps = [self._steps_words(s) for s in sigs]
        vocabulary = list(dict.fromkeys(w for path in steps for step in path for words in step for w in words))
        if not weights or not vocabulary:
            return np.zeros(len(sigs))
        asked = list(weights)
        weight = np.array([weights[a] for a in asked]) / sum(weights.values())
        # compounds: the wh-phrase often names the answer by a role noun ("who are the screenwriters ...") that only its
        # last part ties to the relation's verb ("written"); coverage, which every word of the question feeds, stays strict
        match = dict(zip(vocabulary, self._matches(vocabulary, asked, compounds=True)))
        focus = [[max((float(weight @ np.max([match[w] for w in words], axis=0)) for words in step if words), default=0.0)
                  for step in path] for path in steps]
        relative = np.array([per_step[-1] - np.mean(per_step) for per_step in focus])
        # what the focus tells is the answer's relation, not the length: a path more than FOCUS_SLACK steps longer than the
        # question asks for gains nothing ("what was the release year of E": E's director's other films' years end in it too)
        too_long = np.array([len(path) for path in steps]) - self.expected_hops(masked_question) > FOCUS_SLACK
        return np.where(too_long, np.minimum(relative, 0.0), relative)

    @staticmethod
    def question_texts(masked_question: str, content_mix: float) -> list[str]:
        """What the retriever encodes for this prior (before loading it: a question fails on search first): the masked
        question, and its content words where they are mixed in (query.synthetic_content_mix)."""
        return [masked_question, content_words(masked_question)] if content_mix > 0 else [masked_question]

    def shares(self, masked_question: str, masked_vectors: np.ndarray, walks: list) -> np.ndarray:
        """Per walk, its path's share of a softmax over the distinct paths among `walks`; `masked_vectors` are the
        vectors of `question_texts(masked_question)`."""
        sigs = list(dict.fromkeys(w.signature for w in walks))
        first = {s: i for i, s in enumerate(sigs)}
        sims = self._cosines(sigs, masked_vectors[0], "whole")
        if self.content_mix > 0:
            sims = (1 - self.content_mix) * sims + self.content_mix * self._cosines(sigs, masked_vectors[1], "content")
        steps = np.array([s.count("|") + 1 for s in sigs])
        sims = sims - self.hop_weight * np.abs(steps - self.expected_hops(masked_question))
        if self.coverage:
            sims = sims + self.coverage * self.coverages(sigs, masked_question)
        if self.focus:
            sims = sims + self.focus * self.focuses(sigs, masked_question)
        weights = np.exp((sims - sims.max()) / self.temperature)
        per_path = weights / weights.sum()
        return np.array([per_path[first[w.signature]] for w in walks])

    def rerank(self, masked_question: str, masked_vectors: np.ndarray, walks: list, weight: float) -> None:
        if not walks:
            return
        for w, share in zip(walks, self.shares(masked_question, masked_vectors, walks)):
            w.score = w.cosine + weight * float(share)
