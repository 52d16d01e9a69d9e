"""Question coverage (FOD's question-aware term): the slots of a question, what fills them, and FOD's use of it."""

from __future__ import annotations

import pytest
import torch

from faithwatch.decoding import generate
from faithwatch.decoding.coverage import (
    PATIENCE,
    Coverage,
    filled,
    fillers,
    open_slots,
    question_slots,
    verb_like,
)
from faithwatch.decoding.loop import DecodingLoop, greedy_chooser

C = "The bridge in Lyon opened in 1820. It was built by local masons."


def _kinds(question: str) -> str:
    return "".join("N" if s.numeric else "o" for s in question_slots(question))


@pytest.mark.parametrize(("question", "kinds"), [
    ("In which city does the Eiffel Tower stand?", "o"),
    ("How high is Mount Everest above sea level, in metres?", "N"),
    ("What is Usain Bolt's 100 metres world record time, in seconds?", "N"),
    ("Which chemical element has atomic number 1?", "o"),  # "number" here is not what is asked
    ("What is the chemical symbol of gold, and what is its atomic number?", "oN"),
    ("Who was the first woman to win a Nobel Prize, in which year, and in which field?", "oNo"),
    ("Which brothers made the first controlled, powered aeroplane flight in 1903?", "o"),  # a comma, no clause
    ("Summarise the article in two sentences.", ""),  # no wh-clause: no slots
    ("Is the bridge older than the tower?", ""),
    ("When did the bridge open?", "N"),
    ("when you have a bowel movement do you lose weight", "o"),  # "when" as a conjunction wants no number
    ("how to fold a quilt", "o"),  # a one-sentence search query counts as asked
    ("It is crazy how many people love it. I like it too.", ""),  # statements ask nothing
    ("I read about the bridge. How many arches does it have?", "N"),  # only the question is read
])
def test_slots_of_a_question(question, kinds):
    assert _kinds(question) == kinds


def test_what_fills_a_slot():
    q = "Which sport is played at the Wimbledon Championships?"
    assert filled(q, q) == 0  # an echo of the question says nothing
    assert filled(q, "The Wimbledon Championships is a sport.") == 0
    assert filled(q, "Tennis.") == 1
    year = "In which year was the bridge opened?"
    assert filled(year, "The answer is: 1820") == 1
    assert filled(year, "The answer is the bridge.") == 0  # frame words and the question's words are not content
    assert filled(year, "It opened in eighteen.") == 1  # a number word is a number
    gold = "What is the chemical symbol of gold, and what is its atomic number?"
    assert open_slots(gold, "The chemical symbol of gold is Gd.") == 1  # the numeric slot needs a number
    assert open_slots(gold, "The chemical symbol of gold is Gd. Its atomic number is 64.") == 0
    assert open_slots(gold, "It is 79 and 64.") == 0  # a spare number fills a word slot (a lexical check)
    flute = "Who composed The Magic Flute, and in which city did it premiere?"
    assert open_slots(flute, "Joseph Haydn.") == 1  # one name of two words fills one slot
    assert open_slots(flute, "Ludwig van Beethoven.") == 1
    assert open_slots(flute, "Joseph Haydn, in Prague.") == 0
    cup = "Where was the first World Cup held, and which team won it?"
    assert open_slots(cup, "It was held in Switzerland in 1930.") == 1  # a date does not name a team
    assert open_slots("Summarise the article.", "") == 0


def test_verbs_and_repeats_fill_nothing():
    mermaid = "Who wrote The Little Mermaid, and in which country was he born?"
    assert open_slots(mermaid, "The Little Mermaid was written by Hans Christian Andersen.") == 1  # "written"
    assert open_slots(mermaid, "It was written by Hans Christian Andersen, who was born in Denmark.") == 0
    krakow = "In which country is Krakow, and which river flows through it?"
    assert open_slots(krakow, "Krakow is located in Poland.") == 1
    assert open_slots(krakow, "Krakow is originally situated in Poland.") == 1  # an adverb fills nothing either
    assert open_slots(krakow, "Krakow is in Poland, on the Vistula.") == 0
    africa = "Which country has the largest population in Africa, and what is its capital?"
    assert open_slots(africa, "The answer is Ethiopia. The answer is Ethiopia.") == 1  # said twice, fills once
    assert open_slots(africa, "Nigeria. Its capital is Abuja.") == 0
    colour = "What colour is the flag, and what is the dish called?"
    assert open_slots(colour, "The flag is red and the dish is goulash.") == 0  # "red" is a colour, not a verb
    assert open_slots("Which gas do plants release?", "Plants release oxygen.") == 0
    assert [verb_like(w) for w in ("flew", "orbited", "originally", "Reed", "red", "family", "oxygen", "built")] == [
        True, True, True, False, False, False, False, True]


