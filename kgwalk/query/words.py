"""English word heuristics the label-free prior reads questions and relation phrases with: which
words are content words, when two spellings are one word, how many relation steps a question
asks for, and which of the KG's relations its words name. Pure functions on strings."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from kgwalk.verbalize.template import is_participle

# English function words: what is left of a question without them (and its masked topic) names
# the relations and the types it asks about. "has" among them: automatic phrases read a noun
# relation backwards as "has" ("what has starred actors E?"), a word no question needs to match
FUNCTION_WORDS = frozenset({
    "a", "an", "the", "of", "in", "on", "by", "to", "for", "is", "are", "was", "were", "be", "been", "did",
    "do", "does", "has", "have", "had", "what", "which", "who", "whom", "whose", "that", "this", "these", "those", "and", "or",
    "with", "as", "at", "from", "it", "its", "their", "his", "her", "they", "there", "e",
    "he", "she", "him", "them", "we", "us", "our", "my", "your",  # "the coach E, he is coming from which country"
    "whoever", "whatever", "whichever",  # "the movies helmed by whoever directed E": its verb is the step
    "every", "all", "each", "some", "any",  # "give me every national team that has a E player in its squad": two steps
    "so", "actual", "exact", "very",  # "so what's the actual city of their birth?": one step
})
WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
PLACEHOLDER = "something"  # a path question's inner entities
TOPIC = "e"  # the question's topic, masked (kgwalk.query.paths.masked_question), as a lower-cased word
STEM = 4  # leading letters two words of at least this length share to count as one word
# irregular forms whose spelling shares no stem with the word relation names use ("where was E born": place_of_birth)
IRREGULAR = {"born": "birth", "died": "death", "dead": "death", "wrote": "write", "sang": "sing", "sung": "sing",
             "taught": "teach", "built": "build", "spoke": "speak", "spoken": "speak"}
WH_WORDS = frozenset({"who", "what", "which", "when", "where", "whom", "whose", "how"})
THING_WH_WORDS = frozenset({"what", "which", "who", "whom"})  # asking for a thing or a person, not a time, place or way
HAVING = frozenset({"has", "have", "had"})
AUXILIARIES = frozenset({"is", "are", "was", "were", "do", "does", "did", "has", "have", "had"})  # a noun before one is the whole noun
COPULAS = frozenset({"is", "are", "was", "were"})  # "which people from E are judges": what follows the last one names the answer
ARTICLES = frozenset({"a", "an", "the"})
RELATIVE_PRONOUNS = frozenset({"that", "who", "which", "whom"})
# Prepositions that link a phrase to the next as "of" does, between a content word and one after: "movies by the director",
# "the players at E"
CHAIN_PREPOSITIONS = frozenset({"by", "from", "at", "in", "with", "for", "on"})
CONJUNCTIONS = frozenset({"and", "or"})
POSSESSIVE_PRONOUNS = frozenset({"his", "her", "its", "their"})  # "the teammates of E at his club": E's club, a step
DO_FORMS = frozenset({"do", "does", "did"})  # after a wh-word, a subject follows: "what do the children of E do"
# "what is the name of the country", "give me a list of films": the country, the films are asked
GENERIC_NOUNS = frozenset({"name", "names", "title", "titles", "kind", "type", "sort", "list"})
# kinds a relation's phrase can give its end that any place or thing is ("has location"): they contradict no kind asked for
GENERIC_KINDS = frozenset({"location", "locations", "place", "places", "thing", "things", "entity", "entities", "item", "items"})
# kinds of place: what "where" asks for, whatever the place is ("where is E's club based": its country)
PLACE_KINDS = frozenset({"location", "locations", "place", "places", "country", "countries", "nation", "nations", "city", "cities", "town",
                         "towns", "region", "regions", "continent", "continents", "birthplace", "birthplaces", "hometown", "hometowns"})
# places no KG steps down to from another place: a city's steps go up, to its region or country ("which city was E born
# in" asks for the birthplace, not for what lies one step past it)
SETTLEMENT_KINDS = frozenset({"city", "cities", "town", "towns", "village", "villages", "hometown", "hometowns"})
# levels of place none of whose places is one of another's: a city is no country ("which city was E born in" is not
# answered by a country, however like a city its name reads)
PLACE_LEVELS = (SETTLEMENT_KINDS, frozenset({"country", "countries", "nation", "nations"}), frozenset({"continent", "continents"}))
# Words that name one relation concept in questions and in KGs' relation names, where spelling ties none to another: "what
# kind of film is E" asks for what a KG calls genre; "who acted in E" for what it calls starring or cast member. Written from
# the English aliases of the most used Wikidata properties (occupation, spouse, child, cast member, main subject: "describes";
# Wikidata is CC0) and the names DBpedia and Freebase give them; "living" and the describing words after misses on the dev
# sets ("what do the children of E do for a living", "which words describe E"), "about" (main subject's alias) and the
# coach group (head coach's aliases) after misses on the fresh wordings ("which movies are about E", "who manages E"),
# "partner" (spouse's alias), "tagged" and "keyword" after misses on fresh3 ("what nationality is E's partner", "which movies
# are tagged with E"); "hometown", "native", "appeared", "trains", "work", "origin" and the national-team group ("represents"
# is an alias of Wikidata's country for sport) after misses on fresh4 ("who is a native of E", "E appeared in which films");
# "passport", "creed", "profess" (a faith, not a profession), "helmed" and "boss" after misses on fresh9 ("the coach E
# holds a passport from which country", "what creed does E profess", "which other movies were helmed by whoever directed
# E", "who is the E national team boss"), "gaffer" (a manager in British football) beside it.
# Exact forms, plurals listed: a stem would tie "cast" to "castle". A word in no group matches by spelling only (`same_stem`);
# two words in different groups never by spelling (`names_word`: "native", "nationality")
SYNONYMS: tuple[frozenset[str], ...] = tuple(frozenset(group.split()) for group in (
    "kind kinds sort sorts type types genre genres category categories",
    "profession professions occupation occupations job jobs career careers living work works",  # "what does E do for a living", "what do E's kids work as"
    "spouse spouses husband husbands wife wives married marry marries partner partners",
    "children child son sons daughter daughters kid kids offspring",
    "parents parent father fathers mother mothers mom moms mum mums dad dads ma pa",  # "grandma": "ma" twice
    "sibling siblings brother brothers sister sisters",
    "nationality nationalities citizenship citizen citizens origin origins passport passports",  # "what is E's country of origin"
    "birthplace birthplaces birth born hometown hometowns native natives",
    "actor actors actress actresses acted starring starred star stars cast appear appears appeared appearance appearances",
    "director directors directed filmmaker filmmakers helmed helmer helmers",  # "which movies were helmed by E"
    "writer writers wrote written author authors authored screenwriter screenwriters scriptwriter scriptwriters",
    "language languages tongue",
    "released release releases premiere premieres premiered publication published",
    "religion religions faith faiths religious creed creeds profess professes professed",  # "what creed does E profess"
    "educated education school schools university universities college colleges study studied alma institution institutions",
    "employer employers employed employs employee employees",
    "headquartered headquarter headquarters based",
    "founded founder founders established",
    "coach coaches coached manager managers manages managed trainer trainers trains trained boss bosses gaffer",
    "national international internationally represent represents represented representing",
    "gender sex",
    "age aged old",
    "height tall",
    "population inhabitants",
    "topic topics subject subjects tag tags tagged theme themes keyword keywords describe describes described describing description about",
    "located location locations situated",
    "industry industries sector sectors",
    "ticker tickers symbol symbols",
))
CATEGORY = "genre"  # its synonyms name a category of things, not a thing: "kind", "type", "category"
# words asking for the topic's peers, things that share something with it ("which other films did the director of E make",
# "films that share actors with E", "the actor E starred together with who"); a word with the prefix "co-" asks so too
PEER_WORDS = frozenset({"other", "share", "shares", "shared", "same", "else", "also", "together"})
SHARING_WORDS = frozenset({"share", "shares", "shared", "same", "together"})  # the peer is what comes before them
# words of a request wrapped around the question ("can you tell me the name of the person who directed E"): no step's
REQUEST_WORDS = frozenset({"can", "could", "would", "you", "me", "i", "tell", "please", "give", "show", "list", "find", "know", "want", "like",
                           "identify", "need"})
# "how much", "how many": they ask for an amount as "what" asks for a thing ("how much money did it cost to make E" is one
# step, budget); "when" and "where" stay, as they name the answer's kind, a time or a place, that a step gives
AMOUNT_WORDS = frozenset({"how", "much", "many"})
# a verb's particle is part of the verb, one step with it: "in which years did E's films come out"
VERB_PARTICLES = frozenset({"out", "up", "off"})
# prepositions of place and relation that FUNCTION_WORDS leave out: a verb's or a noun's, no step of their own ("which players
# are under contract at E"); those that can name one stay counted ("about": has_tags; "after", "before", "during": a time)
PLACE_PREPOSITIONS = frozenset({"under", "over", "into", "between", "against", "within", "through", "across", "behind", "beyond", "among",
                                "upon", "near", "toward", "towards", "onto", "around", "via", "per", "inside", "outside", "below", "above",
                                "beneath", "beside", "along", "amid"})
_NO_STEP_WORDS = FUNCTION_WORDS | REQUEST_WORDS | GENERIC_NOUNS | AMOUNT_WORDS | VERB_PARTICLES | PLACE_PREPOSITIONS  # what `expected_hops` does not count


def _unpossessed(token: str) -> str:
    """A token without its possessive ending ("e's": "e", "parents'": "parents")."""
    return token[:-2] if token.endswith("'s") else token.rstrip("'")


def is_content(word: str) -> bool:
    """Neither a function word nor a placeholder (`word` lower-cased), nor one's possessive (the masked topic's: "E's")."""
    base = _unpossessed(word)
    return base not in FUNCTION_WORDS and base != PLACEHOLDER


def _content(text: str) -> list[str]:
    """The words of `text` that are neither function words nor placeholders, as written."""
    return [w for w in WORD.findall(text) if is_content(w.lower())]


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
    a, b = IRREGULAR.get(a, a), IRREGULAR.get(b, b)
    if len(a) < STEM or len(b) < STEM:
        return a == b
    if a[:STEM] == b[:STEM] or a in b or b in a:
        return True
    longer, shorter = (a, b) if len(a) >= len(b) else (b, a)
    return compounds and shorter[:STEM] in longer[1:]


# where a question's sentences, its asides set off by a dash and its clauses before a colon part; not after the topic, whose label's own "!" or "."
# ("Support Your Local Sheriff!") can be left outside its mention
_SENTENCE_BREAK = re.compile(r"(?<=[.?!;:])(?<!\bE[.!])\s+|\s+[—–-]{1,2}\s+")
# a demonstrative and the noun after it, singular, after a preposition, a copula or "of" ("born in that city", "is this
# club"): not a relative pronoun after its noun ("the films that starred E"), nor "those films" (what the sentences before
# found, not the topic)
_THAT_ONE = re.compile(r"\b((?:in|at|from|for|with|on|by|of|about|is|are|was|were) )(?:that|this) ([A-Za-z][a-z-]*)\b", re.I)
_NOT_A_THING = frozenset({"one", "much", "many", "way", "time", "year", "day"})
# a wh-word's "is" written into it: "who's managing E" asks as "who is managing E" does
_WH_IS = re.compile(r"\b(who|what|where|when|which|how)'s\b", re.I)


def asked_part(masked_question: str) -> str:
    """The question without its sentences that only tell what led to it, and with a wh-word's contracted "is" written
    out. A sentence (or a clause before a colon or a dash) asks where it ends in "?", or, in a question with no "?", where
    it holds a wh-word; "I was reading up on E last night and got curious — who did they end up marrying?" asks for one
    step, not for as many as its words. A sentence that says what of the topic is asked about ("of E", "E's") stays:
    "the writer of E wrote other movies too — in what years are those released?". The question as it is where every
    sentence asks or none does ("List all the kids E had."), or where what asks names nothing ("— who did?")."""
    question = _WH_IS.sub(r"\1 is", masked_question)
    parts = [p for p in _SENTENCE_BREAK.split(question.strip()) if p]
    tokens = [[w.lower() for w in WORD.findall(p)] for p in parts]
    # where a sentence ends in "?", one without is no question: its wh-word is an indirect question's, what led to the
    # asking ("I saw E on a list of clubs and couldn't tell where they're from — which country is that club in?")
    asked = any(p.endswith("?") for p in parts)
    asking = [p.endswith("?") or (not asked and _first_wh(t) is not None) for p, t in zip(parts, tokens)]
    if all(asking) or not any(asking):
        return question
    # an ask with no content word of its own ("... but I never checked who directed them — who did?") asks what the
    # sentences before it say
    if not any(is_content(w) for t, asks in zip(tokens, asking) if asks for w in t):
        return question
    kept = [p for p, asks, t in zip(parts, asking, tokens) if asks or _links_the_topic(t) or _names_the_topic(t)]
    if len(kept) == len(parts):
        return question
    # where the topic was named only in a sentence left out, "that city" in the ask is the topic: "My family comes from E
    # — which people were born in that city?" asks "which people were born in the city E", one step, "city" its kind
    if not any(_unpossessed(w.lower()) == TOPIC for p in kept for w in WORD.findall(p)):
        kept = [_THAT_ONE.sub(_as_the_topic, p, count=1) for p in kept]
    return " ".join(kept)


def _as_the_topic(match: re.Match[str]) -> str:
    """ "that city" as "the city E"; a word naming no thing ("that much", "this one") stays."""
    noun = match.group(2)
    if not is_content(noun.lower()) or noun.lower() in _NOT_A_THING:
        return match.group()
    return f"{match.group(1)}the {noun} E"


def _links_the_topic(tokens: list[str]) -> bool:
    """Whether lower-cased tokens tie the masked topic to a noun before it, by "of" or a possessive ("the actors of E",
    "E's films")."""
    return any((t == TOPIC and i > 0 and tokens[i - 1] == "of") or t == TOPIC + "'s" for i, t in enumerate(tokens))


def _names_the_topic(tokens: list[str]) -> bool:
    """Whether lower-cased tokens are the masked topic on its own or followed by a word or two of what it is: a fronted
    topic ("E: at which club?", "E, screenwriter: when did their films come out?", "E as director: ...")."""
    return 0 < len(tokens) <= 3 and tokens[0] == TOPIC


def _first_wh(tokens: list[str]) -> int | None:
    """Where the first wh-word is among lower-cased tokens; None without one."""
    return next((i for i, w in enumerate(tokens) if w in WH_WORDS), None)


def is_search(masked_question: str) -> bool:
    """Whether the question is a search's words: the topic, then content words only ("E birth country", "E club")."""
    return _searched([w.lower() for w in WORD.findall(masked_question)])


