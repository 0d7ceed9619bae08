"""The development sets of issue 42: question templates written by hand for the synthetic CRAG-like
KG (`kgwalk synth`) and for MetaQA's KB, and the renamings that give each KG another shape.

* synth: the synthetic KG as `kgwalk synth` writes it (snake_case relations, labels with a kind in
  parentheses, punctuation: "(2003 film)", "Inc.", "S.A.", ": Origins", "$12.50").
* synth-dbpedia: the same graph and questions, labels spelt with underscores ("The_Silent_Harbor_(2003_film)")
  and relations named as DBpedia's ontology names them (birthPlace, team, keyPerson).
* synth-places: the same graph and questions, its made-up countries and cities named after real ones
  (kgwalk/eval/real_places.py): a real KG's place names tell a country from a city, made-up ones do not.
* metaqa-dotted: MetaQA's KB with Freebase-style dotted relations (film.film.directed_by).
* metaqa-opaque: MetaQA's KB with Wikidata's property ids (P57), which kgwalk reads by Wikidata's labels.
* metaqa-ids: MetaQA's KB with ids no vocabulary explains (R57): what a prior reads from the graph alone.

The MetaQA sets' questions are written here, in other words than MetaQA's; only its KB is read.
Styles: terse ("genre of X?"), plain, verbose (long, nested clauses), passive ("by whom was X
directed?"), nested ("the X of the Y of E") and possessive ("E's club").
"""

from __future__ import annotations

from collections.abc import Callable

from kgwalk.eval.devsets import ANY, Conjunction, DevSet, Kb, Kind, PathQuestions, Rewordings, Wordings, generate, path, step, worded
from kgwalk.eval.real_places import real_place_names

P = PathQuestions

# --- the synthetic KG -----------------------------------------------------------------------------

MOVIE = Kind(r" \(\d{4} film\)$")
ACTOR = Kind(r" \(actor\)$")
DIRECTOR = Kind(r" \(director\)$")
MUSICIAN = Kind(r" \((singer|musician|rapper|composer|guitarist)\)$")
ATHLETE = Kind(r" \((footballer|basketball player|baseball player)\)$")
SONG = Kind(r" \(song\)$")
ALBUM = Kind(r" \(album\)$")
BUSINESSPERSON = Kind(r" \(businessperson\)$")
TEAM = Kind(has=("in_league>",))
COMPANY = Kind(has=("in_sector>",))
CITY = Kind(has=("capital_of>", "<born_in", "<headquartered_in"))
COUNTRY = Kind(has=("<citizen_of", "<capital_of"))
BORN = Kind(has=("born_in>",))
GENRE = Kind(has=("<has_genre",))
SECTOR = Kind(has=("<in_sector",))

