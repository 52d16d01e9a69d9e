"""faithwatch.text.sentences: pysbd's sentences, placed in the text without a regex per sentence, are pysbd's own."""

from __future__ import annotations

import re
from pathlib import Path

import pysbd
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from faithwatch.eval.pairs import load_pairs
from faithwatch.text.sentences import _first_match_after, segmenter

ROOT = Path(__file__).resolve().parents[1]
PIECES = ["Dr. Smith paid 3.5 dollars.", "The tower is tall.", "Yes.", "It rose 12% in 2023!", "Why?", "...",
          "U.S. officials said so.", "1. Mix the flour.", "\u201cNo,\u201d he said.", "a", "aa", "Ab. ", "x"]
SPACES = [" ", "  ", "\n", "\n\n", "\t", "\u00a0", "\u2003", "\u200b", ""]
TEXTS = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SPACES)), max_size=12).map(
    lambda parts: "".join(p + s for p, s in parts))


def _pysbd(text: str, char_span: bool) -> list:
    """pysbd's own segmenter, spans found by its regex per sentence."""
    out = pysbd.Segmenter(language="en", clean=False, char_span=char_span).segment(text)
    return [(s.sent, s.start, s.end) for s in out] if char_span else out


def _ours(text: str, char_span: bool) -> list:
    out = segmenter("en", char_span=char_span).segment(text)
    return [(s.sent, s.start, s.end) for s in out] if char_span else out


def _real_texts() -> list[str]:
    pairs = load_pairs(ROOT / "tests" / "data" / "blatant.jsonl")
    texts = {p.context for p in pairs} | {p.sentence for p in pairs}
    return sorted(texts) + [(ROOT / "examples" / "eiffel.txt").read_text()]


def test_the_spans_are_pysbds_own_on_real_texts():
    texts = _real_texts()
    assert len(texts) > 40
    for text in texts:
        assert _ours(text, True) == _pysbd(text, True)
        assert _ours(text, False) == _pysbd(text, False)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
def test_the_spans_are_pysbds_own_with_repeats_and_odd_spaces(text: str):
    assert _ours(text, True) == _pysbd(text, True)
    assert _ours(text, False) == _pysbd(text, False)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab \n\u00a0.", max_size=14), st.text(alphabet="ab .", max_size=3), st.integers(0, 15))
@example("aaaa", "aa", 2)  # (2, 4): the regex's matches do not overlap, so not (1, 3)
@example("a  b", "", 0)  # an empty sentence: the first whitespace run
@example("a. a.\u00a0a.", "a.", 3)  # a no-break space is whitespace to \s
def test_the_search_is_the_regexs_first_match_that_ends_later(text: str, sent: str, prior_end: int):
    """The same match as pysbd's ``re.finditer(re.escape(sent) + r"\\s*", text)``, an empty sentence and
    overlapping repeats ("aa" in "aaaa") included."""
    want = next((m.span() for m in re.finditer(re.escape(sent) + r"\s*", text) if m.end() > prior_end), None)
    assert _first_match_after(text, sent, prior_end) == want