def _searched(tokens: list[str]) -> bool:
    """`is_search` on lower-cased tokens."""
    return len(tokens) > 1 and tokens[0] == TOPIC and all(is_content(t) and _unpossessed(t) != TOPIC for t in tokens[1:])


def _relative_wh(tokens: list[str], wh: int) -> bool:
    """Whether the wh-word at `wh` (lower-cased tokens) opens a relative clause on a noun the question starts with ("the
    country where E was born", "films whose screenplay E wrote", "list the players who share a club with E"): a noun
    right before it, and before that only that noun phrase, request words and articles, no topic."""
    if wh == 0 or not is_content(tokens[wh - 1]) or tokens[wh - 1] in REQUEST_WORDS or tokens[wh] in AMOUNT_WORDS:
        return False
    lead = next((t for t in tokens[:wh] if t not in REQUEST_WORDS and t not in ARTICLES and t not in GENERIC_NOUNS), None)
    return lead is not None and is_content(lead) and TOPIC not in map(_unpossessed, tokens[:wh])


def _do_follows(tokens: list[str], wh: int) -> bool:
    """Whether a form of "do" follows the wh-word at `wh` (lower-cased tokens)."""
    return wh + 1 < len(tokens) and tokens[wh + 1] in DO_FORMS


def _do_after_wh_phrase(tokens: list[str]) -> int | None:
    """Where a form of "do" ends the first wh-phrase ("which movies did", "how many votes does", "what do") among
    lower-cased tokens, with a subject naming something and its verb after it; None in a question without one, or
    whose subject is a pronoun ("what language do they speak in E": the link is "in")."""
    wh = _first_wh(tokens)
    if wh is None:
        return None
    do = next((k for k in range(wh + 1, min(wh + 5, len(tokens))) if tokens[k] in DO_FORMS or tokens[k] in AUXILIARIES), None)
    if do is None or tokens[do] not in DO_FORMS or do + 2 >= len(tokens):
        return None
    subject = _unpossessed(tokens[do + 1])
    return do if subject in ARTICLES or subject == TOPIC or is_content(subject) else None