SYNTH_PATHS = (
    # one step
    P("director of movie", path(MOVIE, "directed_by>"), (("terse", "who directed {e}?"), ("passive", "by whom was {e} directed?"),
      ("verbose", "can you tell me the name of the person who directed the film {e}?"), ("nested", "the director of {e}"))),
    P("films of director", path(DIRECTOR, "<directed_by"), (("plain", "what films did {e} direct?"),
      ("passive", "which movies were directed by {e}?"), ("terse", "{e} filmography?"))),
    P("cast of movie", path(MOVIE, "starred_actors>"), (("terse", "who stars in {e}?"), ("plain", "which actors appeared in {e}?"),
      ("nested", "the cast of {e}"))),
    P("films of actor", path(ACTOR, "<starred_actors"), (("plain", "what movies has {e} acted in?"),
      ("passive", "in which films was {e} cast?"), ("terse", "films with {e}?"))),
    P("release year", path(MOVIE, "release_year>"), (("terse", "when did {e} come out?"), ("plain", "in what year was {e} released?"),
      ("nested", "the release year of {e}"))),
    P("movie genre", path(MOVIE, "has_genre>"), (("terse", "genre of {e}?"), ("plain", "what kind of film is {e}?"))),
    P("movie rating", path(MOVIE, "rating>"), (("terse", "rating of {e}?"), ("plain", "how well was {e} rated?"))),
    P("movie budget", path(MOVIE, "budget>"), (("plain", "what was the budget of {e}?"), ("verbose", "how much money did it cost to make {e}?"))),
    P("producer", path(MOVIE, "produced_by>"), (("plain", "which company produced {e}?"), ("passive", "by which studio was {e} produced?"))),
    P("birthplace", path(BORN, "born_in>"), (("terse", "where was {e} born?"), ("nested", "the birthplace of {e}"),
      ("verbose", "what is the name of the city in which {e} was born?"))),
    P("birth year", path(ANY, "born_year>"), (("terse", "when was {e} born?"), ("plain", "what year was {e} born in?"))),
    P("nationality", path(ANY, "citizen_of>"), (("plain", "what is the nationality of {e}?"), ("passive", "which country is {e} a citizen of?"))),
    P("club", path(ATHLETE, "plays_for>"), (("terse", "which club does {e} play for?"), ("plain", "what teams has {e} played for?"),
      ("possessive", "{e}'s club?"))),
    P("squad", path(TEAM, "<plays_for"), (("plain", "who plays for {e}?"), ("passive", "which players have been signed by {e}?"))),
    P("position", path(ATHLETE, "position>"), (("terse", "what position does {e} play?"),)),
    P("league", path(TEAM, "in_league>"), (("terse", "which league is {e} in?"), ("plain", "in what league do {e} compete?"))),
    P("performer", path(SONG, "performed_by>"), (("terse", "who sings {e}?"), ("passive", "by whom was {e} performed?"))),
    P("album of song", path(SONG, "on_album>"), (("plain", "which album is {e} on?"), ("verbose", "on what record was the song {e} released?"))),
    P("band", path(MUSICIAN, "member_of>"), (("plain", "which band is {e} a member of?"),)),
    P("record label", path(ANY, "signed_to>"), (("plain", "what label is {e} signed to?"), ("passive", "by which record label was {e} signed?"))),
    P("ceo", path(COMPANY, "has_ceo>"), (("terse", "who is the CEO of {e}?"), ("plain", "who runs {e}?"))),
    P("company of ceo", path(BUSINESSPERSON, "<has_ceo"), (("plain", "which company does {e} lead?"),)),
    P("ticker", path(COMPANY, "ticker>"), (("terse", "ticker of {e}?"), ("plain", "what is the stock symbol of {e}?"))),
    P("sector", path(COMPANY, "in_sector>"), (("plain", "what sector is {e} in?"),)),
    P("exchange", path(COMPANY, "listed_on>"), (("passive", "on which stock exchange is {e} listed?"),)),
    P("headquarters", path(ANY, "headquartered_in>"), (("terse", "where is {e} headquartered?"), ("plain", "in which city is {e} based?"))),
    P("school", path(ANY, "educated_at>"), (("plain", "where did {e} study?"), ("passive", "at which university was {e} educated?"))),
    P("country of city", path(CITY, "located_in>"), (("plain", "which country is {e} in?"),)),
    P("capital", path(COUNTRY, "<capital_of"), (("terse", "capital of {e}?"), ("plain", "what is the capital of {e}?"))),
    P("album date", path(ALBUM, "release_date>"), (("plain", "when was {e} released?"),)),
    P("founded", path(ANY, "founded_year>"), (("plain", "when was {e} founded?"), ("passive", "in what year was {e} established?"))),
    # two steps
    P("birthplace of director", path(MOVIE, "directed_by>", "born_in>"), (("plain", "where was the director of {e} born?"),
      ("nested", "the birthplace of the director of {e}"), ("verbose", "in which city was the person who directed {e} born?"),
      ("possessive", "{e}'s director was born where?"))),
    P("birth years of cast", path(MOVIE, "starred_actors>", "born_year>"), (("plain", "when were the actors of {e} born?"),
      ("nested", "the birth years of the cast of {e}"))),
    P("city of club", path(ATHLETE, "plays_for>", "located_in>"), (("plain", "in which city does the club of {e} play?"),
      ("possessive", "where is {e}'s team based?"), ("nested", "the home city of the team of {e}"))),
    P("league of club", path(ATHLETE, "plays_for>", "in_league>"), (("possessive", "which league does {e}'s team play in?"),
      ("verbose", "what is the name of the league in which the club that {e} plays for competes?"))),
    P("label of performer", path(SONG, "performed_by>", "signed_to>"), (("plain", "what label is the performer of {e} signed to?"),
      ("nested", "the record label of the artist of {e}"))),
    P("date of album", path(SONG, "on_album>", "release_date>"), (("plain", "when was the album containing {e} released?"),
      ("nested", "the release date of the album of {e}"))),
    P("city of producer", path(MOVIE, "produced_by>", "headquartered_in>"), (("plain", "where is the company that produced {e} headquartered?"),
      ("passive", "in which city is the studio by which {e} was produced based?"))),
    P("birthplace of ceo", path(COMPANY, "has_ceo>", "born_in>"), (("plain", "where was the CEO of {e} born?"),
      ("possessive", "{e}'s chief executive was born in which city?"))),
    P("genres of director", path(DIRECTOR, "<directed_by", "has_genre>"), (("plain", "what genres are the films directed by {e}?"),
      ("passive", "which genres do the movies made by {e} belong to?"))),
    P("directors of actor", path(ACTOR, "<starred_actors", "directed_by>"), (("plain", "who directed the movies {e} starred in?"),
      ("verbose", "which directors have worked with the actor {e} on a film?"))),
    P("films of same director", path(MOVIE, "directed_by>", "<directed_by"), (("plain", "which other films were made by the director of {e}?"),
      ("verbose", "what else has the person who directed {e} directed?"))),
    P("birth country", path(BORN, "born_in>", "located_in>"), (("terse", "which country was {e} born in?"),
      ("plain", "what is the country of birth of {e}?"))),
    P("label of band", path(MUSICIAN, "member_of>", "signed_to>"), (("possessive", "what label is {e}'s band signed to?"),)),
    # three steps
    P("birth country of director", path(MOVIE, "directed_by>", "born_in>", "located_in>"),
      (("plain", "in which country was the director of {e} born?"), ("nested", "the country of the birthplace of the director of {e}"),
       ("verbose", "what is the name of the country where the person who directed {e} was born?"))),
    P("country of club", path(ATHLETE, "plays_for>", "located_in>", "located_in>"), (("plain", "which country is the club of {e} based in?"),
      ("possessive", "in what country does {e}'s team play?"), ("nested", "the country of the city of the club of {e}"))),
    P("birth country of singer", path(SONG, step("performed_by>", MUSICIAN), "born_in>", "located_in>"),
      (("plain", "in which country was the singer of {e} born?"), ("nested", "the country of birth of the performer of {e}"))),
    P("nationality of producer's ceo", path(MOVIE, "produced_by>", "has_ceo>", "citizen_of>"),
      (("verbose", "what is the nationality of the chief executive of the company that produced {e}?"),
       ("nested", "the citizenship of the CEO of the producer of {e}"))),
    P("birthplaces of actor's directors", path(ACTOR, "<starred_actors", "directed_by>", "born_in>"),
      (("possessive", "where were the directors of {e}'s films born?"),
       ("verbose", "in which cities were the people born who directed the movies that {e} appeared in?"))),
    P("birth country of ceo", path(COMPANY, "has_ceo>", "born_in>", "located_in>"), (("plain", "in which country was the CEO of {e} born?"),)),
)