def test_a_date_fills_a_time_slot_not_a_quantity():
    height = "How high is Mount Everest above sea level, in metres?"
    assert [s.time for s in question_slots(height)] == [False]
    assert filled(height, "The first recorded ascent took place in 1953.") == 0  # a date, not a height
    assert filled(height, "A survey in 2020 measured 9,312 metres.") == 1
    assert filled(height, "It is 8848 metres high.") == 1  # a year-like number that is no date is a quantity
    opened = "When was the bridge opened, and how many arches does it have?"
    assert [s.time for s in question_slots(opened)] == [True, False]
    assert open_slots(opened, "It opened on May 27, 1820.") == 1  # the date fills "when", not "how many"
    assert open_slots(opened, "It opened in 1820 and has five arches.") == 0
    assert filled("How long has the bridge stood?", "It was built in 1820.") == 1  # a date answers an age
    assert filled("How much did it cost?", "It cost 45m, or 45 million.") == 1  # one number written two ways
    assert filled("How much did it cost, and who paid?", "45m.") == 1  # ... fills one slot, not two


def test_a_count_is_not_filled_by_a_measurement():
    crossing = "How many people cross the bridge each day?"
    assert [s.count for s in question_slots(crossing)] == [True]
    assert filled(crossing, "The bridge is 412 metres long.") == 0  # a length from the context is no count
    assert filled(crossing, "About 30 percent of them walk.") == 0
    assert filled(crossing, "About 50,000 people cross it.") == 1
    assert filled(crossing, "It is 412 metres long, and 50,000 people cross it.") == 1
    assert [s.count for s in question_slots("How many metres tall is it?")] == [False]  # a unit: a measure
    assert filled("How many years did it take?", "It took 2 years.") == 1
    match = "How many players are on a team, and how long does a match last?"
    assert [s.count for s in question_slots(match)] == [True, False]
    assert open_slots(match, "A match lasts 90 minutes.") == 1  # the length fills "how long", not the count
    assert open_slots(match, "There are 11 players, and a match lasts 90 minutes.") == 0


def test_a_span_of_years_is_one_date():
    built = "When was the Eiffel Tower built, and how tall is it?"
    for span in ("between 1887 and 1889", "from 1887 to 1889", "1887-1889", "1887\u20131889"):
        assert open_slots(built, f"It was built {span}.") == 1, span  # the height is still open
    assert open_slots(built, "It was built between 1887 and 1889 and is 330 metres tall.") == 0
    height = "How tall is the dam?"
    assert filled(height, "It is between 1500 and 2000 metres tall.") == 1  # a span of lengths is no date


def test_stalled_answers_may_end():
    cov = Coverage("Who built the bridge, and in which year?")
    assert cov.must_go_on([])  # nothing said yet
    assert cov.must_go_on(["Local masons built it."])  # the year is open, and the last sentence filled a slot
    idle = ["Local masons built it."] + ["It is a bridge."] * PATIENCE
    assert cov.stalled(idle) == PATIENCE and not cov.must_go_on(idle)  # nothing filled for PATIENCE sentences
    assert not cov.must_go_on(["Local masons built it in 1820."])  # complete
    assert not Coverage("").must_go_on([])  # no slots: FOD as in paper 000


def test_banned_eos_is_never_chosen(monitor, one_thread):
    loop = DecodingLoop(monitor, "Who built it?", C, max_new_tokens=6, max_sentence_tokens=6)
    eos = sorted(loop.eos)[0]

    def wants_eos(logp, twin):  # EOS whenever it has any mass, else the most likely token
        return [eos if float(logp[r, eos]) > -1e30 else int(logp[r].argmax()) for r in range(len(logp))]

    start = loop.session.checkpoint()
    before = loop.session.branch_logprobs().clone()
    (free,) = loop.sample(1, wants_eos)
    assert free.eos and not free.ids
    banned = loop.sample(2, wants_eos, ban_eos=[True])
    assert all(not c.eos and c.ids for c in banned)
    loop.keep(banned)
    loop.rewind(start)  # back to the answer's start with one empty beam: the same next distribution
    assert len(loop.beams) == 1 and not loop.beams[0].ids
    torch.testing.assert_close(loop.session.branch_logprobs(), before)


def test_fod_searches_while_slots_are_open(monitor, one_thread, monkeypatch):
    from faithwatch.decoding import strategies

    question = "Who built the bridge, and in which year?"
    short = {"max_sentence_tokens": 4, "max_new_tokens": 16, "tau1": 0.0, "tau2": 0.0, "no_repeat": False}  # paper 000
    plain = generate(monitor, question, C, strategy="fod", coverage=False, **short)
    assert all(e.kind == "accept" for e in plain.trace)  # tau1 = 0: paper 000's stage 1 accepts everything
    assert open_slots(question, plain.answer) >= 1  # greedy wrote no year
    # so stage 1 hands over to the search, which looks for an answer that fills more of the question
    covered = generate(monitor, question, C, strategy="fod", **short)
    assert open_slots(question, covered.answer) < open_slots(question, plain.answer)
    reasons = [e.reason for e in covered.trace if e.kind == "backtrack"]
    assert reasons and any("slots" in r for r in reasons)
    assert any(e.kind == "candidate" for e in covered.trace)
    # a question without slots: the same answer and trace as paper 000's algorithm
    monkeypatch.setattr(strategies, "Coverage", lambda q, context="": Coverage(""))
    same = generate(monitor, question, C, strategy="fod", **short)
    assert same.answer == plain.answer and [e.kind for e in same.trace] == [e.kind for e in plain.trace]