def _owned_head(tokens: list[str], wh: int) -> int | None:
    """Where the noun is that a wh-word asking for a thing or a person and its copula ask for through the topic's
    possessives ("what is E's father's wife's nationality": nationality, what the chain ends in); None where the
    question goes on otherwise."""
    at = wh + 1
    while at < len(tokens) and tokens[at] in COPULAS | ARTICLES:
        at += 1
    if at == wh + 1 or at >= len(tokens) or tokens[at] == TOPIC or _unpossessed(tokens[at]) != TOPIC:
        return None
    while at + 1 < len(tokens) and tokens[at] != _unpossessed(tokens[at]):
        at += 1
    return at if is_content(tokens[at]) and tokens[at] == _unpossessed(tokens[at]) else None


def focus_weights(masked_question: str, decay: float) -> dict[str, float]:
    """The question's content words weighted by nearness to its first wh-word (the wh-word itself where it is one:
    "when"), or to its end where a "do" follows a wh-word asking for a thing or a person (the verb's object: "what do
    the children of E do for a living"): decay ** n for the n-th nearest (query.synthetic.focus_decay), summed over a
    word's repeats; none without a wh-word."""
    tokens = [w.lower() for w in WORD.findall(masked_question)]
    wh = _first_wh(tokens)
    if wh is None:
        return {}
    # "what do the children of E do for a living", "who did the director of E marry": the wh-word is the object of the
    # verb after the subject, at the question's end; the words nearest that tell the answer's relation ("when" and
    # "where" name the answer's kind themselves)
    object_wh = tokens[wh] in THING_WH_WORDS and _do_follows(tokens, wh)
    owned = _owned_head(tokens, wh) if tokens[wh] in THING_WH_WORDS else None
    anchor = len(tokens) - 1 if object_wh else owned or wh
    near = [i for _, i in sorted((abs(i - anchor), i) for i, w in enumerate(tokens) if is_content(w))]
    # a compound nearest asks for its head, its other nouns say which: "who are the national team managers of E" asks for
    # managers, of a national team (`_compounds`)
    if near and not object_wh:
        compound = next(run for run in _compounds(tokens) if near[0] in run)
        ranks = sorted(near.index(i) for i in compound)
        for rank, i in zip(ranks, reversed(compound)):
            near[rank] = i
    weights: dict[str, float] = {}
    for rank, i in enumerate(near):
        weights[tokens[i]] = weights.get(tokens[i], 0.0) + decay**rank
    return weights