SYNTH_CONJUNCTIONS = (
    Conjunction("director and actor", path(DIRECTOR, "<directed_by"), path(ACTOR, "<starred_actors"),
                (("plain", "which films did {a} direct that {b} starred in?"), ("passive", "which movies directed by {a} feature {b}?"))),
    Conjunction("two actors", path(ACTOR, "<starred_actors"), path(ACTOR, "<starred_actors"),
                (("plain", "which movies star both {a} and {b}?"), ("verbose", "in which films did {a} appear together with {b}?"))),
    Conjunction("two clubs", path(TEAM, "<plays_for"), path(TEAM, "<plays_for"),
                (("plain", "which player has played for both {a} and {b}?"), ("terse", "who played for {a} and {b}?"))),
    Conjunction("club and birthplace", path(TEAM, "<plays_for"), path(CITY, step("<born_in", ATHLETE)),
                (("plain", "which players of {a} were born in {b}?"),)),
    Conjunction("director and genre", path(DIRECTOR, "<directed_by"), path(GENRE, step("<has_genre", MOVIE)),
                (("plain", "which {b} films did {a} direct?"),)),
    Conjunction("city and sector", path(CITY, step("<headquartered_in", COMPANY)), path(SECTOR, "<in_sector"),
                (("plain", "which companies in {a} are in the {b} sector?"),)),
    Conjunction("artist and genre", path(ANY, step("<performed_by", ALBUM)), path(GENRE, step("<has_genre", ALBUM)),
                (("plain", "which {b} albums did {a} release?"),)),
)

# DBpedia ontology's names for the synthetic relations (camelCase; several a bare noun)
DBPEDIA = {
    "directed_by": "director", "starred_actors": "starring", "release_year": "releaseYear", "has_genre": "genre",
    "rating": "rating", "budget": "budget", "produced_by": "producer", "born_in": "birthPlace", "born_year": "birthYear",
    "citizen_of": "citizenship", "plays_for": "team", "position": "position", "in_league": "league", "performed_by": "artist",
    "on_album": "album", "member_of": "memberOf", "signed_to": "recordLabel", "has_ceo": "keyPerson", "ticker": "tickerSymbol",
    "in_sector": "industry", "listed_on": "stockExchange", "headquartered_in": "headquarter", "educated_at": "almaMater",
    "located_in": "location", "capital_of": "capitalOf", "release_date": "releaseDate", "founded_year": "foundingYear",
    "market_cap": "marketCapitalisation", "share_price": "sharePrice",
}


def underscored(label: str) -> str:
    """A label as DBpedia-like KGs spell it: spaces as underscores."""
    return label.replace(" ", "_")


# --- MetaQA's KB ----------------------------------------------------------------------------------

