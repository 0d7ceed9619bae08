"""A deterministic, CRAG-like synthetic knowledge graph for tests and benchmarks.

CRAG's mock KG (movie, music, sports, finance and an open domain) is not available here, so this
module generates a graph of the same flavour at any size: typed entities with readable, unique labels
("The Silent Harbor (2003 film)", "Mara Quist (actor)", "Velora Dynamics Inc."), typed relations
inside and across domains (an actor born in a city, a film produced by a company), and literal values
as shared nodes ("1994", "$12.50", "7.8/10"), which become hubs as they do in real KGs.

How it is built, so that it is fast, exact and repeatable:

* Every entity kind (movie, actor, city, year, ...) is a pool of integers 0..size-1, and the index
  doubles as the popularity rank: targets are drawn from a truncated power law over the index, so
  index 0 of `movie_genre` or `country` becomes a hub while most actors appear once or twice.
* A relation between two kinds is a block of (head index, tail index) pairs, deduplicated on its own.
  Two blocks never share a triple because no two have the same (relation, head kind, tail kind).
* Pool sizes grow linearly with the edge count. The graph is built a little larger than asked and a
  seeded sample of edges is dropped, so the output has exactly the requested number of triples.
* Labels are built, vectorised, only for entities that end up in an edge. A name is a combination
  of words picked by a seeded bijection of the index (an affine map modulo the number of
  combinations), so two entities of one kind never share a name (past the last combination a
  " II", " III", ... suffix keeps them apart); kinds differ in shape ("(... film)", a legal-form
  suffix, "(actor)", ...), so entities of different kinds never share one either.

Everything is drawn from one `numpy.random.Generator` seeded with `seed`, and the files are written
with fixed settings, so the same (edges, seed) gives a byte-identical file (with the same NumPy and
pyarrow versions: Parquet files record the writer's version).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from kgwalk.errors import KgwalkError

DOMAINS = ("movie", "music", "sports", "finance", "open", "literal")
SCHEMA = pa.schema([("head", pa.string()), ("relation", pa.string()), ("tail", pa.string())])
# Output suffix -> how rows are written; the same suffixes `kgwalk ingest` reads (kgwalk.kg.readers).
OUTPUT_SUFFIXES = (".parquet", ".tsv", ".txt")
_SEPARATOR = {".tsv": "\t", ".txt": "|"}
_BATCH_ROWS = 1_000_000
# Pool sizes below are per unit of scale; a graph of scale 1 has about this many distinct triples
# (measured). The graph is built _HEADROOM times larger than asked, and the surplus dropped at random.
_EDGES_PER_SCALE = 900_000
_HEADROOM = 1.03

# --- word lists: names are combinations of these ------------------------------------------------

_FIRST_A = ("Ma", "Te", "I", "Jo", "Ka", "Li", "Ro", "Sa", "Ve", "Da", "E", "Ni", "A", "Be", "Lu", "Ce",
            "Fa", "Ha", "O", "Zo", "Mi", "Re", "Ta", "No", "Gi", "Pe", "Vi", "Yu")
_FIRST_B = ("ra", "o", "lse", "na", "rin", "lia", "ko", "ven", "dre", "mi", "ta", "ric", "len", "sa",
            "nne", "ris", "l\u00e8ne", "\u00ebl", "ya", "to")  # a few accented (NFC) names, as in real data
_LAST_A = ("Qu", "Vor", "Hal", "Bren", "Cas", "Del", "Fen", "Gar", "Hol", "Kess", "Lind", "Mor", "Nor",
           "Pell", "Rad", "Sten", "Thal", "Ulm", "Wes", "Yar", "Ash", "Brok", "Cor", "Dun", "Elm", "Fair",
           "Grim", "Hart", "Ivan", "Jar")
_LAST_B = ("i", "a", "o", "e", "en", "ar", "", "ov")
_LAST_C = ("st", "ran", "ton", "ley", "ford", "ick", "sen", "berg", "ova", "ez", "ani", "well", "son",
           "more", "ski", "dottir", "ier", "ett", "ham", "wood")

_ADJECTIVES = ("Silent", "Crimson", "Hidden", "Broken", "Golden", "Last", "Distant", "Frozen", "Burning",
               "Quiet", "Wild", "Hollow", "Bitter", "Restless", "Secret", "Fallen", "Endless", "Velvet",
               "Iron", "Paper", "Glass", "Electric", "Lonely", "Savage", "Gentle", "Forgotten", "Scarlet",
               "Shattered", "Northern", "Southern", "Lost", "Sleeping", "Hungry", "Painted", "Sunken",
               "Eternal", "Dark", "Bright", "Little", "Final", "Second", "Wandering", "Dancing", "Falling",
               "Rising", "Silver", "Copper", "Emerald", "Ivory", "Crooked", "Drifting", "Weightless",
               "Pale", "Blind", "Brave", "Cold", "Open", "Shallow", "Midnight", "Sacred", "Wicked", "Lucky",
               "Tender", "Hollywood", "Neon", "Crystal", "Radiant", "Haunted", "Perfect", "Strange", "Sweet",
               "Empty", "Heavy", "Gilded", "Lonesome", "Marble", "Rusty", "Stolen", "Twisted", "Violet")
_NOUNS = ("Harbor", "River", "Garden", "Empire", "Signal", "Horizon", "Machine", "Kingdom", "Witness",
          "Promise", "Season", "Mirror", "Station", "Frontier", "Orchard", "Circus", "Lantern", "Voyage",
          "Shadow", "Island", "Valley", "Summer", "Winter", "Letter", "Bridge", "Engine", "Compass",
          "Cathedral", "Carnival", "Desert", "Forest", "Tide", "Storm", "Echo", "Hunter", "Stranger",
          "Daughter", "Soldier", "Dreamer", "Prophet", "Thief", "Heart", "Crown", "Road", "Tower", "Room",
          "House", "Door", "Window", "Ocean", "Moon", "Sun", "Star", "City", "Country", "Line", "Game",
          "Code", "Fire", "Flood", "Hour", "Night", "Morning", "Paradise", "Labyrinth", "Archive",
          "Reckoning", "Covenant", "Exile", "Requiem", "Ballad", "Symphony", "Carousel", "Meridian",
          "Threshold", "Sanctuary", "Outpost", "Colony", "Asylum", "Legacy", "Rain", "Snow", "Wind", "Mountain",
          "Highway", "Meadow", "Sky", "Wave", "Flame", "Stone", "Feather", "Diamond", "Angel", "Ghost", "Queen",
          "King", "Lover", "Runner", "Sister", "Brother")
_FILM_LEADS = ("", "The ", "A ", "Beyond the ", "Return to the ", "Under the ", "Letters from the ", "Song of the ")
_FILM_TAILS = ("", " Rising", " at Dawn", " in Winter", " of the North", " Returns", ": Origins",
               ": The Reckoning", " Forever", " After Midnight")
_SONG_LEADS = ("", "My ", "Your ", "Our ", "Every ", "No More ", "Only ", "Sweet ", "Tell Me ", "Oh ", "Dear ",
               "Little ")
_SONG_TAILS = ("", " Blues", " Song", " Lullaby", " Serenade", " Anthem", " Dance", " Again", " Tonight",
               " on Fire", " of Mine", " in the Rain", " Tomorrow", " Forever", " at Midnight", " Goodbye")
_ALBUM_LEADS = ("", "The ", "Songs from the ", "Live at the ", "Tales of the ", "Notes on the ")
_ALBUM_TAILS = ("", " Sessions", " Tapes", " Chronicles", " Vol. 2")
_BAND_LEADS = ("The ", "")
_BAND_NOUNS = ("Owls", "Foxes", "Lanterns", "Machines", "Rivers", "Ghosts", "Satellites", "Wolves",
               "Strangers", "Kings", "Echoes", "Sparrows", "Pilots", "Tigers", "Comets", "Saints",
               "Sailors", "Mirrors", "Ravens", "Dreamers", "Engines", "Hearts", "Shadows", "Giants",
               "Horses", "Clouds", "Keys", "Wires", "Flowers", "Bandits", "Arrows", "Lovers", "Monks",
               "Drifters", "Orphans", "Martyrs", "Crows", "Vandals", "Daggers", "Pirates", "Jets", "Rebels",
               "Magpies", "Tremors", "Outlaws")
_BAND_TAILS = ("", " Collective", " Orchestra", " Trio", " Quartet", " Club", " Experience", " Project",
               " Revival", " Ensemble")

_BRAND_A = ("Vel", "Nex", "Quan", "Aur", "Lum", "Cor", "Zen", "Tri", "Ver", "Om", "Sol", "Kin", "Arc", "Hel",
            "Nov", "Pax", "Syn", "Tal", "Ori", "Cal", "Dyn", "Mer", "Str", "Gal", "Vir", "Ax", "Bel", "Cyr",
            "Eon", "Fer", "Lyr", "Mag", "Neo", "Ost", "Prim", "Rho", "Sen", "Tor", "Ul", "Zyl")
_BRAND_B = ("ora", "ex", "tis", "ion", "ara", "ium", "ova", "eon", "ix", "ant", "ica", "yx", "ent", "ada",
            "en", "us", "ia", "os", "ity", "aro", "elle", "ir", "une", "amo", "eth", "ano", "ela", "ari", "iro",
            "olis")
# Company industry word -> sector (GICS-like); a company's sector follows from its name.
_INDUSTRY_SECTOR = {
    "Dynamics": "Industrials", "Systems": "Information Technology", "Software": "Information Technology",
    "Semiconductors": "Information Technology", "Networks": "Communication Services",
    "Telecom": "Communication Services", "Media": "Communication Services",
    "Pictures": "Communication Services", "Studios": "Communication Services",
    "Entertainment": "Communication Services", "Films": "Communication Services", "Capital": "Financials",
    "Bancorp": "Financials", "Insurance": "Financials", "Energy": "Energy", "Petroleum": "Energy",
    "Foods": "Consumer Staples", "Beverages": "Consumer Staples", "Pharmaceuticals": "Health Care",
    "Biotech": "Health Care", "Health": "Health Care", "Logistics": "Industrials", "Airlines": "Industrials",
    "Robotics": "Industrials", "Motors": "Consumer Discretionary", "Retail": "Consumer Discretionary",
    "Apparel": "Consumer Discretionary", "Materials": "Materials", "Mining": "Materials",
    "Chemicals": "Materials", "Utilities": "Utilities", "Realty": "Real Estate",
}
_INDUSTRIES = tuple(_INDUSTRY_SECTOR)
_SECTORS = tuple(dict.fromkeys(_INDUSTRY_SECTOR.values()))
_FILM_INDUSTRIES = ("Pictures", "Studios", "Entertainment", "Films", "Media")
_LEGAL_FORMS = ("Inc.", "Corp.", "Ltd.", "plc", "Group", "AG", "S.A.", "N.V.", "LLC")
_EXCHANGES = ("Northbridge Stock Exchange", "Meridian Exchange", "Pacific Rim Securities Exchange",
              "Continental Bourse", "Harbor City Stock Exchange", "Eastern Markets Exchange")
_LABEL_FORMS = ("Records", "Music", "Recordings", "Sound", "Audio", "Tone", "Grooves", "Label Group")
_ORG_KINDS = ("University", "College", "Academy", "Institute", "Foundation", "Society", "Museum",
              "Observatory", "Council", "Library")
_ORG_FIELDS = ("", " of Technology", " of Arts", " of Science", " of Medicine", " of Music", " of History",
               " for Peace", " of Law", " of Letters")
_SCHOOL_KINDS = ("University", "College", "Academy", "Institute")

_CITY_PREFIXES = ("", "Port ", "San ", "New ", "Lake ", "Fort ", "North ", "East ")
_CITY_A = ("Vel", "Ash", "Bran", "Cor", "Dun", "El", "Fal", "Glen", "Har", "Ing", "Kar", "Lor", "Mar",
           "Nor", "Ost", "Pen", "Quel", "Ros", "Sel", "Tam", "Ul", "Var", "Wen", "Yor", "Zan", "Bel",
           "Cal", "Dor", "Kes", "Mon", "Rav", "Sten", "Tor", "Val", "Wil", "Hal", "Lin", "Mer", "Or", "Sar")
_CITY_MIDDLES = ("", "a", "e", "i", "o", "er", "an", "el", "or", "in", "ber", "ling", "ham", "ster", "wyn",
                 "ves", "mar", "den", "ros", "tal")
_CITY_ENDINGS = ("ton", "ville", "burg", "ford", "mouth", "field", "haven", "dale", "wick", "stead",
                 "bridge", "caster", "minster", "by", "holm", "vik", "grad", "pur", "abad", "polis", "ora",
                 "ano", "eda", "ir", "ow")
_COUNTRY_A = ("Ald", "Bor", "Cand", "Dar", "Eld", "Fen", "Gal", "Hest", "Ir", "Jor", "Kal", "Lur", "Mir",
              "Nov", "Ost", "Pal", "Qar", "Rus", "Sol", "Tav", "Ur", "Val", "Wes", "Xan", "Yal", "Zer")
_COUNTRY_ENDINGS = ("ia", "land", "stan", "ador", "ovia", "ica", "onia", "esh", "mark", "ania")
_COUNTRIES = 195
_CONTINENTS = ("Africa", "Asia", "Europe", "North America", "South America", "Oceania")
_MOVIE_GENRES = ("Drama", "Comedy", "Thriller", "Action", "Romance", "Horror", "Crime", "Documentary",
                 "Adventure", "Science Fiction", "Animation", "Family", "Fantasy", "Mystery", "Biography",
                 "History", "War", "Musical", "Western", "Sport Film", "Film Noir", "Short Film")
_MUSIC_GENRES = ("Pop", "Rock", "Hip Hop", "Electronic", "Jazz", "Country", "R&B", "Classical", "Folk",
                 "Metal", "Indie", "Soul", "Blues", "Reggae", "Punk", "Latin", "Funk", "Gospel", "Ambient",
                 "K-pop")
_SPORTS = ("football", "basketball", "baseball")
_SPORT_SHARES = (0.5, 0.3, 0.2)
_ATHLETE_ROLES = ("footballer", "basketball player", "baseball player")
_POSITIONS = (
    ("goalkeeper", "centre-back", "full-back", "defensive midfielder", "midfielder", "winger", "striker"),
    ("point guard", "shooting guard", "small forward", "power forward", "center"),
    ("pitcher", "catcher", "first baseman", "second baseman", "shortstop", "third baseman", "outfielder"),
)
_LEAGUE_REGIONS = ("Premier", "Continental", "Northern", "Southern", "Atlantic", "Pacific", "Central", "Coastal")
_LEAGUE_FORMS = ("Football League", "Basketball Association", "Baseball League")
_MASCOTS = ("Falcons", "Rovers", "Wolves", "Comets", "Titans", "Rangers", "Mariners", "Pioneers",
            "Stallions", "Hornets", "Tigers", "Bears", "Sharks", "Knights", "Kings", "Giants", "United",
            "City", "Athletic", "Wanderers", "Dynamo", "Spartans", "Raptors", "Eagles", "Lions", "Storm",
            "Thunder", "Express", "Miners", "Warriors")
_MUSICIAN_ROLES = ("singer", "musician", "rapper", "composer", "guitarist")
_OPEN_ROLES = ("politician", "writer", "scientist", "journalist", "painter", "architect")

_LETTERS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
# The names of each kind: one word from each list, in order. Every space must spell each combination
# differently (no repeated word, no two ways to split a name); tests enumerate them all to check.
_NAME_SPACES = {
    "person": (_FIRST_A, _FIRST_B, (" ",), _LAST_A, _LAST_B, _LAST_C),
    "film": (_FILM_LEADS, _ADJECTIVES, (" ",), _NOUNS, _FILM_TAILS),
    "song": (_SONG_LEADS, _ADJECTIVES, (" ",), _NOUNS, _SONG_TAILS),
    "album": (_ALBUM_LEADS, _ADJECTIVES, (" ",), _NOUNS, _ALBUM_TAILS),
    "band": (_BAND_LEADS, _ADJECTIVES, (" ",), _BAND_NOUNS, _BAND_TAILS),
    "record_label": (_BRAND_A, _BRAND_B, (" ",), _LABEL_FORMS),
    "company": (_BRAND_A, _BRAND_B, (" ",), _INDUSTRIES, (" ",), _LEGAL_FORMS),
    "organisation": (_BRAND_A, _BRAND_B, (" ",), _ORG_KINDS, _ORG_FIELDS),
    "city": (_CITY_PREFIXES, _CITY_A, _CITY_MIDDLES, _CITY_ENDINGS),
    "country": (_COUNTRY_A, _COUNTRY_ENDINGS),
    "ticker": (_LETTERS, _LETTERS, _LETTERS, _LETTERS, ("", *_LETTERS)),  # 4 or 5 letters
}

_FIRST_YEAR, _LAST_YEAR = 1800, 2025
_FIRST_DAY, _END_DAY = np.datetime64("1950-01-01"), np.datetime64("2026-01-01")
_RATINGS = 90  # 1.0/10 .. 9.9/10
_BUDGETS = 400  # $1 million .. $400 million
_PRICES = 1_000_000  # $0.01 .. $10,000.00
_CAP_EXPONENTS = 7  # market caps with 3 significant digits, $1.00M .. $9.99T


# --- names ----------------------------------------------------------------------------------------


def _roman(n: int) -> str:
    numerals = ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
                (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))
    out = ""
    for value, numeral in numerals:
        count, n = divmod(n, value)
        out += numeral * count
    return out


@dataclass(frozen=True)
class _Combinations:
    """A seeded bijection from 0..size-1 onto the digits of a mixed-radix number (one digit per radix)."""

    radices: tuple[int, ...]
    multiplier: int
    shift: int

    @classmethod
    def make(cls, rng: np.random.Generator, radices: Sequence[int]) -> _Combinations:
        size = math.prod(radices)
        if size >= 2**32:  # keeps multiplier * index inside uint64
            raise ValueError(f"combination space too large: {size}")
        multiplier = int(rng.integers(1, size)) if size > 1 else 1
        while math.gcd(multiplier, size) != 1:  # coprime, so the affine map is a bijection
            multiplier = int(rng.integers(1, size))
        return cls(tuple(radices), multiplier, int(rng.integers(size)))

    @property
    def size(self) -> int:
        return math.prod(self.radices)

    def digits(self, index: np.ndarray) -> list[np.ndarray]:
        """One digit array per radix; indices past `size` wrap around (see `_Names.names`)."""
        size = np.uint64(self.size)
        combo = (index.astype(np.uint64) % size * np.uint64(self.multiplier) + np.uint64(self.shift)) % size
        out = []
        for radix in self.radices:
            out.append((combo % np.uint64(radix)).astype(np.int64))
            combo //= np.uint64(radix)
        return out


@dataclass(frozen=True)
class _Names:
    """Unique names of one entity kind: index -> one combination of words, one word per list."""

    words: tuple[pa.Array, ...]
    combinations: _Combinations

    @classmethod
    def make(cls, rng: np.random.Generator, space: str) -> _Names:
        """Names from `_NAME_SPACES[space]`, in an order drawn from `rng`."""
        word_lists = _NAME_SPACES[space]
        return cls(tuple(pa.array(w, pa.string()) for w in word_lists), _Combinations.make(rng, [len(w) for w in word_lists]))

    def digits(self, index: np.ndarray) -> list[np.ndarray]:
        return self.combinations.digits(index)

    def names(self, index: np.ndarray) -> pa.Array:
        words = [pc.take(w, d) for w, d in zip(self.words, self.digits(index))]
        name = pc.binary_join_element_wise(*words, "")
        rounds = index // self.combinations.size
        if rounds.size and rounds.max() > 0:  # more entities than combinations: " II", " III", ... keep them apart
            suffixes = pa.array([""] + [f" {_roman(r + 1)}" for r in range(1, int(rounds.max()) + 1)])
            name = pc.binary_join_element_wise(name, pc.take(suffixes, rounds), "")
        return name


def _decorate(names: pa.Array, *parts: pa.Array | str) -> pa.Array:
    """`names` followed by `parts` (strings, or arrays aligned with `names`), concatenated."""
    return pc.binary_join_element_wise(names, *parts, "")


def _fixed(labels: Sequence[str]) -> Callable[[np.ndarray], pa.Array]:
    words = pa.array(labels, pa.string())
    return lambda index: pc.take(words, index)


def _as_text(values: np.ndarray) -> pa.Array:
    return pc.cast(pa.array(values), pa.string())


def _role_label(names: _Names, roles: Sequence[str], role_of: np.ndarray | None = None) -> Callable[[np.ndarray], pa.Array]:
    """'Name (role)': `role_of[i]` picks the role of entity i (the first role when None)."""
    role_words = pa.array([f" ({r})" for r in roles], pa.string())

    def label(index: np.ndarray) -> pa.Array:
        role = np.zeros(index.size, np.int64) if role_of is None else role_of[index]
        return _decorate(names.names(index), pc.take(role_words, role))

    return label


# --- literal values -------------------------------------------------------------------------------


def _year_label(index: np.ndarray) -> pa.Array:
    return _as_text(index + _FIRST_YEAR)


def _date_label(index: np.ndarray) -> pa.Array:
    return pa.array(np.datetime_as_string(_FIRST_DAY + index.astype("timedelta64[D]"), unit="D"), pa.string())


def _rating_label(index: np.ndarray) -> pa.Array:
    return pa.array([f"{(i + 10) / 10:.1f}/10" for i in index.tolist()], pa.string())


def _budget_label(index: np.ndarray) -> pa.Array:
    return pa.array([f"${i + 1} million" for i in index.tolist()], pa.string())


def _price_label(index: np.ndarray) -> pa.Array:
    cents = index + 1
    return _decorate(pa.scalar("$"), _as_text(cents // 100), ".", pc.utf8_lpad(_as_text(cents % 100), 2, "0"))


def _cap_label(index: np.ndarray) -> pa.Array:
    """Market caps: index = exponent * 900 + (mantissa - 100); value = mantissa * 10**(exponent - 2) $M."""
    out = []
    for exponent, mantissa in zip((index // 900).tolist(), (index % 900 + 100).tolist()):
        millions = mantissa * 10.0 ** (exponent - 2)
        unit, scale = ("T", 1e6) if millions >= 1e6 else ("B", 1e3) if millions >= 1e3 else ("M", 1.0)
        out.append(f"${millions / scale:.3g}{unit}")
    return pa.array(out, pa.string())


def _cap_index(millions: np.ndarray) -> np.ndarray:
    """Market-cap-kind indices of values in $M, rounded to 3 significant digits (values in [1, 9.99e6])."""
    exponent = np.floor(np.log10(millions)).astype(np.int64)
    mantissa = np.rint(millions / 10.0 ** (exponent - 2)).astype(np.int64)
    carry = mantissa >= 1000  # 999.6 rounds up to the next power of ten
    exponent, mantissa = exponent + carry, np.where(carry, 100, mantissa)
    return exponent * 900 + (mantissa - 100)


# --- the graph under construction -----------------------------------------------------------------


@dataclass
class _Kind:
    name: str
    domain: str
    size: int
    label: Callable[[np.ndarray], pa.Array]  # local indices -> labels
    offset: int  # first global node index


@dataclass
class _Block:
    relation: str
    head_kind: str
    heads: np.ndarray
    tail_kind: str
    tails: np.ndarray


@dataclass
class _Builder:
    rng: np.random.Generator
    scale: float  # pool sizes are `scale` times their per-unit size (see _EDGES_PER_SCALE)
    kinds: dict[str, _Kind] = field(default_factory=dict)
    blocks: list[_Block] = field(default_factory=list)

    def kind(self, name: str, domain: str, size: int, label: Callable[[np.ndarray], pa.Array]) -> int:
        offset = sum(k.size for k in self.kinds.values())
        self.kinds[name] = _Kind(name, domain, size, label, offset)
        return size

    def scaled(self, per_unit: float) -> int:
        return max(1, round(per_unit * self.scale))

    def some(self, count: int, share: float) -> np.ndarray:
        """Indices 0..count-1, each kept with probability `share`."""
        return np.flatnonzero(self.rng.random(count) < share)

    def several(self, heads: np.ndarray, mean: float, most: int) -> np.ndarray:
        """Heads of a multi-valued relation: each head 1 + Poisson(mean - 1) times, at most `most`."""
        return np.repeat(heads, np.minimum(1 + self.rng.poisson(mean - 1, heads.size), most))

    def popular(self, size: int, count: int, exponent: float) -> np.ndarray:
        """`count` draws from 0..size-1 with P(i) ~ (i + 1) ** -exponent: index 0 is the biggest hub."""
        u = self.rng.random(count)
        if exponent == 1.0:
            x = np.exp(u * math.log(size + 1))
        else:
            e = 1.0 - exponent
            x = (1.0 + u * ((size + 1.0) ** e - 1.0)) ** (1.0 / e)
        return np.minimum(x.astype(np.int64) - 1, size - 1)

    def years(self, count: int, first: int, last: int, growth: float) -> np.ndarray:
        """Year-kind indices, more of them recent: P(year) grows by e every `growth` years."""
        span = np.arange(first, last + 1)
        weights = np.exp((span - first) / growth)
        return self.rng.choice(span, count, p=weights / weights.sum()) - _FIRST_YEAR

    def birth_years(self, count: int) -> np.ndarray:
        return np.clip(np.rint(self.rng.normal(1972, 15, count)), 1920, 2006).astype(np.int64) - _FIRST_YEAR

    def link(self, relation: str, head_kind: str, heads: np.ndarray, tail_kind: str, tails: np.ndarray) -> None:
        self.blocks.append(_Block(relation, head_kind, heads, tail_kind, tails))

    def used(self, kind: str) -> np.ndarray:
        """Distinct indices of `kind` that some relation already links to (as head or tail)."""
        hits = [b.heads for b in self.blocks if b.head_kind == kind] + [b.tails for b in self.blocks if b.tail_kind == kind]
        return np.unique(np.concatenate(hits)) if hits else np.zeros(0, np.int64)

    def person_facts(self, kind: str, born_in: float, born_year: float, citizen_of: float = 0.0) -> None:
        """Birthplace (a city: a cross-domain link), birth year and citizenship for some linked people."""
        people = self.used(kind)
        cities, countries = self.kinds["city"].size, self.kinds["country"].size
        heads = people[self.some(people.size, born_in)]
        self.link("born_in", kind, heads, "city", self.popular(cities, heads.size, 1.0))
        heads = people[self.some(people.size, born_year)]
        self.link("born_year", kind, heads, "year", self.birth_years(heads.size))
        heads = people[self.some(people.size, citizen_of)]
        self.link("citizen_of", kind, heads, "country", self.popular(countries, heads.size, 0.9))


# --- the five domains -----------------------------------------------------------------------------


def _literals(b: _Builder) -> None:
    b.kind("year", "literal", _LAST_YEAR - _FIRST_YEAR + 1, _year_label)
    b.kind("date", "literal", int((_END_DAY - _FIRST_DAY).astype(np.int64)), _date_label)
    b.kind("rating", "literal", _RATINGS, _rating_label)
    b.kind("budget", "literal", _BUDGETS, _budget_label)
    b.kind("share_price", "literal", _PRICES, _price_label)
    b.kind("market_cap", "literal", _CAP_EXPONENTS * 900, _cap_label)


def _open_domain(b: _Builder) -> None:
    """Cities, countries, continents, organisations and people outside the other domains."""
    cities = b.kind("city", "open", b.scaled(8_000),
                    _Names.make(b.rng, "city").names)
    b.kind("country", "open", _COUNTRIES, _Names.make(b.rng, "country").names)
    b.kind("continent", "open", len(_CONTINENTS), _fixed(_CONTINENTS))
    city_country = b.popular(_COUNTRIES, cities, 0.9)
    b.link("located_in", "city", np.arange(cities), "country", city_country)
    countries_with_cities, first_city = np.unique(city_country, return_index=True)
    b.link("capital_of", "city", first_city, "country", countries_with_cities)  # the biggest city of each
    b.link("located_in", "country", np.arange(_COUNTRIES), "continent", b.popular(len(_CONTINENTS), _COUNTRIES, 0.5))
    heads = b.some(cities, 0.2)
    b.link("founded_year", "city", heads, "year", b.rng.integers(1800, 1950, heads.size) - _FIRST_YEAR)

    org_names = _Names.make(b.rng, "organisation")
    orgs = b.kind("organisation", "open", b.scaled(6_000), org_names.names)
    heads = b.some(orgs, 0.9)
    b.link("headquartered_in", "organisation", heads, "city", b.popular(cities, heads.size, 1.1))
    heads = b.some(orgs, 0.6)
    b.link("founded_year", "organisation", heads, "year", b.years(heads.size, 1800, 2020, 80.0))
    org_kind = org_names.digits(np.arange(orgs))[_NAME_SPACES["organisation"].index(_ORG_KINDS)]
    schools = np.flatnonzero(np.isin(org_kind, [_ORG_KINDS.index(k) for k in _SCHOOL_KINDS]))

    people = b.scaled(45_000)
    role = b.rng.integers(len(_OPEN_ROLES), size=people)
    b.kind("person", "open", people, _role_label(_Names.make(b.rng, "person"), _OPEN_ROLES, role))
    heads = b.some(people, 0.6)
    b.link("citizen_of", "person", heads, "country", b.popular(_COUNTRIES, heads.size, 0.9))
    heads = b.some(people, 0.5)
    b.link("born_in", "person", heads, "city", b.popular(cities, heads.size, 1.0))
    heads = b.some(people, 0.4)
    b.link("born_year", "person", heads, "year", b.birth_years(heads.size))
    if schools.size:
        heads = b.some(people, 0.25)
        b.link("educated_at", "person", heads, "organisation", schools[b.popular(schools.size, heads.size, 1.0)])


def _finance_domain(b: _Builder) -> np.ndarray:
    """Listed and private companies; returns the film companies (producers for the movie domain)."""
    cities = b.kinds["city"].size
    names = _Names.make(b.rng, "company")
    companies = b.kind("company", "finance", b.scaled(18_000), names.names)
    industry = names.digits(np.arange(companies))[_NAME_SPACES["company"].index(_INDUSTRIES)]
    b.kind("sector", "finance", len(_SECTORS), _fixed(_SECTORS))
    b.kind("exchange", "finance", len(_EXCHANGES), _fixed(_EXCHANGES))
    b.kind("ticker", "literal", companies, _Names.make(b.rng, "ticker").names)
    ceos = b.kind("businessperson", "finance", b.scaled(14_000),
                  _role_label(_Names.make(b.rng, "person"), ("businessperson",)))
    everyone = np.arange(companies)
    sector_of_industry = np.array([_SECTORS.index(s) for s in _INDUSTRY_SECTOR.values()])
    b.link("in_sector", "company", everyone, "sector", sector_of_industry[industry])
    listed = b.some(companies, 0.6)
    b.link("ticker", "company", listed, "ticker", listed)  # ticker i belongs to company i
    b.link("listed_on", "company", listed, "exchange", b.popular(len(_EXCHANGES), listed.size, 1.0))
    caps = np.clip(b.rng.lognormal(math.log(2_000), 1.8, listed.size), 1.0, 9.99e6)
    b.link("market_cap", "company", listed, "market_cap", _cap_index(caps))
    prices = np.clip(np.rint(b.rng.lognormal(math.log(40), 1.0, listed.size) * 100), 1, _PRICES)
    b.link("share_price", "company", listed, "share_price", prices.astype(np.int64) - 1)
    heads = b.some(companies, 0.75)
    b.link("has_ceo", "company", heads, "businessperson", b.popular(ceos, heads.size, 0.3))
    heads = b.some(companies, 0.95)
    b.link("headquartered_in", "company", heads, "city", b.popular(cities, heads.size, 1.1))
    heads = b.some(companies, 0.7)
    b.link("founded_year", "company", heads, "year", b.years(heads.size, 1850, 2023, 60.0))
    b.person_facts("businessperson", born_in=0.3, born_year=0.6, citizen_of=0.5)
    return np.flatnonzero(np.isin(industry, [_INDUSTRIES.index(i) for i in _FILM_INDUSTRIES]))


def _movie_domain(b: _Builder, producers: np.ndarray) -> None:
    movies = b.scaled(32_000)
    release = b.years(movies, 1920, 2024, 30.0)
    titles = _Names.make(b.rng, "film")
    b.kind("movie", "movie", movies,
           lambda i: _decorate(titles.names(i), " (", _year_label(release[i]), " film)"))
    actors = b.kind("actor", "movie", b.scaled(100_000), _role_label(_Names.make(b.rng, "person"), ("actor",)))
    directors = b.kind("director", "movie", b.scaled(14_000), _role_label(_Names.make(b.rng, "person"), ("director",)))
    b.kind("movie_genre", "movie", len(_MOVIE_GENRES), _fixed(_MOVIE_GENRES))

    everyone = np.arange(movies)
    b.link("release_year", "movie", everyone, "year", release)
    heads = b.some(movies, 0.97)
    b.link("directed_by", "movie", heads, "director", b.popular(directors, heads.size, 0.9))
    heads = b.several(everyone, 3.5, 12)
    b.link("starred_actors", "movie", heads, "actor", b.popular(actors, heads.size, 0.55))
    heads = b.several(everyone, 1.5, 4)
    b.link("has_genre", "movie", heads, "movie_genre", b.popular(len(_MOVIE_GENRES), heads.size, 1.0))
    heads = b.some(movies, 0.85)
    ratings = np.clip(np.rint(b.rng.normal(6.4, 1.1, heads.size) * 10), 10, 99).astype(np.int64) - 10
    b.link("rating", "movie", heads, "rating", ratings)
    heads = b.some(movies, 0.5)
    budgets = np.clip(np.rint(b.rng.lognormal(math.log(20), 1.0, heads.size)), 1, _BUDGETS).astype(np.int64) - 1
    b.link("budget", "movie", heads, "budget", budgets)
    if producers.size:
        heads = b.some(movies, 0.7)
        b.link("produced_by", "movie", heads, "company", producers[b.popular(producers.size, heads.size, 1.2)])
    b.person_facts("actor", born_in=0.25, born_year=0.3)
    b.person_facts("director", born_in=0.4, born_year=0.5)


def _music_domain(b: _Builder) -> None:
    songs = b.scaled(80_000)
    musicians = b.scaled(20_000)
    role = b.rng.integers(len(_MUSICIAN_ROLES), size=musicians)
    b.kind("musician", "music", musicians, _role_label(_Names.make(b.rng, "person"), _MUSICIAN_ROLES, role))
    band_names = _Names.make(b.rng, "band")
    bands = b.kind("band", "music", b.scaled(4_000), lambda i: _decorate(band_names.names(i), " (band)"))
    labels = b.kind("record_label", "music", b.scaled(400),
                    _Names.make(b.rng, "record_label").names)
    b.kind("music_genre", "music", len(_MUSIC_GENRES), _fixed(_MUSIC_GENRES))

    # Songs come in albums of about ten; a song shares its album's artist and (mostly) its date.
    album_end = np.cumsum(1 + b.rng.poisson(9, songs))
    album_of_song = np.searchsorted(album_end, np.arange(songs), side="right")
    albums = int(album_of_song[-1]) + 1
    song_titles = _Names.make(b.rng, "song")
    album_titles = _Names.make(b.rng, "album")
    b.kind("song", "music", songs, lambda i: _decorate(song_titles.names(i), " (song)"))
    b.kind("album", "music", albums, lambda i: _decorate(album_titles.names(i), " (album)"))

    album_years = b.years(albums, 1955, 2024, 25.0) + _FIRST_YEAR
    album_year_start = (album_years - 1970).astype("datetime64[Y]").astype("datetime64[D]")
    album_date = (album_year_start - _FIRST_DAY).astype(np.int64) + b.rng.integers(0, 365, albums)
    by_band = b.rng.random(albums) < 0.4
    album_artist = np.where(by_band, b.popular(bands, albums, 0.6), b.popular(musicians, albums, 0.6))
    for artist_kind, mine in (("band", by_band), ("musician", ~by_band)):
        album_ids = np.flatnonzero(mine)
        b.link("performed_by", "album", album_ids, artist_kind, album_artist[album_ids])
        song_ids = np.flatnonzero(mine[album_of_song])
        b.link("performed_by", "song", song_ids, artist_kind, album_artist[album_of_song[song_ids]])
    everyone = np.arange(albums)
    b.link("release_date", "album", everyone, "date", album_date)
    heads = b.several(everyone, 1.3, 3)
    b.link("has_genre", "album", heads, "music_genre", b.popular(len(_MUSIC_GENRES), heads.size, 1.0))
    heads = b.some(songs, 0.9)
    b.link("on_album", "song", heads, "album", album_of_song[heads])
    heads = b.some(songs, 0.3)
    b.link("release_date", "song", heads, "date", album_date[album_of_song[heads]])
    heads = b.some(songs, 0.2)
    b.link("has_genre", "song", heads, "music_genre", b.popular(len(_MUSIC_GENRES), heads.size, 1.0))

    artists = b.used("musician")
    heads = artists[b.some(artists.size, 0.25)]
    b.link("member_of", "musician", heads, "band", b.popular(bands, heads.size, 0.8))
    heads = artists[b.some(artists.size, 0.6)]
    b.link("signed_to", "musician", heads, "record_label", b.popular(labels, heads.size, 1.1))
    groups = b.used("band")
    heads = groups[b.some(groups.size, 0.7)]
    b.link("signed_to", "band", heads, "record_label", b.popular(labels, heads.size, 1.1))
    heads = groups[b.some(groups.size, 0.5)]
    b.link("founded_year", "band", heads, "year", b.years(heads.size, 1955, 2022, 25.0))
    b.person_facts("musician", born_in=0.3, born_year=0.4)


def _sports_domain(b: _Builder) -> None:
    cities = b.kinds["city"].size
    leagues = len(_LEAGUE_REGIONS)
    b.kind("league", "sports", leagues * len(_SPORTS),
           _fixed([f"{region} {form}" for form in _LEAGUE_FORMS for region in _LEAGUE_REGIONS]))
    b.kind("position", "sports", sum(map(len, _POSITIONS)), _fixed([p for ps in _POSITIONS for p in ps]))
    position_offset = np.cumsum([0, *map(len, _POSITIONS)])

    # Teams are grouped by sport; a team is named after the city it is located in.
    per_sport = [b.scaled(2_000 * share) for share in _SPORT_SHARES]
    team_offset = np.cumsum([0, *per_sport])
    teams = int(team_offset[-1])
    assert teams <= cities * len(_MASCOTS)  # one (city, mascot) name per team
    team_sport = np.repeat(np.arange(len(_SPORTS)), per_sport)
    team_mascot, team_city = _Combinations.make(b.rng, (len(_MASCOTS), cities)).digits(np.arange(teams))
    mascots, city_label = pa.array(_MASCOTS), b.kinds["city"].label
    b.kind("team", "sports", teams, lambda i: _decorate(city_label(team_city[i]), " ", pc.take(mascots, team_mascot[i])))
    everyone = np.arange(teams)
    b.link("located_in", "team", everyone, "city", team_city)
    b.link("in_league", "team", everyone, "league", team_sport * leagues + b.popular(leagues, teams, 1.3))
    heads = b.some(teams, 0.6)
    b.link("founded_year", "team", heads, "year", b.years(heads.size, 1870, 2015, 60.0))

    athletes = b.scaled(40_000)
    sport = b.rng.choice(len(_SPORTS), athletes, p=_SPORT_SHARES)
    b.kind("athlete", "sports", athletes, _role_label(_Names.make(b.rng, "person"), _ATHLETE_ROLES, sport))
    clubs = b.several(np.arange(athletes), 1.4, 6)  # a career: one to a few clubs
    positions = b.some(athletes, 0.9)
    club, position = np.zeros(clubs.size, np.int64), np.zeros(positions.size, np.int64)
    for s, teams_of_sport in enumerate(per_sport):  # clubs and positions of the athlete's own sport
        mine = sport[clubs] == s
        club[mine] = team_offset[s] + b.popular(teams_of_sport, int(mine.sum()), 0.6)
        mine = sport[positions] == s
        position[mine] = position_offset[s] + b.popular(len(_POSITIONS[s]), int(mine.sum()), 0.7)
    b.link("plays_for", "athlete", clubs, "team", club)
    b.link("position", "athlete", positions, "position", position)
    b.person_facts("athlete", born_in=0.4, born_year=0.45, citizen_of=0.2)


# --- assembling, statistics, writing --------------------------------------------------------------


@dataclass(frozen=True)
class SynthStats:
    """Shape of a generated graph: what `kgwalk synth` prints."""

    edges: int
    entities: int
    relations: int
    entities_by_domain: dict[str, int]
    max_degree: int
    median_degree: float
    hubs: list[tuple[str, int]]  # the five highest-degree entities, (label, degree)
    seconds: float = 0.0

    def summary(self) -> str:
        domains = ", ".join(f"{d} {n:,}" for d, n in self.entities_by_domain.items())
        return (
            f"{self.edges:,} edges, {self.entities:,} entities ({domains}), {self.relations} relations; "
            f"degree max {self.max_degree:,} ({self.hubs[0][0]}), median {self.median_degree:g}; "
            f"{self.seconds:.1f} s"
        )


@dataclass(frozen=True)
class SynthGraph:
    """A generated graph in integer form: edges as node/relation indices, one label per node."""

    heads: np.ndarray  # int64 node index per edge
    relations: np.ndarray  # int16 relation index per edge
    tails: np.ndarray  # int64 node index per edge
    labels: pa.LargeStringArray  # label per node
    domains: np.ndarray  # int8 index into DOMAINS per node
    relation_names: tuple[str, ...]

    @property
    def edges(self) -> int:
        return self.heads.size

    def batches(self, rows: int = _BATCH_ROWS) -> Iterator[pa.RecordBatch]:
        """The triples as (head, relation, tail) string batches of at most `rows` rows."""
        relation_names = pa.array(self.relation_names, pa.string())
        for start in range(0, self.edges, rows):
            part = slice(start, start + rows)
            yield pa.record_batch(
                [
                    pc.take(self.labels, self.heads[part]).cast(pa.string()),
                    pc.take(relation_names, self.relations[part]),
                    pc.take(self.labels, self.tails[part]).cast(pa.string()),
                ],
                schema=SCHEMA,
            )

    def to_table(self) -> pa.Table:
        return pa.Table.from_batches(list(self.batches()), schema=SCHEMA)

    def stats(self, seconds: float = 0.0) -> SynthStats:
        degree = np.bincount(self.heads, minlength=len(self.labels)) + np.bincount(self.tails, minlength=len(self.labels))
        top = np.argsort(-degree, kind="stable")[:5]
        per_domain = np.bincount(self.domains, minlength=len(DOMAINS))
        return SynthStats(
            edges=self.edges,
            entities=len(self.labels),
            relations=int(np.count_nonzero(np.bincount(self.relations))),
            entities_by_domain={d: int(n) for d, n in zip(DOMAINS, per_domain)},
            max_degree=int(degree.max()),
            median_degree=float(np.median(degree)),
            hubs=[(self.labels[int(i)].as_py(), int(degree[i])) for i in top],
            seconds=seconds,
        )


def _build(scale: float, seed: int) -> _Builder:
    b = _Builder(np.random.default_rng(seed), scale)
    _literals(b)
    _open_domain(b)
    producers = _finance_domain(b)
    _movie_domain(b, producers)
    _music_domain(b)
    _sports_domain(b)
    return b


def _assemble(b: _Builder, edges: int) -> SynthGraph | None:
    """Deduplicate each block, drop a seeded sample down to exactly `edges`, keep only linked nodes.

    None when the blocks hold fewer than `edges` distinct triples.
    """
    relation_names = tuple(dict.fromkeys(block.relation for block in b.blocks))
    heads, relations, tails = [], [], []
    for block in b.blocks:
        head, tail = b.kinds[block.head_kind], b.kinds[block.tail_kind]
        pairs = np.unique(block.heads * tail.size + block.tails)
        heads.append(pairs // tail.size + head.offset)
        tails.append(pairs % tail.size + tail.offset)
        relations.append(np.full(pairs.size, relation_names.index(block.relation), np.int16))
    head_ids, relation_ids, tail_ids = (np.concatenate(c) for c in (heads, relations, tails))
    if head_ids.size < edges:
        return None
    keep = np.ones(head_ids.size, bool)
    keep[b.rng.choice(head_ids.size, head_ids.size - edges, replace=False)] = False
    head_ids, relation_ids, tail_ids = head_ids[keep], relation_ids[keep], tail_ids[keep]

    nodes = sum(k.size for k in b.kinds.values())
    linked = np.flatnonzero(np.bincount(head_ids, minlength=nodes) + np.bincount(tail_ids, minlength=nodes))
    compact = np.zeros(nodes, np.int64)
    compact[linked] = np.arange(linked.size)
    labels, domains = [], []
    for kind in b.kinds.values():
        lo, hi = np.searchsorted(linked, [kind.offset, kind.offset + kind.size])
        if hi > lo:
            labels.append(kind.label(linked[lo:hi] - kind.offset).cast(pa.large_string()))
            domains.append(np.full(hi - lo, DOMAINS.index(kind.domain), np.int8))
    return SynthGraph(
        heads=compact[head_ids],
        relations=relation_ids,
        tails=compact[tail_ids],
        labels=pa.concat_arrays(labels),
        domains=np.concatenate(domains),
        relation_names=relation_names,
    )


def _check(edges: int, seed: int) -> None:
    if edges < 1:
        raise KgwalkError(f"edge count must be positive, got {edges}")
    if seed < 0:
        raise KgwalkError(f"seed must be a non-negative integer, got {seed}")


def generate(edges: int, seed: int = 0) -> SynthGraph:
    """A synthetic CRAG-like KG with exactly `edges` distinct triples; the same (edges, seed), the same graph."""
    _check(edges, seed)
    scale = edges / _EDGES_PER_SCALE * _HEADROOM
    while (graph := _assemble(_build(scale, seed), edges)) is None:
        scale *= _HEADROOM  # rare: chance fell a little short of the headroom
    return graph


def synth_kg(edges: int, seed: int = 0) -> pa.Table:
    """The triples of `generate(edges, seed)` as a table with string columns head, relation, tail."""
    return generate(edges, seed).to_table()


def parse_size(text: str) -> int:
    """An edge count written as 250000, 250_000, 250k, 1M, 1.5M or 2G."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)\s*", text.replace("_", ""))
    if m:
        value = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]
        if value >= 1 and value == int(value):
            return int(value)
    raise KgwalkError(f"bad edge count '{text}': use a positive whole number such as 250000, 250k, 1M or 10M")