def answer_noun(masked_question: str) -> list[str]:
    """The words naming what a question asks for: the content words after its first wh-word where that is "what" or
    "which", a generic noun and its "of" skipped ("which country ...", "what is the name of the country where ...": country;
    "in what year": year); without a wh-word, its first content words ("the country of birth of the singer of E",
    "genre of E?"), after the topic's possessive where that comes first ("E's home country?"), the last of a search's
    words after the topic ("E birth country": country); a wh-word opening a relative clause on the noun a question starts
    with counts as none ("the country where E was born": country, `_relative_wh`), and a "what" or "which" after it
    asks ("The man who coaches E, what is his country of origin?": country); a possessive's words are
    the owner's, not the answer's ("E's club's country?", "what is E's club's country": country), but the wh-word's own
    noun owning one is what is asked for ("which country's league is E's club in": country). None for another
    wh-word ("who", "when": no noun to compare with), where the topic comes first otherwise ("what did E direct"), and
    where a "do" follows the wh-word: what comes next is who does it ("what do the children of E do for a living": not
    children). Of several sentences ending in "?", the last says what is asked for ("How international is the squad at
    E? Which countries do its players turn out for?": countries; "Is E a comedy or what? Which genre?": genre)."""
    asks = [p for p in _SENTENCE_BREAK.split(masked_question.strip()) if p.endswith("?")]
    tokens = [w.lower() for w in WORD.findall(asks[-1] if len(asks) > 1 else masked_question)]
    wh = _first_wh(tokens)
    if wh is not None and _relative_wh(tokens, wh):  # "the country where E was born": the noun before it is asked,
        # unless a wh-word after asks ("The man who coaches E, what is his country of origin?": country)
        wh = next((i for i in range(wh + 1, len(tokens)) if tokens[i] in ("what", "which")), None)
    if wh is not None and (tokens[wh] not in ("what", "which") or _do_follows(tokens, wh)):
        return []
    start = wh + 1 if wh is not None else 0
    # the wh-word's own noun owning another asks for the owner: "which country's league is E's club in": a country
    if wh is not None and start < len(tokens) and _unpossessed(tokens[start]) not in (tokens[start], TOPIC) and is_content(tokens[start]):
        return [_unpossessed(tokens[start])]
    if wh is None and tokens[:1] and _unpossessed(tokens[0]) == TOPIC:
        if tokens[0] == TOPIC:  # a search's words after the topic name a path from it, the last its end: "E birth country"
            return tokens[-1:] if _searched(tokens) else []
        start = 1  # "E's home country?"
    run: list[str] = []
    for token in tokens[start:]:
        if token != TOPIC and _unpossessed(token) == TOPIC and not run:  # "what is E's father's nationality": what E owns
            continue
        if _unpossessed(token) == TOPIC or token in WH_WORDS:  # the topic, or its possessive after the noun ("which
            break  # country is E's club in")
        if is_content(token) and token not in GENERIC_NOUNS and not (token in REQUEST_WORDS and not run):  # "give me the films"
            run = [] if _unpossessed(token) != token else [*run, token]
        elif run:
            break
    return run


# a role the topic has towards the answer, the one word or two ("son or daughter") naming it: "which people have E as a
# parent", "who calls E grandma", "which couple is E the son or daughter of", "people whose parent is E", "E is the
# daughter of whom". Each with what stands for the role read the other way round, "{}" its "the children of E". Not
# "the people who raised E as their mother and father": there the role is the answer's
_ROLE_WORDS = r"(?P<w1>[A-Za-z-]+)(?: (?:or|and) (?P<w2>[A-Za-z-]+))?"
_DETERMINER = r"(?:the|a|an|their|his|her|its) "
_INVERSE_ROLES = (
    (re.compile(rf"\b(?i:have|has|had|having|with) E as (?:{_DETERMINER})?{_ROLE_WORDS}\b"), "are {}"),
    (re.compile(rf"\b(?i:call|calls|called|calling) E (?:{_DETERMINER})?{_ROLE_WORDS}\b"), "are {}"),
    (re.compile(rf"\b(?P<copula>(?i:is|was|are|were)) E {_DETERMINER}{_ROLE_WORDS} of\b"), "{copula} {}"),
    (re.compile(r"\b(?i:whose) (?P<w1>[A-Za-z-]+) (?:is|was) E\b"), "who are {}"),
    (re.compile(rf"\bE (?P<copula>is|was) {_DETERMINER}{_ROLE_WORDS} of\b"), "{} {copula}"),
)


def inverse_role(masked_question: str) -> tuple[int, int, list[str], str] | None:
    """Where the question names a role the topic has towards the answer, not the answer's towards the topic: the span
    to read the other way round, the role's words (lower-cased) and what stands for the span, "{}" in it for "the R of E"
    (R the role read the other way round: "which couple is E the son or daughter of" asks "which couple is the parents
    of E"). None where it names none."""
    for pattern, replacement in _INVERSE_ROLES:
        if found := pattern.search(masked_question):
            words = [w.lower() for w in (found.group("w1"), found.groupdict().get("w2")) if w]
            return found.start(), found.end(), words, replacement.replace("{copula}", (found.groupdict().get("copula") or "").lower())
    return None


def topic_owned_words(masked_question: str, matches: Callable[[str], dict[str, frozenset[str]]]) -> set[str]:
    """The words right after the topic's possessive, possessive endings dropped: what the topic itself has, one step from
    it ("E gets picked for his country": E's national team, not the country of E's club; "E's club's country": the
    club). "his", "her", "its" and "their" are the topic's where it comes before them and no word naming a relation
    (`matches`) does: "the actors of E and their other films" are the actors' films."""
    tokens = [w.lower() for w in WORD.findall(masked_question)]
    first = next((i for i, t in enumerate(tokens) if _unpossessed(t) == TOPIC), None)
    named = next((i for i, t in enumerate(tokens) if is_content(t) and _unpossessed(t) != TOPIC and matches(_unpossessed(t))), len(tokens))
    owned = set()
    for i, t in enumerate(tokens[:-1]):
        owner = (t != TOPIC and _unpossessed(t) == TOPIC) or (t in POSSESSIVE_PRONOUNS and first is not None and first < i < named)
        if owner and is_content(tokens[i + 1]) and _unpossessed(tokens[i + 1]) != TOPIC:
            owned.add(_unpossessed(tokens[i + 1]))
    return owned


def predicate_noun(masked_question: str) -> list[str]:
    """The words a question ending in a copula and a noun says its answer is ("which people from E are judges?": judges;
    "who among the children of E was a poet": poet): the content words after its last copula, an article skipped, where
    nothing else follows them. None where the topic or a function word follows ("which films are about E", "what is E")."""
    tokens = [w.lower() for w in WORD.findall(masked_question)]
    last = max((i for i, t in enumerate(tokens) if t in COPULAS), default=None)
    if last is None:
        return []
    rest = tokens[last + 1 :]
    if rest[:1] and rest[0] in ARTICLES:
        rest = rest[1:]
    return rest if rest and all(is_content(t) and t not in WH_WORDS for t in rest) else []


def path_order(masked_question: str) -> list[str]:
    """The question's content words in the order a path from its topic takes what they name: first what the topic owns
    ("E's spouse's parents": spouse, parents), then the words before the topic from the nearest out ("the nationality of
    the spouse of the parent of E": parent, spouse, nationality; a compound's words in its own order, `_compounds`), then
    those after it ("where were the parents of E born":
    parents, born). Where a relative pronoun makes the topic the subject of the verb after it ("the films that E acted
    in"), that verb comes first; not after an auxiliary ("what position does E play": the position is what E plays, one
    step). None unless the question names one topic."""
    tokens = [w.lower() for w in WORD.findall(masked_question)]
    at = [i for i, t in enumerate(tokens) if _unpossessed(t) == TOPIC]
    if len(at) != 1:
        return []
    end = at[0]
    owned = []
    while tokens[end].endswith(("'", "'s")):
        if end + 1 == len(tokens) or not is_content(tokens[end + 1]):
            break
        end += 1
        owned.append(_unpossessed(tokens[end]))
    # the owned noun runs on as a compound ("the nationality of E's national team coach": the team, its coach, then the
    # nationality) up to a word that reads as a verb: "where were the parents of E's spouse born" is the parents' birth,
    # and a do-form's verb is bare ("what position does E's club play")
    if owned and not DO_FORMS & set(tokens):
        while end + 1 < len(tokens) and is_content(tokens[end + 1]) and not _reads_as_verb(tokens[end + 1]):
            end += 1
            owned.append(_unpossessed(tokens[end]))
    before = [_unpossessed(tokens[i]) for run in reversed(_compounds(tokens, at[0])) for i in run]
    after = [_unpossessed(t) for t in tokens[end + 1 :]]
    subject = at[0] > 0 and tokens[at[0] - 1] in RELATIVE_PRONOUNS or _in_a_reduced_relative(tokens, at[0])
    return [w for w in owned + (after + before if subject else before + after) if is_content(w)]