METAQA_PATHS = (
    # one step
    P("director", path(ANY, "directed_by>"), (("terse", "director of {e}?"), ("passive", "by whom was {e} directed?"),
      ("plain", "who made the film {e}?"))),
    P("directed", path(ANY, "<directed_by"), (("plain", "list the films directed by {e}"),
      ("verbose", "what are the titles of the movies that {e} has directed?"), ("terse", "{e} as a director?"))),
    P("writer", path(ANY, "written_by>"), (("plain", "who wrote the screenplay for {e}?"), ("passive", "by whom was {e} written?"),
      ("terse", "screenwriter of {e}?"))),
    P("wrote", path(ANY, "<written_by"), (("plain", "which screenplays has {e} written?"), ("passive", "what films were written by {e}?"))),
    P("cast", path(ANY, "starred_actors>"), (("plain", "who is in the cast of {e}?"), ("terse", "stars of {e}?"),
      ("verbose", "name the actors and actresses who appear in {e}"))),
    P("acted", path(ANY, "<starred_actors"), (("plain", "in which films does {e} appear?"), ("terse", "{e} movies?"),
      ("passive", "which pictures was {e} cast in?"))),
    P("year", path(ANY, "release_year>"), (("plain", "what year did {e} premiere?"), ("terse", "release year of {e}?"))),
    P("language", path(ANY, "in_language>"), (("plain", "in which language was {e} made?"), ("terse", "language of {e}?"))),
    P("genre", path(ANY, "has_genre>"), (("plain", "what kind of movie is {e}?"), ("terse", "genre of {e}?"))),
    P("tags", path(ANY, "has_tags>"), (("plain", "which keywords describe {e}?"), ("terse", "tags of {e}?"))),
    P("tagged", path(ANY, "<has_tags"), (("plain", "which movies are tagged with {e}?"), ("passive", "what films are described by the keyword {e}?"))),
    P("rating", path(ANY, "has_imdb_rating>"), (("plain", "how is {e} rated on IMDb?"),)),
    P("votes", path(ANY, "has_imdb_votes>"), (("plain", "how many IMDb votes does {e} have?"),)),
    # two steps
    P("same director", path(ANY, "directed_by>", "<directed_by"), (("plain", "which other movies did the director of {e} make?"),
      ("verbose", "what films share their director with {e}?"), ("nested", "the other films of the director of {e}"))),
    P("same cast", path(ANY, "starred_actors>", "<starred_actors"), (("plain", "which films share actors with {e}?"),
      ("verbose", "what other movies did the cast of {e} appear in?"))),
    P("same writer", path(ANY, "written_by>", "<written_by"), (("plain", "what else did the screenwriter of {e} write?"),)),
    P("years of director", path(ANY, "<directed_by", "release_year>"), (("plain", "in which years did films directed by {e} come out?"),
      ("nested", "the release years of the films of {e}"))),
    P("genres of actor", path(ANY, "<starred_actors", "has_genre>"), (("plain", "what genres are the movies {e} acted in?"),
      ("possessive", "{e}'s films are of which genres?"))),
    P("directors of writer", path(ANY, "<written_by", "directed_by>"), (("plain", "who directed the films written by {e}?"),
      ("passive", "by whom were the screenplays of {e} directed?"))),
    P("actors of director", path(ANY, "<directed_by", "starred_actors>"), (("plain", "which actors have appeared in films by {e}?"),
      ("nested", "the cast of the films directed by {e}"))),
    P("languages of actor", path(ANY, "<starred_actors", "in_language>"), (("plain", "what languages are the films of {e} in?"),)),
    P("directors of actor", path(ANY, "<starred_actors", "directed_by>"), (("plain", "which directors has {e} worked with?"),
      ("verbose", "who were the directors of the movies in which {e} was cast?"))),
    P("years of writer", path(ANY, "<written_by", "release_year>"), (("possessive", "in which years did {e}'s screenplays reach cinemas?"),)),
    # three steps
    P("cast of director's films", path(ANY, "directed_by>", "<directed_by", "starred_actors>"),
      (("plain", "who acted in the other films of the director of {e}?"), ("nested", "the actors of the other films of the director of {e}"))),
    P("directors of cast's films", path(ANY, "starred_actors>", "<starred_actors", "directed_by>"),
      (("plain", "who directed the other films of the actors in {e}?"),)),
    P("years of writer's films", path(ANY, "written_by>", "<written_by", "release_year>"),
      (("plain", "when were the other films by the writer of {e} released?"),)),
    P("genres of director's films", path(ANY, "directed_by>", "<directed_by", "has_genre>"),
      (("plain", "what genres are the other films of the director of {e}?"), ("possessive", "{e}'s director also made films of which genres?"))),
    P("films of director's actors", path(ANY, "<directed_by", "starred_actors>", "<starred_actors"),
      (("verbose", "which movies star the actors who worked with the director {e}?"),)),
    P("languages of cast's films", path(ANY, "starred_actors>", "<starred_actors", "in_language>"),
      (("plain", "in which languages are the other films of the cast of {e}?"),)),
    P("films of actor's directors", path(ANY, "<starred_actors", "directed_by>", "<directed_by"),
      (("plain", "what other films were made by the directors {e} worked with?"),)),
)

