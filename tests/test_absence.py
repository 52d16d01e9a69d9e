"""Absence notes the context bears out, and refusals, are set aside as framing lines are (absence rules 1 and 2)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import faithwatch
from faithwatch.detectors.absence import absent_thing, borne_out, is_refusal
from faithwatch.detectors.framing import floor_table, set_aside
from faithwatch.monitor import Monitor
from faithwatch.results import ASIDE_ABSENCE, ASIDE_FRAMING, SentenceReport

CONTEXT = "The Eiffel Tower is 330 metres tall. It was built from 1887 to 1889 in Paris."


@pytest.mark.parametrize(("sentence", "thing"), [
    ("The passages do not mention the cost of a ticket.", "the cost of a ticket"),
    ("However, the provided context does not specify the average hourly rate.", "the average hourly rate"),
    ("Note: Passage 3 doesn't provide instructions for folding a quilt.", "instructions for folding a quilt"),
    ("There is no mention of the architect's salary in the passages.", "the architect's salary"),
    ("Unfortunately, there is no information about opening hours.", "opening hours"),
    ("The side effects of clove tea are not mentioned in the given passages.", "The side effects of clove tea"),
    ("I'm sorry, but the context does not say who painted it.", "who painted it"),
])
def test_absence_notes(sentence: str, thing: str) -> None:
    assert absent_thing(sentence) == thing


@pytest.mark.parametrize("sentence", [
    "The tower is 330 metres tall.",
    # a second clause claims more than an absence
    "The passage does not mention the cost, but a ticket is about 20 euros.",
    "Some women feel nausea, although this is not mentioned in the passages provided.",
    "The passages do not mention the temperature; cook at 350°F.",
    # a not-mentioned thing without a source: no statement about the context
    "Watching stories is not mentioned as a factor.",
    "The tower does not contain a lift.",
])
def test_not_absence_notes(sentence: str) -> None:
    assert absent_thing(sentence) is None


@pytest.mark.parametrize("sentence", [
    "I cannot answer this question based on the provided context.",
    "I'm sorry, but I don't have enough information to answer that.",
    "Based on the context, I cannot determine the ticket price.",
    "Without further information, it is unable to provide a precise answer based on the given passages.",
    "Unable to answer based on given passages.",
    "It is not possible to determine the ticket price from the passages.",
    "Therefore, the answer to the question cannot be determined based on the provided passages.",  # rule 3
    "This cannot be answered from the context.",
])
def test_refusals(sentence: str) -> None:
    assert is_refusal(sentence) and borne_out(sentence, CONTEXT)  # whatever the context holds


@pytest.mark.parametrize("sentence", [
    "I cannot answer because the passages only discuss its height.",  # a reason: a claim about the context
    "I cannot confirm it, but it is 330 metres tall.",
    "I cannot answer; it is 330 metres tall.",
    "I can tell you it is 330 metres tall.",
    "The tower cannot be climbed at night.",
    "The cause of the fire cannot be determined yet.",  # a claim about the world
    "I don't know much about politics in America.",  # a dialogue turn: names no answer, question or source
    "I don't know.",
    "yeah i think that's good, we can not say that we've ever heard of them.",
])
def test_not_refusals(sentence: str) -> None:
    assert not is_refusal(sentence)


def test_borne_out_only_when_no_context_sentence_holds_the_thing() -> None:
    assert borne_out("The passages do not mention the cost of a ticket.", CONTEXT)
    assert not borne_out("The context does not say how tall the Eiffel Tower is.", CONTEXT)  # it does
    assert not borne_out("The context does not say when it was built.", CONTEXT)  # "built" is there
    assert not borne_out("The passage does not provide any specific information.", CONTEXT)  # names nothing
    assert not borne_out("The tower is 500 metres tall.", CONTEXT)  # no absence note
    assert borne_out("The passages do not mention the cost.", "")  # an empty context lacks everything


def test_monitor_sets_a_borne_out_note_aside_and_keeps_the_others() -> None:
    monitor = Monitor("none", alignment="lexical", detector="heuristic")
    response = ("The Eiffel Tower is 330 metres tall. The passages do not mention the cost of a ticket. "
                "The context does not say how tall the Eiffel Tower is.")
    result = monitor.score("How tall is it, and what does it cost?", CONTEXT, response)
    fact, note, wrong = result.sentences
    assert monitor.detector.score(note.features) < monitor.threshold  # "cost", "ticket" read as novel words
    assert note.absence and not note.framing and note.set_aside and not note.flagged
    assert note.score == monitor.threshold and not note.below(monitor.threshold)
    # the context does say how tall it is: the note keeps its own score
    assert not wrong.absence and not wrong.set_aside and wrong.score == monitor.detector.score(wrong.features)
    assert result.score == min(fact.score, wrong.score)
    assert SentenceReport.from_dict(note.to_dict(vectors=False)).to_dict()["absence"] is True
    sent = note.to_dict(vectors=False)  # what the server sends: the reason in the library's words, no client copy
    assert sent["set_aside"] is True and sent["aside_reason"] == f"{ASIDE_ABSENCE}: not flagged by itself"
    assert fact.to_dict()["set_aside"] is False and fact.to_dict()["aside_reason"] is None
    page = (Path(faithwatch.__file__).parent / "server" / "static" / "index.html").read_text(encoding="utf-8")
    assert "aside_reason" in page and ASIDE_ABSENCE not in page and ASIDE_FRAMING not in page
    assert monitor.scoring_config()["absence"] == "absence3"
    refusal, = monitor.score("What does a ticket cost?", CONTEXT, "I cannot answer this from the context.").sentences
    assert refusal.absence and not refusal.flagged and refusal.score >= monitor.threshold


def test_evaluation_sets_aside_what_the_table_marks() -> None:
    table = pd.DataFrame({"text": ["Here is a summary:", "The passages do not mention the cost.", "It is tall."],
                          "absence": [False, True, False]})
    assert set_aside(table).tolist() == [True, True, False]
    np.testing.assert_allclose(floor_table([0.2, 0.3, 0.1], table, 0.5), [0.5, 0.5, 0.1])
    assert set_aside(table.drop(columns="absence")).tolist() == [True, False, False]
    assert set_aside(table.drop(columns="text")).tolist() == [False, False, False]


def test_labelled_tables_mark_borne_out_notes(tmp_path) -> None:
    from faithwatch.data.schema import LabelledExample
    from faithwatch.eval.pipeline import _absence

    examples = [LabelledExample("d", "a", CONTEXT, "q", "r")]
    rows = pd.DataFrame({"example_id": ["a", "a", "a"],
                         "text": ["It is 330 metres tall.", "The passages do not mention the cost.",
                                  "The passage does not say how tall the tower is."]})
    assert _absence(examples, rows) == [False, True, False]


def test_check_sets_absence_notes_and_refusals_aside_as_the_monitor_does() -> None:
    from faithwatch.claims.extraction import SegmentExtractor
    from faithwatch.claims.pipeline import check_response
    from faithwatch.claims.types import ClaimVerdict

    seen: list[str] = []

    class Recording:
        name = "recording"

        def check(self, claims, references, question=None):
            seen.extend(c.text for c in claims)
            return [ClaimVerdict(c, "Neutral", 0.5) for c in claims]

    note, kept = "The passages do not mention the cost of a ticket.", "The passages do not say how tall it is."
    result = check_response(f"It is 330 metres tall. {note} {kept}", [CONTEXT], SegmentExtractor("sentence"),
                            Recording())
    assert seen == ["It is 330 metres tall.", kept]  # the context holds the height: that note is a claim
    assert [c.text for c in result.absence] == [note] and result.to_dict()["absence_notes"] == [note]
    refusal = check_response("I am unable to answer the question based on the given passages.", [CONTEXT],
                             SegmentExtractor("sentence"), Recording())
    assert refusal.abstained and len(refusal.absence) == 1 and refusal.to_dict()["framing_lines"] == []
