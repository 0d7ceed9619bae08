"""Entity linking on plain questions, as users type them: no brackets, any case, the KG's own
spelling of labels (underscores, punctuation), and KG entities named like common words."""

import pyarrow as pa

from kgwalk.query.lexicon import EntityLexicon
from kgwalk.query.paths import masked_question


def lexicon_of(labels, relations=None):
    rel_table = pa.table({"label": relations}) if relations is not None else None
    return EntityLexicon(pa.table({"id": list(range(len(labels))), "label": labels}), rel_table)


def linked(lex, question):
    return [m.entity for m in lex.mentions(question)]


def test_labels_with_punctuation_at_their_edges_and_underscores_are_linked():
    lex = lexicon_of(["Abra_Catastrophe!", "(24755)_1992_UQ6", "Horton Hears a Who!", "Michael J. Fox", "Whores' Glory", "Kismet"])
    assert linked(lex, "who sang Abra Catastrophe!?") == [0]
    assert linked(lex, "who sang abra catastrophe") == [0]
    assert linked(lex, "when was (24755) 1992 UQ6 found") == [1]
    assert linked(lex, "when was 1992 UQ6 found") == [1]  # the parenthesized qualifier may be left out
    assert linked(lex, "who directed Horton Hears a Who") == [2]
    assert linked(lex, "what films did Michael J. Fox act in") == [3]
    assert linked(lex, "what genres do the movies that share screenwriters with Whores' Glory fall under") == [4]
    assert linked(lex, "who is Kismet's director") == [5]


def test_a_mention_is_the_questions_own_text_so_masking_finds_it():
    lex = lexicon_of(["Abra_Catastrophe!"])
    [mention] = lex.mentions("who sang abra catastrophe!?")
    assert mention.text == "abra catastrophe"
    assert masked_question("who sang abra catastrophe!?", [mention]) == "who sang E!?"
    lex = lexicon_of(["Kismet (1944 film)", "(24755)_1992_UQ6"])
    [mention] = lex.mentions("who directed Kismet (1944 film)?")
    assert masked_question("who directed Kismet (1944 film)?", [mention]) == "who directed E?"  # its closing bracket too
    [mention] = lex.mentions("when was (24755) 1992 UQ6 found")
    assert masked_question("when was (24755) 1992 UQ6 found", [mention]) == "when was E found"
    # found without its possessive, a mention leaves it to the masked question: "E's director" still says whose director
    [mention] = lex.mentions("who is Kismet (1944 film)'s director")
    assert mention.text == "Kismet (1944 film)"
    assert masked_question("who is Kismet (1944 film)'s director", [mention]) == "who is E's director"
    question = "who is Kismet (1944 film)’s director"  # a typographic apostrophe reads as a plain one
    assert masked_question(question, lex.mentions(question)) == "who is E's director"
    [mention] = lexicon_of(["Tiffany's"]).mentions("who owns Tiffany's")
    assert mention.text == "Tiffany's"  # a label's own "'s" is the label's


def test_entities_named_like_common_words_count_only_when_nothing_else_is_named():
    labels = ["artist", "album", "Thriller", "Michael Jackson", "director", "Kismet"]
    lex = lexicon_of(labels, relations=["album_artist", "directed_by"])
    assert linked(lex, "who is the artist of the album Thriller") == [2]
    assert linked(lex, "who is the director of Kismet") == [5]
    assert linked(lex, "which album did Michael Jackson release") == [3]
    assert linked(lex, "what is an album") == [1]  # nothing else named: the weak mention stands


def test_in_an_all_lowercase_kg_relation_words_still_mark_common_words():
    lex = lexicon_of(["artist", "thriller", "michael jackson"], relations=["album_artist"])
    assert linked(lex, "who is the artist of thriller") == [1]  # lowercase labels are the norm here
    assert linked(lex, "what is an artist") == [0]


def test_function_words_letters_and_lowercase_spans_for_capitalized_names_are_weak():
    lex = lexicon_of(["Up", "In", "Star!", "Adam Arkin", "F", "Wilson"])
    assert linked(lex, "what does Adam Arkin star in") == [3]  # not the film "Star!", nor "In"
    assert linked(lex, "what did Thomas F Wilson write") == [5]  # a letter alone is not a name...
    assert linked(lex, "who directed Up") == [0]  # ...but a lone weak mention stands
    # no capitals anywhere: case tells nothing, but "star" names "Star!" only without its "!"
    assert linked(lex, "what does adam arkin star in") == [3]
    assert linked(lex, "who directed star") == [2]


def test_ids_of_lists_named_entities_before_common_words():
    lex = lexicon_of(["kismet", "Kismet"])
    assert list(lex.ids_of("KISMET")) == [1, 0]
    assert [m.entity for m in lex.mentions("who directed [Kismet]")] == [1, 0]  # a bracket keeps both
