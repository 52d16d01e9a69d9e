"""Framing lines ("Here is a summary of the article:") are never flagged by themselves (framing rule 1, way C)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from faithwatch.alignment.lexical import EVIDENCE_FEATURES
from faithwatch.detectors.framing import floor_framing, floor_table
from faithwatch.eval.training import Recipe, fit_syncheck, syncheck_scores
from faithwatch.monitor import Monitor
from faithwatch.results import SentenceReport
from faithwatch.text import is_framing

CONTEXT = "The Eiffel Tower is 330 metres tall. It was built from 1887 to 1889 in Paris."
FRAMING = "Here is a summary of the article in 78 words:"


@pytest.mark.parametrize("sentence", [
    "Here is a concise summary of the passage:",
    "Here's the summary within 109 words:",
    "Based on the given passages, here are the differences between whitetail and mule deer:",
    "To cook brats, follow these steps:",
    "Based on the provided passages, PSA levels can be interpreted as follows:",
    "1. **Here are the key facts:**",
    "Therefore, here is the answer:",
    "I hope this helps!",  # closing lines addressed to the user (rule 2)
    "Let me know if you have any other questions.",
    "If you have any further questions, feel free to ask.",
    "Is there anything else I can help you with?",
    "## Key facts",  # a Markdown heading (rule 3)
    "### The tower in 1889",
    "Based on the provided structured data, here is an objective overview of The Daily Grind:",  # rule 4
    "Based solely on the information provided in the passage, here is a concise summary:",
    "To remove oil stains from a driveway, you can use one of the following methods:",
    "Therefore, the body systems work together in the following ways:",
    "From the passages, we can infer the following meanings of PSA levels:",
    "| Fact | Value |\n|------|-------|",  # a table's header and separator rows (rule 5)
    "|:---|---:|",
    "\u00b9",  # footnote digits alone (rule 6)
    " \u00b2\u00b3 ",
    "Sources:",  # a list of sources (rule 7)
    "**References**",
    "Sources used:",
    "Source: Passage 1",
    "**Sources:** [1], [2]",
    "Sources: Passages 1 and 3.",
    "[1] Eiffel Tower - Wikipedia",
    "[2] https://www.toureiffel.paris/en.",
    "Sure!",  # a pleasantry alone (rule 8)
    "Absolutely !",
    "**Great question!**",
    "Sure, of course!",
    "Thank you so much.",
    "...",  # a line without a word (rule 9)
    "\u2014",
    "! ! !",
    "\U0001f44d",
])
def test_framing_lines(sentence: str) -> None:
    assert is_framing(sentence)


@pytest.mark.parametrize("sentence", [
    "Here is the tower.",  # no colon: a claim
    "Ingredients:",  # a heading
    "1. Sheryl Lee:",
    "The passage describes three main hacking groups:",  # says something about a passage
    "Notable items in the auction include:",
    "The tower was built from 1887 to 1889.",
    "I hope the tower is tall.",
    "The council let me know if it rains.",
    "#1 hit in 1999.",
    "The following countries signed the treaty in 1990:",  # a digit after "the following": a claim
    "The following five groups were named by the ministry of the interior:",  # more than four words
    "In 1889, the tower opened. Here is why:",  # sentence punctuation inside the opening phrase
    "| Built | 1887 to 1889 |",  # a table row claims
    "The tower -- 330 metres --- is tall.",
    "1",  # a plain digit is no footnote mark
    "[1] The tower is 330 metres tall.",  # an entry that ends in a stop reads as a claim
    "1. Eiffel Tower, Wikipedia.",
    "Sources say the tower is 330 metres tall.",
    "Source: the tower is 330 metres tall.",
    "References: 1887 to 1889",
    "Yes.",  # an answer
    "No!",
    "Sure, it is 330 metres tall.",
    "Certainly! The tower is 330 metres tall.",
    "   ",
    "...1887",  # a number is a word
])
def test_not_framing_lines(sentence: str) -> None:
    assert not is_framing(sentence)


def test_floor_raises_only_framing_lines_below_the_threshold() -> None:
    texts = [FRAMING, "The tower is 500 metres tall.", "Here are the facts:"]
    np.testing.assert_allclose(floor_framing([0.1, 0.2, 0.9], texts, 0.5), [0.5, 0.2, 0.9])
    with pytest.raises(ValueError, match="2 scores for 3 sentences"):
        floor_framing([0.1, 0.2], texts, 0.5)
    np.testing.assert_allclose(floor_table([0.1], pd.DataFrame({"x": [1.0]}), 0.5), [0.1])  # no texts


def test_a_framing_line_counts_below_no_threshold() -> None:
    kw = dict(index=0, text=FRAMING, start=0, end=len(FRAMING), token_start=0, token_end=1, features={},
              score=0.2, flagged=False, detector="d")
    assert not SentenceReport(**kw, framing=True).below(0.5)
    assert SentenceReport(**kw).below(0.5) and not SentenceReport(**kw).below(0.1)
    assert SentenceReport(**kw, framing=True).to_dict()["framing"] is True


def test_monitor_never_flags_a_framing_line_by_itself() -> None:
    monitor = Monitor("none", alignment="lexical", detector="heuristic")
    response = f"## Key facts\n\n{FRAMING}\nThe Eiffel Tower is 500 metres tall.\n\nI hope this helps!"
    heading, first, second, third = monitor.score("How tall is it?", CONTEXT, response).sentences
    assert heading.text == "## Key facts" and heading.framing and not heading.flagged
    assert monitor.detector.score(first.features) < monitor.threshold  # "78" reads as a novel number
    assert first.framing and not first.flagged and first.score == monitor.threshold
    assert not second.framing and second.flagged  # the wrong height is still flagged
    assert third.framing and not third.flagged


def test_a_response_without_a_word_is_set_aside_not_scored_as_a_claim() -> None:
    from faithwatch.claims.extraction import SegmentExtractor
    from faithwatch.claims.pipeline import check_response

    monitor = Monitor("none", alignment="lexical", detector="heuristic")
    (dots,) = monitor.score("How tall is it?", CONTEXT, "...").sentences
    assert dots.framing and dots.set_aside and not dots.flagged and dots.score >= monitor.threshold
    dots, wrong = monitor.score("How tall is it?", CONTEXT, "... The Eiffel Tower is 500 metres tall.").sentences
    assert dots.set_aside and not wrong.set_aside and wrong.flagged
    later = monitor.score("How tall is it?", CONTEXT, "The Eiffel Tower is 500 metres tall. ...").sentences
    assert len(later) == 1 and later[0].text.endswith("...") and later[0].flagged  # joins the sentence before
    checked = check_response("...", [CONTEXT], SegmentExtractor("sentence"), _Recording())
    assert checked.abstained and [c.text for c in checked.framing] == ["..."]


def test_a_table_header_is_not_flagged_and_a_wrong_row_still_is() -> None:
    monitor = Monitor("none", alignment="lexical", detector="heuristic")
    response = "| Fact | Value |\n|------|-------|\n| Height | 330 metres |\n| Visitors | 9 million |\n"
    reports = monitor.score("Give me the facts.", CONTEXT, response).sentences
    header, wrong = reports[0], reports[-1]
    assert header.text.endswith("|------|-------|") and header.framing and not header.flagged
    assert "9 million" in wrong.text and not wrong.framing and wrong.flagged


def test_a_list_of_sources_is_not_flagged_and_a_wrong_claim_still_is() -> None:
    monitor = Monitor("none", alignment="lexical", detector="heuristic")
    response = ("The Eiffel Tower is 500 metres tall [1].\n\nSources:\n[1] Eiffel Tower - Wikipedia\n"
                "[2] Paris travel guide")
    claim, *block = monitor.score("How tall is it?", CONTEXT, response).sentences
    assert [r.text for r in block] == ["Sources:", "[1] Eiffel Tower - Wikipedia", "[2] Paris travel guide"]
    assert all(r.framing and not r.flagged for r in block)
    assert not claim.framing and claim.flagged


def _tiny_detector():
    rng = np.random.default_rng(0)
    rows = []
    for dataset in ("a", "b"):
        y = rng.random(120) < 0.4
        table = pd.DataFrame({name: rng.random(120) for name in EVIDENCE_FEATURES})
        table["align_score"] = np.clip(0.7 - 0.4 * y + 0.2 * rng.normal(size=120), 0, 1)
        rows.append(table.assign(dataset=dataset, label=y.astype(int), text="x.",
                                 example_id=[f"{dataset}{i // 3}" for i in range(120)]))
    return fit_syncheck(pd.concat(rows, ignore_index=True), Recipe(families=("alignment", "lexical")),
                        model_id="none")


def test_evaluation_scores_a_framing_line_as_the_monitor_does() -> None:
    det = _tiny_detector()
    monitor = Monitor("none", alignment="lexical", detector=det, signals=["alignment", "lexical"])
    response = f"{FRAMING}\nThe Eiffel Tower is 330 metres tall. It was built in 1950."
    reports = monitor.score("How tall is it?", CONTEXT, response).sentences
    table = pd.DataFrame([r.features for r in reports]).assign(text=[r.text for r in reports])
    np.testing.assert_allclose(syncheck_scores(det, table), [r.score for r in reports])
    raw = det.predict_proba_faithful(table[det.meta.feature_names].to_numpy(dtype=np.float64))
    assert raw[0] < det.threshold  # the floor raised it, in both
    assert [r.framing for r in reports] == [True, False, False]
    assert reports[0].score >= det.threshold and not reports[0].flagged


class _Recording:
    """A checker that says Neutral to every claim and remembers what it was given."""

    name = "recording"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def check(self, claims, references, question=None):
        from faithwatch.claims.types import ClaimVerdict

        self.seen += [c.text for c in claims]
        return [ClaimVerdict(c, "Neutral", 0.5) for c in claims]


def test_check_sets_framing_lines_aside() -> None:
    from faithwatch.claims.extraction import SegmentExtractor
    from faithwatch.claims.pipeline import check_response

    checker = _Recording()
    response = f"{FRAMING}\nThe Eiffel Tower is 330 metres tall.\n\nI hope this helps!"
    result = check_response(response, [CONTEXT], SegmentExtractor("sentence"), checker)
    assert checker.seen == ["The Eiffel Tower is 330 metres tall."]
    assert [c.text for c in result.framing] == [FRAMING, "I hope this helps!"]
    assert result.to_dict()["framing_lines"] == [FRAMING, "I hope this helps!"] and result.hallucination_rate == 1.0
    only = check_response(f"{FRAMING}\nI hope this helps!", [CONTEXT], SegmentExtractor("sentence"), _Recording())
    assert only.abstained and len(only.framing) == 2


def test_a_response_score_leaves_framing_lines_out() -> None:
    from faithwatch.results import response_score

    assert response_score([0.49, 0.8, 0.7], [True, False, False]) == 0.7
    assert response_score([0.49, 0.3], [True, False]) == 0.3
    assert response_score([0.6, 0.49], [True, True]) == 0.49  # nothing but framing lines: the lowest of them
    assert response_score([], []) is None
    with pytest.raises(ValueError, match="2 scores for 1 sentences"):
        response_score([0.1, 0.2], [True])
    monitor = Monitor("none", alignment="lexical", detector="heuristic")
    result = monitor.score("How tall is it?", CONTEXT, f"{FRAMING}\nThe Eiffel Tower is 330 metres tall.")
    framing, claim = result.sentences
    assert framing.framing and framing.score == monitor.threshold < claim.score  # raised to the threshold
    assert result.score == claim.score  # not the framing line's


def test_evaluation_flags_as_the_monitor_does_at_the_threshold() -> None:
    from faithwatch.eval.harness import unfaithful_threshold
    from faithwatch.eval.metrics import detection_metrics

    threshold = 0.4928
    scores = np.array([threshold, 0.2, 0.9, 0.3])  # a framing line raised to the threshold is not flagged
    m = detection_metrics([0, 1, 0, 0], 1 - scores, threshold=unfaithful_threshold(threshold), n_boot=10)
    assert m.balanced_accuracy.value == pytest.approx(0.5 * (1.0 + 2 / 3))  # flagged: 0.2 and 0.3 only
    assert unfaithful_threshold(None) is None


def test_the_evaluation_scores_a_response_without_its_framing_lines() -> None:
    from faithwatch.data.schema import LabelledExample
    from faithwatch.eval.harness import response_level

    examples = [LabelledExample("d", i, CONTEXT, "q", "r", response_label=label) for i, label in (("a", 0), ("b", 1))]
    table = pd.DataFrame({"example_id": ["a", "a", "b", "b"],
                          "text": [FRAMING, "The tower is 330 metres tall.", FRAMING, "It is 500 metres tall."]})
    scores = np.array([0.5, 0.8, 0.5, 0.2])
    got = response_level(examples, table, scores).set_index("example_id").score
    assert got.to_dict() == {"a": 0.8, "b": 0.2}  # "a" is not held down by its framing line
    every = response_level(examples, table, scores, framing=False).set_index("example_id").score
    assert every.to_dict() == {"a": 0.5, "b": 0.2}