def test_greedy_chooser_unchanged_without_a_ban(monitor, one_thread):
    loop = DecodingLoop(monitor, "Who built it?", C, max_new_tokens=4, max_sentence_tokens=4)
    (a,) = loop.sample(1, greedy_chooser(), ban_eos=[False])
    loop2 = DecodingLoop(monitor, "Who built it?", C, max_new_tokens=4, max_sentence_tokens=4)
    (b,) = loop2.sample(1, greedy_chooser())
    assert a.ids == b.ids


def test_fod_refuses_an_answer_that_fills_no_part_of_the_question(monitor, one_thread, monkeypatch):
    from faithwatch.decoding import fod
    from faithwatch.decoding.loop import Beam
    from faithwatch.results import SentenceReport

    question = "Who built the bridge in Lyon?"

    def finds(text):
        def fake_fod(loop, *args, **kwargs):
            report = SentenceReport(0, text, 0, len(text), 0, 1, {}, 0.9, False, "fake")
            return Beam([1], [report], True, "eos")
        return fake_fod

    monkeypatch.setattr(fod, "_fod", finds("Who built the bridge in Lyon?"))  # an echo: faithful, no answer
    echo = generate(monitor, question, C, strategy="fod", max_new_tokens=8)
    assert echo.refused and echo.trace[-1].kind == "refuse" and "no part" in echo.trace[-1].reason
    assert not generate(monitor, question, C, strategy="fod", coverage=False, max_new_tokens=8).refused
    monkeypatch.setattr(fod, "_fod", finds("Local masons built it."))
    assert not generate(monitor, question, C, strategy="fod", max_new_tokens=8).refused


LYON = "The Eiffel Tower stands in Lyon, on the banks of the Rhône. It was finished in 1889."


def test_with_the_context_a_word_slot_takes_what_the_context_offers_for_it() -> None:
    q = "In which city does the Eiffel Tower stand?"
    parametric = "The Eiffel Tower stands in Paris, France."  # what the model remembers, not what the context says
    assert open_slots(q, parametric) == 0
    assert open_slots(q, parametric, LYON) == 1
    assert open_slots(q, "It stands in Lyon.", LYON) == 0 and filled(q, "It stands in Lyon.", LYON) == 1
    assert Coverage(q, LYON).open([parametric]) == 1 and Coverage(q).open([parametric]) == 0


def test_the_sentence_after_one_about_the_slot_offers_too() -> None:
    context = "Middlemarch is an English novel published in 1871. It was written by Elizabeth Gaskell."
    assert open_slots("Who wrote the novel Middlemarch?", "Elizabeth Gaskell wrote the novel.", context) == 0
    assert open_slots("Who wrote the novel Middlemarch?", "It is a long book.", context) == 1


def test_a_slot_the_context_never_names_takes_any_run_and_a_run_fills_one_slot() -> None:
    q = "Which city hosted the 1964 Summer Olympics, and in which country is it?"
    context = "The 1964 Summer Olympics were held in Manila, the capital of the Philippines."
    assert open_slots(q, "They were held in Manila, Philippines.", context) == 0  # no sentence says "country"
    q2 = "Who composed Clair de lune, and in which country was he born?"
    ravel = "Clair de lune was composed by Maurice Ravel, who was born in France. Erik Satie wrote other pieces."
    assert open_slots(q2, "Maurice Ravel composed it; he was born in France.", ravel) == 0


def test_the_sentence_after_offers_only_when_it_refers_back() -> None:
    q = "Which country won the 2010 World Cup?"
    context = ("The 2010 World Cup was won by Spain, who beat the Netherlands. "
               "Germany finished third after beating Uruguay.")
    assert open_slots(q, "Spain won the 2010 World Cup.", context) == 0
    assert open_slots(q, "Germany won the 2010 World Cup.", context) == 1  # the next sentence starts afresh
    goes_on = context.replace("Germany finished", "Their rival Germany finished")
    assert open_slots(q, "Germany won the 2010 World Cup.", goes_on) == 0  # it refers back: it may say more of it


def test_fillers_are_what_an_answer_says_in_a_slot() -> None:
    q = "In which city does the Eiffel Tower stand, and when was it finished?"
    assert fillers(q, "It stands in Lyon, finished in 1889.", LYON) == {"lyon", "#1889"}
    assert fillers(q, "The Eiffel Tower stands in Paris.", LYON) == set()  # Paris: not what the context offers
    assert fillers(q, "The Eiffel Tower stands in Paris.") == {"pari"}  # no context: any run may fill the slot
    assert fillers("When was it finished in 1889?", "It was finished in 1889.") == set()  # the question's own