def _compounds(tokens: list[str], end: int | None = None) -> list[list[int]]:
    """The places of lower-cased tokens in runs, each read in its own order: a compound's nouns ("the national team
    managers of the players at E": the players' national team, then its managers, the head), every other token on its
    own. A verb (`_reads_as_verb`, one in "-ing": "films starring E", or one before an article or the topic: "which
    movies star the actors", "which films star E") or a possessive ends a compound: "who directed films starring E" is
    E's films, then their director. Only the tokens before `end`, where given, read with what follows."""

    def in_a_compound(i: int) -> bool:  # a word before an article or the topic is a verb too: "which movies star the actors"
        word, following = tokens[i], tokens[i + 1] if i + 1 < len(tokens) else ""
        return (is_content(word) and not (_reads_as_verb(word) or word.endswith(("ing", "'", "'s")))
                and following not in ARTICLES | POSSESSIVE_PRONOUNS and _unpossessed(following) != TOPIC)

    runs: list[list[int]] = []
    for i in range(len(tokens) if end is None else end):
        if i and in_a_compound(i) and in_a_compound(i - 1):
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _reads_as_verb(word: str) -> bool:
    """Whether a lower-cased word reads as a verb: a participle (`is_participle`: "based", "born") or an irregular form
    relation names spell otherwise ("wrote", "died")."""
    return is_participle(word) or word in IRREGULAR


def _after_a_phrase(tokens: list[str], i: int) -> bool:
    """Whether a content word (not the masked topic, which is none, nor a wh-word: "where on the pitch") comes right
    before lower-cased `tokens[i]`."""
    return i > 0 and is_content(tokens[i - 1]) and tokens[i - 1] not in WH_WORDS


def _in_a_reduced_relative(tokens: list[str], i: int) -> bool:
    """Whether lower-cased `tokens[i]` is the subject of a relative clause without its pronoun, between the phrase the
    clause tells of and its verb: "the movies E directed", "the person E married"; not the object of a relative clause's
    verb ("the company that produced E headquartered"), nor the subject a question starts with, after its kind ("the
    screenwriter E co-wrote movies with who")."""
    return (_after_a_phrase(tokens, i) and i < len(tokens) - 1 and is_content(tokens[i + 1])
            and (i < 2 or tokens[i - 2] not in RELATIVE_PRONOUNS) and any(t not in ARTICLES for t in tokens[: i - 1]))


def _heads_a_relative(tokens: list[str], i: int) -> bool:
    """Whether the noun at `i`, between an article and the topic, is what a relative clause without its pronoun tells of,
    the topic its subject: "I need the club E plays for", "who coaches the country E represents". Not where an auxiliary
    or a wh-word before the article makes the topic the question's subject ("which country does the club E play in",
    "where is the club E based"), nor where the article's phrase is the subject of a clause on a noun before it ("the year
    the movie E came out"), nor before a participle ("the film E released")."""
    return (i >= 2 and _in_a_reduced_relative(tokens, i + 1) and not _reads_as_verb(tokens[i + 2])
            and tokens[i - 2] not in AUXILIARIES | WH_WORDS and (i < 3 or tokens[i - 3] not in ARTICLES))


def asks_when(masked_question: str) -> bool:
    """Whether the question's first wh-word is "when": it asks for a time."""
    tokens = [w.lower() for w in WORD.findall(masked_question)]
    wh = _first_wh(tokens)
    return wh is not None and tokens[wh] == "when"


def asks_where(masked_question: str) -> bool:
    """Whether the question's first wh-word is "where" with no phrase narrowing it ("where on the pitch" asks for a
    position): it asks for a place, last as first ("E is a club based where?")."""
    tokens = [w.lower() for w in WORD.findall(masked_question)]
    wh = _first_wh(tokens)
    return wh is not None and tokens[wh] == "where" and (wh + 1 == len(tokens) or tokens[wh + 1] not in CHAIN_PREPOSITIONS | PLACE_PREPOSITIONS)


def expected_hops(masked_question: str, words_per_hop: float) -> float:
    """How many relation steps a question with its topic masked as 'E' asks for, read from how many
    content words it spends; the words of a request around it and generic nouns ("name") are no step's."""
    return sum(_unpossessed(w.lower()) not in _NO_STEP_WORDS for w in WORD.findall(masked_question)) / words_per_hop


def named_topics(masked_question: str) -> int:
    """How many entities the question names (its masked topics), at least one."""
    return max(1, sum(_unpossessed(w.lower()) == TOPIC for w in WORD.findall(masked_question)))


def compound_words(masked_question: str, matches: Callable[[str], dict[str, frozenset[str]]]) -> int:
    """How many words of the question only continue the name before them: a word right after another that names a word
    of the same relation's phrase ("national team", "shirt number", "imdb rating": one step's name in two words), or one
    continuing the noun the question asks for where an auxiliary, the topic or the question's end ends it (`answer_noun`:
    "which national team does E represent", "name the national side E represents", "E plays for which national team",
    one kind of answer however its KG names the step; not "which movies star E"), or one joined by a conjunction to a word
    of the same relation ("the sons and daughters of E"). `expected_hops` counts each; one step is named. `matches`: a word's `relation_word_matches`."""
    tokens = [w.lower() for w in WORD.findall(masked_question)]
    noun = answer_noun(masked_question)
    start = next((i for i in range(len(tokens)) if tokens[i : i + len(noun)] == noun), 0) if len(noun) > 1 else 0
    # where the noun's later words are, if an auxiliary, the topic as a relative clause's subject ("the national side E
    # represents") or the end ends it ("which movies star E" runs on into its verb) and it names no peer ("other films":
    # two steps, there and back)
    after = tokens[start + len(noun) : start + len(noun) + 2]
    subject = after[:1] == [TOPIC] and len(after) > 1 and is_content(after[1])
    ended = (not after or after[0] in AUXILIARIES or subject) and not PEER_WORDS & set(noun)
    # not the words a topic owns ("E club country", a search's words): each names its own step, as "E's club's country" does
    owned = start > 0 and _unpossessed(tokens[start - 1]) == TOPIC
    continuing = set(range(start + 1, start + len(noun))) if ended and not owned else set()
    adjacent = sum(not {a, b} & _NO_STEP_WORDS and (i + 1 in continuing or _one_relation(a, b, matches)) for i, (a, b) in enumerate(zip(tokens, tokens[1:])))
    # "the sons and daughters of E", "E's mother and father": two words of one relation joined by a conjunction name one
    # step, as `relation_mentions` counts them
    joined = sum(conjunction in CONJUNCTIONS and not {a, b} & _NO_STEP_WORDS and _one_relation(a, b, matches)
                 for a, conjunction, b in zip(tokens, tokens[1:], tokens[2:]))
    return adjacent + joined