# Fresh wordings: see people.PEOPLE_REWORDINGS.
METAQA_REWORDINGS: Rewordings = {
    "fresh": {
        "director": (("plain", "who directed {e}?"), ("verbose", "who was behind the camera on {e}?")),
        "directed": (("plain", "what movies has {e} directed?"), ("verbose", "which films did {e} helm?")),
        "writer": (("plain", "who wrote {e}?"), ("verbose", "who is credited with the script of {e}?")),
        "wrote": (("plain", "what movies did {e} write?"), ("verbose", "which films are based on scripts by {e}?")),
        "cast": (("plain", "who acted in {e}?"), ("terse", "{e} actors")),
        "acted": (("plain", "what movies has {e} been in?"), ("verbose", "which films feature {e}?")),
        "year": (("plain", "when was {e} released?"), ("terse", "{e} year?")),
        "language": (("plain", "what language is {e} in?"), ("verbose", "what language do they speak in {e}?")),
        "genre": (("plain", "what genre is {e}?"), ("verbose", "what type of film is {e}?")),
        "tags": (("plain", "what is {e} about?"), ("verbose", "what topics does {e} deal with?")),
        "tagged": (("plain", "which movies are about {e}?"), ("verbose", "find films on the topic of {e}")),
        "rating": (("plain", "what is the IMDb rating of {e}?"), ("verbose", "how well is {e} rated?")),
        "votes": (("plain", "how popular is {e} on IMDb?"),),
        "same director": (("plain", "what other movies were directed by the person who directed {e}?"),
                          ("possessive", "{e}'s director made which other films?")),
        "same cast": (("plain", "which movies have actors in common with {e}?"),),
        "same writer": (("possessive", "which other films were written by {e}'s screenwriter?"),),
        "years of director": (("plain", "when were the movies directed by {e} released?"),),
        "genres of actor": (("plain", "what types of films has {e} acted in?"),),
        "directors of writer": (("plain", "who directed the movies that {e} wrote?"),),
        "actors of director": (("plain", "who acted in the movies {e} directed?"),),
        "languages of actor": (("plain", "in what languages are the movies starring {e}?"),),
        "directors of actor": (("plain", "who directed the films {e} starred in?"),),
        "years of writer": (("plain", "when were the films written by {e} released?"),),
        "cast of director's films": (("plain", "who starred in movies by the director of {e}?"),),
        "directors of cast's films": (("plain", "who directed films featuring the actors of {e}?"),),
        "years of writer's films": (("possessive", "in what years were the films by {e}'s screenwriter released?"),),
        "genres of director's films": (("plain", "what genres of film did the director of {e} make?"),),
        "films of director's actors": (("plain", "which films feature actors from the movies {e} directed?"),),
        "languages of cast's films": (("plain", "what languages are the films starring the cast of {e} in?"),),
        "films of actor's directors": (("possessive", "which films were made by the directors of {e}'s movies?"),),
    },
    "fresh2": {
        "director": (("plain", "who is the director of {e}?"),),
        "directed": (("plain", "which movies did {e} direct?"),),
        "writer": (("plain", "who wrote the script of {e}?"),),
        "cast": (("plain", "which actors star in {e}?"),),
        "acted": (("plain", "which movies did {e} act in?"),),
        "year": (("plain", "in what year did {e} come out?"),),
        "language": (("plain", "which language is spoken in {e}?"),),
        "genre": (("plain", "which genre does {e} belong to?"),),
        "same director": (("plain", "which movies were directed by the same person as {e}?"),),
        "same cast": (("plain", "what movies share cast members with {e}?"),),
        "years of director": (("plain", "in which years were {e}'s films released?"),),
        "directors of writer": (("plain", "who were the directors of the films {e} wrote?"),),
        "actors of director": (("plain", "who starred in the films directed by {e}?"),),
        "directors of actor": (("plain", "who directed the movies {e} acted in?"),),
        "cast of director's films": (("plain", "which actors appear in films by the director of {e}?"),),
        "directors of cast's films": (("plain", "who directed the movies starring the cast of {e}?"),),
        "genres of director's films": (("plain", "which genres are the films by the director of {e}?"),),
        "languages of cast's films": (("plain", "which languages are the movies starring the actors of {e} in?"),),
        "films of actor's directors": (("plain", "which movies did the directors of {e}'s films make?"),),
    },
    "fresh3": {
        "director": (("plain", "tell me who directed {e}"), ("passive", "{e} was directed by whom?")),
        "directed": (("plain", "give me a list of films by director {e}"),),
        "writer": (("plain", "who penned the screenplay of {e}?"),),
        "wrote": (("plain", "what has {e} written for the screen?"),),
        "cast": (("plain", "who plays in {e}?"), ("terse", "the actors in {e}")),
        "acted": (("plain", "list the movies with {e} in them"),),
        "year": (("plain", "what is the release date of {e}?"),),
        "language": (("terse", "the original language of {e}?"),),
        "genre": (("plain", "what category of movie is {e}?"),),
        "tags": (("plain", "what themes does {e} cover?"),),
        "tagged": (("plain", "what movies deal with {e}?"),),
        "rating": (("plain", "what score does {e} have on IMDb?"),),
        "votes": (("plain", "how many people voted for {e} on IMDb?"),),
        "same director": (("plain", "what else has the director of {e} made?"),),
        "same cast": (("plain", "which films have the same actors as {e}?"),),
        "same writer": (("plain", "which other films did the person who wrote {e} write?"),),
        "years of director": (("plain", "what years did {e} release films?"),),
        "genres of actor": (("plain", "which genres does {e} act in?"),),
        "directors of writer": (("plain", "who has directed screenplays by {e}?"),),
        "actors of director": (("plain", "which actors has {e} directed?"),),
        "languages of actor": (("plain", "in what languages has {e} made films?"),),
        "directors of actor": (("plain", "which directors have cast {e}?"),),
        "years of writer": (("plain", "when did the films {e} wrote come out?"),),
        "cast of director's films": (("possessive", "who are the actors in other films by {e}'s director?"),),
        "directors of cast's films": (("possessive", "who directed the other movies of {e}'s actors?"),),
        "years of writer's films": (("plain", "when did the other films of the person who wrote {e} come out?"),),
        "genres of director's films": (("plain", "what genres has the director of {e} worked in?"),),
        "films of director's actors": (("plain", "which films star actors that {e} has directed?"),),
        "languages of cast's films": (("possessive", "what languages are the other movies of {e}'s stars in?"),),
        "films of actor's directors": (("plain", "what else did the directors who worked with {e} make?"),),
    },
    "fresh4": {
        "director": (("plain", "who made the film {e}?"), ("plain", "name the director of {e}")),
        "directed": (("plain", "{e} directed which films?"), ("plain", "which movies has {e} made as director?")),
        "writer": (("plain", "who was the screenwriter of {e}?"), ("passive", "{e} was written by whom?")),
        "wrote": (("plain", "{e} wrote which movies?"), ("plain", "which screenplays did {e} write?")),
        "cast": (("plain", "who appears in {e}?"), ("plain", "name the cast of {e}")),
        "acted": (("plain", "{e} appeared in which films?"), ("plain", "what films has {e} starred in?")),
        "year": (("passive", "{e} was released in what year?"),),
        "language": (("plain", "{e} is in which language?"),),
        "genre": (("plain", "{e} is what kind of movie?"),),
        "tags": (("plain", "what subjects is {e} about?"), ("passive", "{e} is tagged with what?")),
        "tagged": (("passive", "which films are tagged {e}?"), ("plain", "name movies about {e}")),
        "rating": (("plain", "{e} has what IMDb rating?"),),
        "votes": (("plain", "how many IMDb votes does {e} have?"),),
        "same director": (("plain", "which films share a director with {e}?"),),
        "same cast": (("plain", "which other movies feature the actors of {e}?"),),
        "same writer": (("plain", "what else was written by the writer of {e}?"),),
        "years of director": (("possessive", "when did {e}'s films come out?"),),
        "genres of actor": (("plain", "what kinds of movies does {e} appear in?"),),
        "directors of writer": (("plain", "who directed the films written by {e}?"),),
        "actors of director": (("possessive", "who has starred in {e}'s films?"),),
        "languages of actor": (("possessive", "what languages are {e}'s movies in?"),),
        "directors of actor": (("plain", "who has directed {e}?"),),
        "years of writer": (("plain", "in which years did movies written by {e} come out?"),),
        "cast of director's films": (("plain", "which actors starred in other films by the director of {e}?"),),
        "directors of cast's films": (("possessive", "who directed other movies that {e}'s actors starred in?"),),
        "years of writer's films": (("plain", "when were the other movies by the writer of {e} released?"),),
        "genres of director's films": (("possessive", "what genres are the movies of {e}'s director?"),),
        "films of director's actors": (("possessive", "what other films have the actors in {e}'s films been in?"),),
        "languages of cast's films": (("possessive", "which languages are the other films of {e}'s actors in?"),),
        "films of actor's directors": (("plain", "which movies were directed by people who directed {e}?"),),
    },
    "fresh5": {
        "director": (("plain", "who was the director of {e}?"),),
        "directed": (("terse", "films directed by {e}"),),
        "writer": (("terse", "{e} screenwriter"),),
        "wrote": (("plain", "which films did {e} write?"), ("passive", "what movies were written by {e}?")),
        "cast": (("plain", "who stars in {e}?"), ("terse", "{e} cast")),
        "acted": (("verbose", "list the films where {e} had a starring role"),),
        "year": (("plain", "when did {e} come out?"), ("terse", "{e} release year")),
        "language": (("passive", "in what language was {e} released?"),),
        "genre": (("terse", "{e} genre"),),
        "tags": (("plain", "what topics is {e} tagged with?"), ("terse", "{e} keywords")),
        "tagged": (("plain", "which movies are tagged {e}?"), ("verbose", "show me films that have {e} as one of their keywords")),
        "rating": (("plain", "how is {e} rated on imdb?"), ("terse", "{e} imdb score")),
        "votes": (("plain", "how many imdb votes does {e} have?"), ("possessive", "{e}'s number of votes on imdb")),
        "same director": (("plain", "what other films were made by the director of {e}?"), ("nested", "which movies did the person who directed {e} make?")),
        "same cast": (("plain", "what other movies did the actors from {e} appear in?"), ("nested", "which films star the people who starred in {e}?")),
        "same writer": (("terse", "movies by {e}'s writer"),),
        "years of director": (("plain", "in which years did {e}'s movies come out?"), ("passive", "what years were films directed by {e} released?")),
        "genres of actor": (("plain", "what genres of movies does {e} star in?"), ("possessive", "{e}'s film genres as an actor")),
        "directors of writer": (("plain", "who directed the movies {e} wrote?"), ("nested", "which directors made films from scripts by {e}?")),
        "actors of director": (("plain", "which actors have been in {e}'s movies?"), ("passive", "who was cast in films directed by {e}?")),
        "languages of actor": (("nested", "in which languages are the films that {e} starred in?"),),
        "directors of actor": (("nested", "who directed the movies that {e} acted in?"),),
        "years of writer": (("terse", "{e} screenplays release years"),),
        "cast of director's films": (("nested", "who acted in the other flicks by the director of {e}?"), ("verbose", "find whoever directed {e}, then list the actors starring in that director's movies")),
        "directors of cast's films": (("nested", "who directed the other movies that the {e} actors starred in?"), ("verbose", "take the cast of {e} and tell me which directors made the films they've appeared in")),
        "years of writer's films": (("nested", "what years did the movies by the writer of {e} come out?"), ("possessive", "release years of {e}'s screenwriter's films")),
        "genres of director's films": (("nested", "what genres does the director of {e} usually work in?"), ("possessive", "{e}'s director's movie genres")),
        "films of director's actors": (("nested", "what other movies have {e}'s actors starred in?"), ("verbose", "take the actors who appeared in films directed by {e} and list every movie those actors were in")),
        "languages of cast's films": (("nested", "what languages are the movies of the {e} cast in?"), ("terse", "{e} actors' films languages")),
        "films of actor's directors": (("nested", "what other films did the directors {e} worked with make?"), ("verbose", "find the directors of movies starring {e} and list all the films those directors made")),
    },
    "fresh6": {
        "director": (("keyword", "{e} director"),),
        "directed": (("imperative", "List every film {e} has directed."),
                     ("chatty", "Just binged a few classics and realised I love {e}'s style behind the camera — what else did they direct?")),
        "writer": (("quiz", "Name the screenwriter credited on {e}."), ("nonnative", "Who was making the writing of the movie {e}?")),
        "wrote": (("keyword", "{e} screenplays written"), ("formal", "Which films were written by {e}?")),
        "cast": (("chatty", "Saw {e} on a plane and can't place half the faces — who's in it?"), ("imperative", "Give me the main cast of {e}.")),
        "acted": (("keyword", "{e} filmography actor"),),
        "year": (("nonnative", "In what year the movie {e} came out to cinemas?"),),
        "language": (("formal", "In which language was the film {e} originally released?"),),
        "genre": (("chatty", "Someone recommended {e} for movie night, but I don't know what kind of film it is — what genre is it?"),),
        "tags": (("imperative", "Show me the keywords people tag {e} with."), ("quiz", "What topics is {e} associated with?")),
        "tagged": (("keyword", "movies about {e}"), ("nonnative", "Please which films are having the tag {e}?")),
        "rating": (("chatty", "Trying to decide whether {e} is worth two hours of my life — what's its IMDb score?"),),
        "votes": (("keyword", "{e} imdb number of votes"), ("formal", "How many IMDb users have cast a vote for {e}?")),
        "same director": (("chatty", "Loved {e} — what other films did the same director make?"),
                          ("imperative", "List the movies made by whoever directed {e}.")),
        "same cast": (("nonnative", "The actors from {e}, in which other movies they also play?"), ("keyword", "{e} cast other movies")),
        "same writer": (("formal", "Which films were written by the screenwriter of {e}?"), ("short", "What else did the writer of {e} write?")),
        "years of director": (("keyword", "{e} directed films years"), ("imperative", "Tell me the years when the movies {e} directed came out.")),
        "genres of actor": (("chatty", "Is {e} mostly a comedy person or do they do drama too? What genres are their movies?"),
                            ("formal", "To which genres do the films featuring {e} belong?")),
        "directors of writer": (("quiz", "Name the directors who have filmed scripts by {e}."),
                                ("nonnative", "Who did direct the movies which {e} has written?")),
        "actors of director": (("short", "Who has acted in {e}'s films?"), ("keyword", "{e} directed movies actors")),
        "languages of actor": (("imperative", "Give me the languages of the films {e} starred in."),
                               ("chatty", "I know {e} has worked abroad a bit — which languages are their movies in?")),
        "directors of actor": (("formal", "By whom have the films starring {e} been directed?"),),
        "years of writer": (("nonnative", "The films written by {e}, which years they were released?"), ("keyword", "{e} screenwriter movies release years")),
        "cast of director's films": (("chatty", "{e} had such a great ensemble — who else has the director put in their movies?"),
                                     ("imperative", "List the actors appearing in films by the director of {e}.")),
        "directors of cast's films": (("formal", "Who directed the other films in which the cast of {e} appeared?"),
                                      ("keyword", "{e} actors other films directors")),
        "years of writer's films": (("short", "When did the films by {e}'s writer come out?"),
                                    ("nonnative", "The writer of {e} wrote also other movies — in what years are those released?")),
        "genres of director's films": (("keyword", "{e} director filmography genres"),),
        "films of director's actors": (
            ("chatty", "I keep noticing {e} reuses the same actors, so I'm curious — what other movies have the people in their films starred in?"),
            ("formal", "In which films have the actors from {e}'s directed works appeared?")),
        "languages of cast's films": (("imperative", "Tell me the languages of movies featuring anyone from the cast of {e}."),
                                      ("nonnative", "The actors of {e} play also in other films — what languages have those films?")),
        "films of actor's directors": (("keyword", "{e} directors worked with other films"), ("short", "What other movies did {e}'s directors make?")),
    },
    "fresh7": {
        "director": (("which", "Which filmmaker directed {e}?"), ("search", "{e} directed by"), ("you", "do you know who directed the movie {e}?")),
        "directed": (("relative", "the movies whose director is {e}"), ("request", "I need a list of the films {e} directed"),
                     ("followup", "and what did {e} direct?")),
        "writer": (("which", "Which screenwriter wrote {e}?"), ("search", "{e} screenplay written by"),
                   ("you", "Do you know who the writer of {e} was?")),
        "wrote": (("relative", "films whose screenplay was written by {e}"), ("followup", "and which movies did {e} write?"),
                  ("request", "I'd like to know which films {e} wrote the script for")),
        "cast": (("who", "Who was cast in {e}?"), ("search", "{e} full cast list"), ("followup", "and the actors in {e}?"),
                 ("headline", "Meet the cast of {e}")),
        "acted": (("search", "movies starring {e}"), ("you", "can you list the films {e} has played a role in?"),
                  ("relative", "the films that {e} appears in")),
        "year": (("which", "Which year was {e} released in?"), ("search", "year {e} came out"), ("followup", "and when did {e} hit theaters?")),
        "language": (("which", "Which language is the film {e} in?"), ("search", "{e} original language"),
                     ("you", "do you know what language {e} was filmed in?")),
        "genre": (("which", "Which genre would {e} be classed as?"), ("search", "{e} film genre"), ("followup", "and {e}'s genre?")),
        "tags": (("which", "Which tags does {e} have?"), ("search", "{e} tags"), ("request", "I need the keywords attached to {e}")),
        "tagged": (("which", "Which films carry the tag {e}?"), ("search", "films tagged {e}"), ("relative", "movies whose keywords include {e}")),
        "rating": (("which", "What IMDb rating did {e} get?"), ("search", "{e} imdb rating"), ("you", "do you know how {e} scores on IMDb?")),
        "votes": (("what", "What's the IMDb vote count for {e}?"), ("search", "{e} imdb votes"),
                  ("followup", "and how many votes has {e} got on IMDb?")),
        "same director": (("relative", "films by the same person who directed {e}"), ("you", "do you know what else {e}'s director has made?")),
        "same cast": (("which", "Which other pictures did {e}'s actors appear in?"), ("search", "other movies with the {e} cast")),
        "same writer": (("relative", "movies written by the screenwriter who wrote {e}"), ("followup", "and what else has {e}'s writer written?")),
        "years of director": (("which", "Which years saw releases of films directed by {e}?"),
                              ("search", "release years of {e}'s films as director")),
        "genres of actor": (("relative", "the genres of the films that {e} has acted in"),
                            ("you", "can you tell me the genres of movies {e} has been in?")),
        "directors of writer": (("which", "Which filmmakers have directed a script written by {e}?"),
                                ("search", "directors who filmed {e} screenplays")),
        "actors of director": (("who", "Who's been in a movie directed by {e}?"), ("relative", "the performers who appeared in films {e} directed")),
        "languages of actor": (("which", "Which languages are {e}'s movies made in?"), ("search", "languages of films starring {e}")),
        "directors of actor": (("which", "Which filmmakers has {e} acted for?"), ("followup", "and who directed the films {e} was in?")),
        "years of writer": (("which", "Which years did films scripted by {e} come out?"), ("search", "years {e}'s screenplays were released")),
        "cast of director's films": (("relative", "actors in the other films made by the director of {e}"),
                                     ("you", "Do you know who has starred in other movies by {e}'s director?")),
        "directors of cast's films": (("which", "Which directors made the other films that {e}'s cast appeared in?"),
                                      ("search", "directors of other movies with actors from {e}")),
        "years of writer's films": (("which", "In which years did {e}'s screenwriter have other films released?"),
                                    ("search", "release years of other films by the writer of {e}")),
        "genres of director's films": (("which", "Which genres do the other films by {e}'s director fall into?"),
                                       ("followup", "and what genres are the other movies by whoever directed {e}?")),
        "films of director's actors": (("relative", "films starring actors who have worked under director {e}"),
                                       ("you", "can you find movies with the actors {e} has directed?")),
        "languages of cast's films": (("which", "In what languages did the actors of {e} make their other films?"),
                                      ("search", "what languages {e}'s actors' other films are in")),
        "films of actor's directors": (("relative", "films by the directors who have directed {e}"),
                                       ("which", "Which movies were made by directors that {e} has acted for?")),
    },
}