def _output_suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in OUTPUT_SUFFIXES:
        raise KgwalkError(f"cannot tell the output format of {path} from its suffix; use one of {', '.join(OUTPUT_SUFFIXES)}")
    return suffix


def _write_error(path: Path, e: OSError) -> str:
    """'cannot write PATH: reason', naming the part of the path at fault when it is not the file itself."""
    culprit = f" ({e.filename})" if e.filename and not str(e.filename).startswith(str(path)) else ""
    return f"cannot write {path}: {e.strerror or e}{culprit}"


def write_synth(path: str | Path, edges: int, seed: int = 0) -> SynthStats:
    """Generate a graph and write it to `path`, batch by batch; the format follows the suffix.

    `.parquet` (columns head, relation, tail; best for big graphs), `.tsv` (tab-separated) or `.txt`
    (pipe-separated, MetaQA style), all without a header row but Parquet's. The file appears only
    when complete: rows go to a `.partial` file next to it, renamed at the end.
    """
    start = time.perf_counter()
    path = Path(path)
    suffix = _output_suffix(path)
    _check(edges, seed)
    if path.is_dir():
        raise KgwalkError(f"cannot write {path}: it is a directory")
    partial = path.with_name(path.name + ".partial")
    try:  # before the work: an unwritable path fails at once
        path.parent.mkdir(parents=True, exist_ok=True)
        sink = open(partial, "wb")
    except OSError as e:
        raise KgwalkError(_write_error(path, e)) from None
    try:
        with sink:
            graph = generate(edges, seed)
            if suffix == ".parquet":
                with pq.ParquetWriter(sink, SCHEMA, compression="zstd") as writer:
                    for batch in graph.batches():
                        writer.write_batch(batch)
            else:
                options = pacsv.WriteOptions(include_header=False, delimiter=_SEPARATOR[suffix], quoting_style="none")
                with pacsv.CSVWriter(sink, SCHEMA, write_options=options) as writer:
                    for batch in graph.batches():
                        writer.write_batch(batch)
        partial.replace(path)
    except BaseException as e:
        partial.unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise KgwalkError(_write_error(path, e)) from None
        raise
    return graph.stats(time.perf_counter() - start)