def adverbs(masked_question: str, matches: Callable[[str], dict[str, frozenset[str]]]) -> int:
    """How many of the question's words are adverbs of manner or degree ("what town were they actually born in", "in which
    language was E originally released"): a lowercase word of more than four letters ending in "ly" that names no
    relation (`matches`: a word's `relation_word_matches`). `expected_hops` counts each; none names a step. Not a word
    naming a relation ("which family is E from" where a KG has a family relation) nor a name ("Italy")."""
    return sum(len(w) > 4 and w.endswith("ly") and w.islower() and w not in _NO_STEP_WORDS and not matches(w) for w in WORD.findall(masked_question))


def topic_kind_words(masked_question: str, matches: Callable[[str], dict[str, frozenset[str]]], *,
                     kind_only: Callable[[str], bool] | None = None) -> set[int]:
    """Which words of the question (their places among its words) only say what kind of thing its topic is: a noun
    between an article and the topic ("which person wrote the movie E") or after the topic leading the question, a copula
    and an article ("E is a film written by this person"), that names no relation (`matches`: a word's
    `relation_word_matches`; "the director E" names the step from E by directed_by) or, before the topic, names
    relations only as the kind of their ends (`kind_only`: "in which country is the club E based", where "club" is
    plays_for_club's object), or after an indefinite article, whatever it names ("E is a club from which country": one
    of the clubs, not a step to one; "E is the coach of which team" is a role). `expected_hops` counts each and
    `relation_mentions` would; none is a step. None where nothing else in the question names a relation or asks where
    or when: where the KG's relation names say nothing (ids), a kind and a role read alike."""
    tokens = [_unpossessed(w.lower()) for w in WORD.findall(masked_question)]
    before = {i for i in range(1, len(tokens) - 1) if tokens[i + 1] == TOPIC and tokens[i - 1] in ARTICLES}
    # the topic the subject, first: "which child of E was a poet" asks the child to be one
    after = {3} if len(tokens) > 3 and tokens[0] == TOPIC and tokens[1] in COPULAS and tokens[2] in ARTICLES else set()
    one_of = bool(after) and tokens[2] in ("a", "an") and tokens[4:5] != ["of"]

    def says_a_kind(i: int) -> bool:
        return (not matches(tokens[i]) or (i in after and one_of)
                or (i in before and kind_only is not None and kind_only(tokens[i]) and not _heads_a_relative(tokens, i)))

    kinds = {i for i in before | after if is_content(tokens[i]) and says_a_kind(i)}
    # a question asking where or when asks for a step of its own ("E is a club based where?")
    asks = asks_where(masked_question) or asks_when(masked_question)
    return kinds if asks or any(matches(t) for i, t in enumerate(tokens) if i not in kinds) else set()


def unlinked_names(masked_question: str, matches: Callable[[str], dict[str, frozenset[str]]]) -> set[int]:
    """The places of the words of names left in the question after its entities were masked: runs of capitalised content
    words inside a sentence ("the players at the World Cup who share a club with E"), none the topic, "I", or a word in
    capitals or with one inside ("CEO", "IMDb": as often a relation's name as not). The linker found no such name in the
    KG, so no path can take a step it names: it is context. Not a run with a word naming a relation (`matches`: a word's
    `relation_word_matches`), and none in a question written in Title Case."""
    words = list(WORD.finditer(masked_question))

    def a_name(i: int) -> bool:
        word, before = words[i].group(), masked_question[words[i - 1].end() : words[i].start()] if i else ""
        return (i > 0 and len(word) > 1 and word[0].isupper() and word[1:] == word[1:].lower()
                and is_content(word.lower()) and _unpossessed(word.lower()) not in _NO_STEP_WORDS
                and not any(c in before for c in ".?!:;\""))

    named = [i for i in range(len(words)) if a_name(i)]
    if 2 * len(named) >= sum(w.group()[0].islower() for w in words):  # Title Case: capitals say nothing
        return set()
    runs: list[list[int]] = []
    for i in named:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return {i for run in runs if not any(matches(words[i].group().lower()) for i in run) for i in run}


def words_at(text: str, places: set[int]) -> set[str]:
    """The words of `text` at `places` (among its words, as `WORD` finds them), lower-cased, less a possessive ending."""
    tokens = WORD.findall(text)
    return {_unpossessed(tokens[i].lower()) for i in places}


def without_words(text: str, places: set[int], *, leading: frozenset[str] = ARTICLES) -> str:
    """`text` without the words at `places` (among its words, as `WORD` finds them) and the `leading` words right before
    each run of them: "in which country is the club E based" less "club" reads "in which country is E based"."""
    spans = [m.span() for m in WORD.finditer(text)]
    drop = set(places)
    for i in sorted(places, reverse=True):
        while i > 0 and i - 1 not in drop and text[slice(*spans[i - 1])].lower() in leading:
            drop.add(i := i - 1)
    kept, start = [], 0
    for i in sorted(drop):
        kept.append(text[start : spans[i][0]])
        start = spans[i + 1][0] if i + 1 < len(spans) else spans[i][1]
    return "".join(kept) + text[start:]


def _one_relation(a: str, b: str, matches: Callable[[str], dict[str, frozenset[str]]]) -> bool:
    """Whether two question words are words of one relation's phrases (`matches`: a word's `relation_word_matches`)."""
    return bool(set(matches(a)) & set(matches(b)))