METAQA_CONJUNCTIONS = (
    Conjunction("directed and starred", path(ANY, "<directed_by"), path(ANY, "<starred_actors"),
                (("plain", "which films did {a} direct that {b} starred in?"), ("passive", "which movies directed by {a} feature {b}?"))),
    Conjunction("two actors", path(ANY, "<starred_actors"), path(ANY, "<starred_actors"),
                (("plain", "which movies star both {a} and {b}?"), ("verbose", "in which films do {a} and {b} appear together?"))),
    Conjunction("writer and language", path(ANY, "<written_by"), path(ANY, "<in_language"), (("plain", "what films written by {a} are in {b}?"),)),
    Conjunction("director and genre", path(ANY, "<directed_by"), path(ANY, "<has_genre"), (("plain", "which {b} movies did {a} direct?"),)),
    Conjunction("actor and year", path(ANY, "<starred_actors"), path(ANY, "<release_year"), (("plain", "which films with {a} came out in {b}?"),)),
    Conjunction("director and writer", path(ANY, "<directed_by"), path(ANY, "<written_by"),
                (("passive", "which films directed by {a} were written by {b}?"),)),
)

DOTTED = {  # Freebase's spelling
    "directed_by": "film.film.directed_by", "written_by": "film.film.written_by", "starred_actors": "film.film.starring",
    "release_year": "film.film.initial_release_date", "in_language": "film.film.language", "has_tags": "film.film.subjects",
    "has_genre": "film.film.genre", "has_imdb_rating": "film.film.imdb_rating", "has_imdb_votes": "film.film.imdb_votes",
}
OPAQUE = {  # Wikidata's property ids where it has one (P57 director, P161 cast member, ...)
    "directed_by": "P57", "written_by": "P58", "starred_actors": "P161", "release_year": "P577", "in_language": "P364",
    "has_tags": "P921", "has_genre": "P136", "has_imdb_rating": "P444", "has_imdb_votes": "P5201",
}

# the same numbers without Wikidata's "P": ids that say nothing of their relation, and no list kgwalk knows explains
IDS = {relation: "R" + pid[1:] for relation, pid in OPAQUE.items()}


def _renamed(names: dict[str, str]) -> Callable[[str], str]:
    return lambda relation: names[relation]


def synth_sets(triples: list[tuple[str, str, str]], seed: int, per_path: int, per_conjunction: int, hub_degree: int | None) -> list[DevSet]:
    """synth, synth-dbpedia and synth-places, from the triples of a `kgwalk synth` graph."""
    questions = generate(Kb(triples), SYNTH_PATHS, SYNTH_CONJUNCTIONS, seed, per_path, per_conjunction, hub_degree)
    places = real_place_names(triples)
    return [DevSet("synth", triples, questions, seed),
            DevSet("synth-dbpedia", triples, questions, seed, _renamed(DBPEDIA), underscored,
                   ["synth's graph and questions; labels with underscores for spaces, DBpedia-style relation names"]),
            DevSet("synth-places", triples, questions, seed, label=lambda label: places.get(label, label),
                   notes=["synth's graph and questions; its countries and cities named after real ones (GeoNames)"])]


def metaqa_sets(triples: list[tuple[str, str, str]], seed: int, per_path: int, per_conjunction: int, hub_degree: int | None, *,
                wordings: Wordings = "dev") -> list[DevSet]:
    """metaqa-dotted, metaqa-opaque, metaqa-upper and metaqa-ids, from the triples of MetaQA's kb.txt."""
    questions = generate(Kb(triples), *worded(METAQA_PATHS, METAQA_CONJUNCTIONS, METAQA_REWORDINGS, wordings), seed, per_path, per_conjunction,
                         hub_degree)
    return [DevSet("metaqa-dotted", triples, questions, seed, _renamed(DOTTED), notes=["MetaQA's KB, Freebase-style relation names"]),
            DevSet("metaqa-opaque", triples, questions, seed, _renamed(OPAQUE), notes=["MetaQA's KB, Wikidata's property ids"]),
            DevSet("metaqa-upper", triples, questions, seed, str.upper,
                   notes=["MetaQA's KB, relation types in capitals as property graphs write them (`DIRECTED_BY`)"]),
            DevSet("metaqa-ids", triples, questions, seed, _renamed(IDS), notes=["MetaQA's KB, relation ids no vocabulary explains (`R57`)"])]