def linked_phrases(masked_question: str, matches: Callable[[str], dict[str, frozenset[str]]] | None = None) -> int:
    """How many times the question links a phrase to the next: by "of", a possessive (a possessive pronoun too: "the
    teammates of E at his club"), a relative pronoun after a content word ("the films that", not "in which"), or the verb
    of a question asking with "do" ("which movies did the directors of E's films make": 3). A nested question spends
    about one content word a step ("the country of the birthplace of the director of E": 3 words, 3 links, 3 steps),
    fewer than `expected_hops` reckons.
    Not links: an "of" with nothing after it ("what was E the director of"), an "of" inside a relation's name ("place
    of birth": both its neighbours words of one relation's phrases, `matches` being a word's `relation_word_matches`), an
    "'s" that is "is" ("who's"), a wh-word after a verb with at most a noun after it ("E starred who", "directed which
    movies"): a relative clause has a verb and what it acts on; and a relative pronoun whose copula restates the noun
    before it ("the individuals who are the parents of E": 1)."""
    tokens = [w.lower() for w in WORD.findall(masked_question)]
    # a question asking with "do" links what it asks for to its subject by the verb after it: "which movies did [the
    # directors of E's films] make" takes the subject's steps and one more
    do = _do_after_wh_phrase(tokens)

    def within_a_name(i: int) -> bool:  # "place of birth", "country of citizenship": words of one relation's phrase
        if matches is None or not 0 < i < len(tokens) - 1 or not (is_content(tokens[i - 1]) and is_content(tokens[i + 1])):
            return False
        return _one_relation(tokens[i - 1], tokens[i + 1], matches)

    def linked_by_copula(i: int) -> bool:
        """A copula between a phrase and the preposition changes nothing where what follows names a step of its own:
        "which players are at E's club" are the players at E's club; "which number is on E's shirt" is E's number, the
        shirt no step: a word of no relation, or one naming just the relations the noun before does (shirt_number's)."""
        if matches is None or i < 2 or tokens[i - 1] not in COPULAS or not _after_a_phrase(tokens, i - 1):
            return False
        named = next((_unpossessed(t) for t in tokens[i + 1 :] if is_content(t) and _unpossessed(t) != TOPIC), None)
        return named is None or (bool(matches(named)) and set(matches(named)) != set(matches(tokens[i - 2])))

    def linked_by_having(i: int) -> bool:
        """"have" between a phrase and a noun naming a step of its own, the noun's phrase going on, links them as "of"
        would: "which national teams have players at E" are the national teams of the players at E; not "which films have
        E as an actor" (no noun after it), nor "which films have been ..." (a verb's auxiliary)."""
        if matches is None or not _after_a_phrase(tokens, i) or len(tokens) < i + 3:
            return False
        noun, going_on, then = _unpossessed(tokens[i + 1]), tokens[i + 2], _unpossessed(tokens[i + 3]) if len(tokens) > i + 3 else ""
        named = is_content(noun) and noun != TOPIC and bool(matches(noun)) and set(matches(noun)) != set(matches(tokens[i - 1]))
        # a phrase after the preposition: the topic, an article, a possessive or a word naming a step ("actors in common
        # with E" share actors, a peer's two steps)
        phrase = then == TOPIC or then in ARTICLES or then in POSSESSIVE_PRONOUNS or (is_content(then) and bool(matches(then)))
        return named and (going_on in RELATIVE_PRONOUNS or (going_on in CHAIN_PREPOSITIONS | {"of"} and phrase))

    def names_a_step_after(i: int) -> bool:
        """Whether the phrase after the preposition at `i` is one a step can reach: a noun naming a relation ("the
        players at E's club") or one the topic comes after ("movies by the director of E", "in common with E"); not a
        setting the question ends on ("E's position on the pitch", "what position is E in the lineup")."""
        noun = next((_unpossessed(t) for t in tokens[i + 1 :] if t not in ARTICLES and t not in POSSESSIVE_PRONOUNS), "")
        leads_on = any(_unpossessed(t) in (TOPIC, PLACEHOLDER) for t in tokens[i + 1 :])
        return matches is None or leads_on or not is_content(noun) or bool(matches(noun))

    def links(i: int, t: str) -> bool:
        after = tokens[i + 1 :]
        if t in HAVING:
            return linked_by_having(i)
        phrase_after = any(is_content(a) or a in (PLACEHOLDER, TOPIC) for a in after)
        if t == "of":  # not after a generic noun: "the name of the director of E" links once
            generic = i > 0 and tokens[i - 1] in GENERIC_NOUNS
            return phrase_after and not within_a_name(i) and not generic
        if t == "from" and not after:  # a stranded "from" is a step of its own, where something is from ("where is E's coach
            return do is None  # from"), unless it is the particle of the verb that makes the link ("where do E's parents come from")
        if t in CHAIN_PREPOSITIONS:  # "movies by the director of E", "the players at E", "starred in movies by"
            # not the preposition of a do-question's verb right after its subject, whose link the verb made ("who does E
            # play for at club level")
            verbs = do is not None and i >= 2 and tokens[i - 2] == TOPIC
            return ((_after_a_phrase(tokens, i) or linked_by_copula(i)) and phrase_after and not within_a_name(i) and not verbs
                    and names_a_step_after(i))
        if t == TOPIC:
            return _in_a_reduced_relative(tokens, i)
        if t in POSSESSIVE_PRONOUNS:  # as "E's" does, unless the preposition before it made the link ("E's mates at his club")
            return i < len(tokens) - 1 and is_content(tokens[i + 1]) and not (i > 0 and links(i - 1, tokens[i - 1]))
        if t.endswith("'s"):
            return is_content(t[:-2]) or t[:-2] == TOPIC
        if t not in RELATIVE_PRONOUNS or len(after) < 2 or not _after_a_phrase(tokens, i):
            return False
        # not one whose copula restates the noun before it: "the individuals who are the parents of E" are the parents
        return not (after[0] in COPULAS and (after[1] in ARTICLES or after[1] in POSSESSIVE_PRONOUNS or after[1].endswith("'s")))

    count, in_relative = int(do is not None), False
    for i, t in enumerate(tokens):
        if links(i, t):
            # a relative clause's first preposition is its verb's, the link its pronoun made: "the actors who appear in E",
            # "the films that are directed by the director of E"
            count += not (in_relative and t in CHAIN_PREPOSITIONS)
            in_relative = t in RELATIVE_PRONOUNS
    return count


def synonym_index(groups: Iterable[Iterable[str]]) -> dict[str, frozenset[str]]:
    """Each word of `groups` (lower-cased) -> its group; a word in a later group leaves the earlier ones (a KG's own
    groups, query.synthetic.synonyms, after `SYNONYMS`)."""
    taken: list[set[str]] = []
    for group in groups:
        words = {w.lower() for w in group}
        for earlier in taken:
            earlier -= words
        taken.append(words)
    return {word: frozenset(group) for group in taken for word in group}


SYNONYMS_OF = synonym_index(SYNONYMS)


def synonyms(a: str, b: str, synonyms_of: dict[str, frozenset[str]] = SYNONYMS_OF) -> bool:
    """Whether two lower-cased words name one relation concept (`synonyms_of`: `synonym_index`, the built-in
    `SYNONYMS`'s by default): "actors" and "starring", "kind" and "genre"; a kin word with "grand" by what follows it
    ("grandkids" and "children", as "kids"). Not a "co-" verb by its verb: "the screenwriter E co-wrote movies with who"
    names the writers by E's kind already, and "co-wrote" for two more steps made three."""
    group = synonyms_of.get(a) or synonyms_of.get(a.removeprefix(GRAND))
    return group is not None and b in group


def _told_apart(a: str, b: str, synonyms_of: dict[str, frozenset[str]]) -> bool:
    """Whether two words are in different synonym groups: alike in spelling, unlike in meaning ("native", "nationality")."""
    group_a, group_b = synonyms_of.get(a), synonyms_of.get(b)
    return group_a is not None and group_b is not None and group_a != group_b


def names_word(word: str, phrase_word: str, synonyms_of: dict[str, frozenset[str]] = SYNONYMS_OF, *, compounds: bool = True) -> bool:
    """Whether a question's word (lower-cased) names a word of a relation's phrase: its synonym (`synonyms`), or a form of it
    (`same_stem`) unless the synonym groups tell the two apart: "native" is a birthplace's word, not "nationality"'s."""
    return synonyms(word, phrase_word, synonyms_of) or (same_stem(word, phrase_word, compounds=compounds) and not _told_apart(word, phrase_word, synonyms_of))


def relation_word_matches(word: str, relations_of: dict[str, list[str]], *, synonyms_of: dict[str, frozenset[str]] = SYNONYMS_OF) -> dict[str, frozenset[str]]:
    """Per relation, the words of its phrases that `word` (lower-cased) names (`names_word`: a form, compounds counted, or a
    synonym by `synonyms_of`: "what kind of film is E", has_genre; "who acted in E", film.film.starring);
    only relations with some. `relations_of`: each word of the KG's relation phrases, the relations it is a word of (a KG
    of thousands of relations has far fewer distinct words). A possessive names what its word does ("E's father's wife")."""
    if not is_content(word):
        return {}
    word = _unpossessed(word)
    if parts := kin_by_marriage(word):  # "father-in-law": what "spouse" and "father" name
        merged: dict[str, frozenset[str]] = {}
        for part in parts:
            for relation, words in relation_word_matches(part, relations_of, synonyms_of=synonyms_of).items():
                merged[relation] = merged.get(relation, frozenset()) | words
        return merged
    found: dict[str, set[str]] = {}
    for phrase_word in relations_of:
        if names_word(word, phrase_word, synonyms_of):
            for relation in relations_of[phrase_word]:
                found.setdefault(relation, set()).add(phrase_word)
    return {r: frozenset(words) for r, words in found.items()}


def _names_peers(word: str) -> bool:
    """A word for those who share something with another: "co-stars", "teammates", "classmates" (not "estimate")."""
    return word.startswith("co-") or (word.endswith(("mate", "mates")) and not word.endswith(("imate", "imates")))


def _asks_for_peers(word: str) -> bool:
    """Whether a lower-cased word asks for peers: one of `PEER_WORDS`, or a "co-..." or "...mates" word."""
    return word in PEER_WORDS or _names_peers(word)


def asks_for_peers(masked_question: str) -> bool:
    """Whether the question asks for things sharing something with its topic (`PEER_WORDS`, "co-...", "...mates")."""
    return any(_asks_for_peers(t.lower()) for t in WORD.findall(masked_question))


def shared_words(masked_question: str) -> list[str]:
    """The question's content words (`words_of`) from its first word asking for peers on (`asks_for_peers`): those
    naming what the peers share. "the cast of the other films of the director of E": other, films, director (the
    films share the director; the cast is asked of them); "who co-starred with E": co-starred. None without one."""
    words = words_of(masked_question)
    first = next((i for i, w in enumerate(words) if _asks_for_peers(w)), len(words))
    return words[first:]


def asks_for_a_peer(masked_question: str) -> bool:
    """Whether what the question asks for is itself a peer of the topic, not a peer on the way: its first wh-word followed
    by "other" ("what other films were made by the directors E worked with"), or its first content words after it a "co-"
    or "-mates" word ("who co-starred with E", "who are E's club teammates") or the answer's noun or verb and then a word
    of sharing ("which movies share actors with E", "what are the films that have the same screenwriter of E", "who acted
    together with E", "who are movie co-writers of E"). Not "the actors of the other films of the director of E" or "who
    directed the films that share actors with E": there the films are the peers. Not "else": "who else starred in E"
    asks for E's other actors, one step."""
    tokens = [w.lower() for w in WORD.findall(masked_question)]
    wh = _first_wh(tokens)
    if wh is None:
        return False
    if tokens[wh + 1 : wh + 2] == ["other"]:
        return True
    first = [t for t in tokens[wh + 1 :] if is_content(t)][:2]
    return any(_names_peers(t) for t in first) or (len(first) == 2 and first[1] in SHARING_WORDS)


# prefixes of a word naming its relation for two steps: "co-starred" there and back (E's films, their other actors),
# "grandchildren" the children's children
GRAND = "grand"
TWICE_PREFIXES = ("co-", GRAND)
IN_LAW = "-in-law"  # "father-in-law": kin by marriage, the spouse's father


def kin_by_marriage(word: str) -> tuple[str, ...]:
    """The kin words a lower-cased word of kin by marriage stands for, a relation each: "father-in-law" the spouse's
    father, "sons-in-law" the children's spouses, "in-laws" the spouse's parents; none for another word."""
    word = _unpossessed(word)
    if word in ("in-law", "in-laws"):
        return ("spouse", "parents")
    kin, in_law, rest = word.partition(IN_LAW)
    return (kin, "spouse") if kin and in_law and rest in ("", "s") else ()


def relation_mentions(masked_question: str, matches: Callable[[str], dict[str, frozenset[str]]]) -> int:
    """How many relation steps the question names, counted on the words of the KG's relation phrases (`matches`: a word's
    `relation_word_matches`). Per relation, its words' most repeated one counts: "release year" is one mention of release_year,
    "directed the films written by the writer of E" two of written_by. A word goes to the relation matching the most words
    of the question; one restating the noun before its relative pronoun is no new mention ("the director that directed E"),
    nor one right after a word of the same relation ("which screenwriter wrote E": the noun and its verb) or joined to one
    by a conjunction ("who are E's mother and father": one step, parents). A word of kin by marriage names both its
    relations (`kin_by_marriage`: "E's father-in-law", two steps). Not a word saying what the topic is
    (`topic_kind_words`: "E is a club from which country")."""
    tokens = [w.lower() for w in WORD.findall(masked_question)]
    kind_words = topic_kind_words(masked_question, matches)
    by_relation: dict[str, dict[int, frozenset[str]]] = {}
    for i, token in enumerate(tokens):
        for relation, words in ({} if i in kind_words else matches(token)).items():
            by_relation.setdefault(relation, {})[i] = words
    taken: set[int] = set()
    mentions = 0
    for relation in sorted(by_relation, key=lambda r: (-len(by_relation[r]), r)):
        own = {i: words for i, words in by_relation[relation].items() if i not in taken}
        taken |= {i for i in own if not kin_by_marriage(tokens[i])}  # "father-in-law" names the spouse and the father
        repeats: dict[str, int] = {}
        for i, words in own.items():
            restated = i >= 2 and (tokens[i - 1] in RELATIVE_PRONOUNS or tokens[i - 1] in CONJUNCTIONS) and i - 2 in own
            if not restated and i - 1 not in own:
                for w in words:  # a "co-" word names its relation there and back ("co-starred"), a "grand" one twice
                    repeats[w] = repeats.get(w, 0) + (2 if tokens[i].startswith(TWICE_PREFIXES) else 1)  # ("grandchildren")
        mentions += max(repeats.values(), default=0)
    return mentions
