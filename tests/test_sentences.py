"""Sentence segmentation of a growing token stream (faithwatch.sentences.SentenceTracker)."""

from __future__ import annotations

import re

import pytest

from faithwatch.detok import IncrementalText
from faithwatch.sentences import Sentence, SentenceTracker

ABBREV = "Dr. Smith paid 3.5 dollars. The tower is tall."
TEXTS = [
    ABBREV,
    "Mr. Jones paid 4.25 dollars for a ticket. The museum opens at nine! Is it in Paris? Yes",
    " The tower, built in 1889, is 330 metres tall.\nThe river Seine flows through the city.",
    "The café is open. The tower is tall. Prices rose 12% in 2023.",
]
COMPLETE_WORD = re.compile(r"\w+[\s,;:.!?]")


def encode(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def feed_one_by_one(tokenizer, ids: list[int]) -> tuple[SentenceTracker, list[tuple[int, Sentence]]]:
    """Feed token by token; return the tracker and (index of the token whose addition emitted it, sentence)."""
    tracker = SentenceTracker(tokenizer)
    emitted = []
    for i, token in enumerate(ids):
        emitted.extend((i, s) for s in tracker.add([token]))
    emitted.extend((len(ids), s) for s in tracker.finish())
    return tracker, emitted


def test_abbreviations_and_decimals_are_not_split(tokenizer):
    ids = encode(tokenizer, ABBREV)
    assert len(ids) > 8  # really token by token
    tracker, emitted = feed_one_by_one(tokenizer, ids)
    assert [s.text for _, s in emitted] == ["Dr. Smith paid 3.5 dollars.", "The tower is tall."]
    assert tracker.text == ABBREV


def test_sentence_waits_for_a_complete_word_of_the_next(tokenizer):
    ids = encode(tokenizer, ABBREV)
    _, emitted = feed_one_by_one(tokenizer, ids)
    step, first = emitted[0]
    assert step < len(ids), "the first sentence must be emitted while tokens are still coming"
    shown = tokenizer.decode(ids[: step + 1])
    before = tokenizer.decode(ids[:step])
    assert shown.startswith(first.text)
    # at emission the next sentence has a complete word ("The ") and one token earlier it had not
    assert COMPLETE_WORD.search(shown[first.end :])
    assert not COMPLETE_WORD.search(before[first.end :])
    assert before[first.end :].strip() in ("", "The")


def test_nothing_emitted_without_a_following_sentence(tokenizer):
    tracker = SentenceTracker(tokenizer)
    text = "Dr. Smith paid 3.5 dollars. The"
    out = []
    for token in encode(tokenizer, text):
        out.extend(tracker.add([token]))
    assert out == []
    rest = tracker.finish()
    assert [s.text for s in rest] == ["Dr. Smith paid 3.5 dollars.", "The"]
    assert [s.index for s in rest] == [0, 1]
    assert tracker.finish() == []  # nothing left


def test_finish_emits_the_unfinished_tail(tokenizer):
    ids = encode(tokenizer, TEXTS[1])
    tracker, emitted = feed_one_by_one(tokenizer, ids)
    texts = [s.text for _, s in emitted]
    assert texts == [
        "Mr. Jones paid 4.25 dollars for a ticket.", "The museum opens at nine!", "Is it in Paris?", "Yes",
    ]
    # "Is it in Paris?" waits for a complete word after it, which never comes: both arrive at finish
    assert [step < len(ids) for step, _ in emitted] == [True, True, False, False]


@pytest.mark.parametrize("text", TEXTS)
def test_char_spans_index_the_text(tokenizer, text):
    tracker, emitted = feed_one_by_one(tokenizer, encode(tokenizer, text))
    sentences = [s for _, s in emitted]
    assert tracker.text == tokenizer.decode(tracker.ids, skip_special_tokens=True)
    assert [s.index for s in sentences] == list(range(len(sentences)))
    previous_end = 0
    for s in sentences:
        assert tracker.text[s.start : s.end] == s.text
        assert s.text == s.text.strip() and s.text
        assert s.start >= previous_end
        previous_end = s.end
    # together the sentences hold every non-space character of the response
    assert "".join(s.text for s in sentences).replace(" ", "").replace("\n", "") == (
        tracker.text.replace(" ", "").replace("\n", "")
    )


@pytest.mark.parametrize("text", TEXTS)
def test_token_spans_cover_the_sentence(tokenizer, text):
    ids = encode(tokenizer, text)
    tracker, emitted = feed_one_by_one(tokenizer, ids)
    previous_end = 0
    for _, s in emitted:
        assert 0 <= s.token_start < s.token_end <= len(ids)
        assert s.token_start >= previous_end - 1  # a token may straddle two sentences at most
        previous_end = s.token_end
        # the tokens reach from at most the sentence start to at least its end ...
        assert len(tokenizer.decode(ids[: s.token_start])) <= s.start
        assert len(tokenizer.decode(ids[: s.token_end])) >= s.end
        # ... and are minimal: dropping the first or the last token loses part of the sentence
        assert len(tokenizer.decode(ids[: s.token_start + 1])) > s.start
        assert len(tokenizer.decode(ids[: s.token_end - 1])) < s.end
        assert s.text in tokenizer.decode(ids[s.token_start : s.token_end])
    assert emitted[-1][1].token_end == len(ids)


@pytest.mark.parametrize("text", TEXTS)
def test_all_at_once_equals_one_by_one(tokenizer, text):
    ids = encode(tokenizer, text)
    _, emitted = feed_one_by_one(tokenizer, ids)
    tracker = SentenceTracker(tokenizer)
    at_once = tracker.add(ids) + tracker.finish()
    assert at_once == [s for _, s in emitted]
    assert len(at_once) >= 2


def test_multibyte_characters_split_over_tokens(tokenizer):
    text = "The café is open. The tower is tall."
    ids = encode(tokenizer, text)
    # é is not in the corpus: the byte-level tokenizer spells it with two byte tokens
    assert any("\ufffd" in tokenizer.decode(ids[:i]) for i in range(1, len(ids)))
    tracker, emitted = feed_one_by_one(tokenizer, ids)
    assert [s.text for _, s in emitted] == ["The café is open.", "The tower is tall."]
    assert "\ufffd" not in tracker.text


def test_sentences_never_overlap_on_long_dot_runs(tokenizer):
    text = "The tower is tall...... It is old."
    tracker, emitted = feed_one_by_one(tokenizer, encode(tokenizer, text))
    sentences = [s for _, s in emitted]
    for a, b in zip(sentences, sentences[1:], strict=False):
        assert a.end <= b.start, (a, b)
    assert sum(len(s.text) for s in sentences) <= len(text)


def test_split_sentences_memo_returns_fresh_lists():
    """split_sentences is memoised (several signals split one context): a caller's edit never reaches the next."""
    from faithwatch.text import split_sentences

    text = "The tower is in Paris. It opened in 1889. Mr. Eiffel built it."
    first = split_sentences(text)
    assert first == ["The tower is in Paris.", "It opened in 1889.", "Mr. Eiffel built it."]
    first.append("poison")
    assert split_sentences(text) == first[:-1]
    assert split_sentences(text) is not split_sentences(text)


TRICKY = [
    'He said "Stop." Then he left. The U.S. economy grew by 3.5 percent in 2023, Dr. Smith noted.',
    "The company's revenue (in dollars) rose: it reached 4.2 billion. Its profit fell; costs rose.\n\nNext year?",
    "1. Open the box. 2. Take the cable out.\nThe list ends here. 'Quoted words' Follow here. Done!",
    "It was built c. 1889 by G. Eiffel's firm. Visitors (about 7 million) came... Later it was lit.",
]


@pytest.mark.parametrize("text", TRICKY)
def test_resplit_limit_keeps_the_sentences(tokenizer, text, monkeypatch):
    """Asking the splitter when a possible end arrives and while 1 to RESPLIT_WORDS words follow it gives the
    sentences (and the tokens at which they became final) of asking it at every token."""
    import faithwatch.sentences as sentences

    ids = encode(tokenizer, text)
    calls: list[bool] = []
    split = SentenceTracker._split
    monkeypatch.setattr(SentenceTracker, "_split", lambda self, final: calls.append(final) or split(self, final))
    _, limited = feed_one_by_one(tokenizer, ids)
    asked_limited = len(calls)
    monkeypatch.setattr(SentenceTracker, "_worth_splitting",  # every token with a possible end in the open tail
                        lambda self, text, _new: bool(sentences._BOUNDARY_CHARS.search(text, self._final_end)))
    _, every = feed_one_by_one(tokenizer, ids)
    assert limited == every
    assert len(limited) >= 3
    assert asked_limited < len(calls) - asked_limited  # the rule saves calls to the splitter


def _metaspace_tokenizer():
    """A SentencePiece-style tokenizer (Metaspace): decoding a slice drops its first token's leading space, so
    the incremental decoder needs its context window to get the spaces right."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>"], show_progress=False)
    tok.train_from_iterator(TEXTS * 4, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>")


class _ComposingTokenizer:
    """Words and combining marks as tokens; decoding composes them (NFC), so a mark rewrites the character
    before it: "cafe" + U+0301 decodes to "café", which does not start with "cafe"."""

    def __init__(self, text: str) -> None:
        import unicodedata

        self._nfc = unicodedata.normalize
        self.pieces = re.findall(r"\u0301|\s*[^\s\u0301]+", text)

    def encode(self) -> list[int]:
        return list(range(len(self.pieces)))

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        return self._nfc("NFC", "".join(self.pieces[i] for i in ids))


def _full_decode_run(tokenizer, ids: list[int]) -> tuple[list, list[str]]:
    """Sentences (with the token that emitted them) and the text at every step, decoding every token again."""
    return _steps(SentenceTracker(tokenizer, incremental=False), ids)


def _steps(tracker: SentenceTracker, ids: list[int]) -> tuple[list, list[str]]:
    emitted, texts = [], []
    for i, token in enumerate(ids):
        emitted += [(i, s) for s in tracker.add([token])]
        texts.append(tracker.text)
    emitted += [(len(ids), s) for s in tracker.finish()]
    return emitted, [*texts, tracker.text]


@pytest.mark.parametrize("kind", ["byte-level", "metaspace", "composing"])
def test_incremental_text_equals_a_full_decode(tokenizer, kind):
    text = " ".join(TEXTS) + " Le cafe\u0301 est ouvert. Zoë’s naïve façade 🚀 done."
    if kind == "byte-level":
        tok, ids = tokenizer, encode(tokenizer, text)
    elif kind == "metaspace":
        tok = _metaspace_tokenizer()
        ids = encode(tok, text)
    else:
        tok = _ComposingTokenizer(text)
        ids = tok.encode()
    emitted, texts = _steps(SentenceTracker(tok), ids)
    assert texts == [tok.decode(ids[: i + 1], skip_special_tokens=True) for i in range(len(ids))] + [texts[-1]]
    assert texts[-1] == tok.decode(ids, skip_special_tokens=True)
    assert emitted == _full_decode_run(tok, ids)[0]
    assert len(emitted) >= 8


def test_incremental_decoding_decodes_few_tokens(tokenizer):
    ids = encode(tokenizer, " ".join(TEXTS * 3))
    longest = []
    real = tokenizer.decode

    class Counting:
        def decode(self, part, **kwargs):
            longest.append(len(part))
            return real(part, **kwargs)

    _steps(SentenceTracker(Counting()), ids)
    per_token = longest[: 2 * len(ids)]
    assert max(per_token) <= 8  # a short window per token, not the whole response
    assert longest[-1] == len(ids)  # finish checks the whole text once


@pytest.mark.parametrize("kind", ["byte-level", "metaspace"])
def test_incremental_text_started_from_earlier_tokens(tokenizer, kind):
    tok = tokenizer if kind == "byte-level" else _metaspace_tokenizer()
    ids = encode(tok, " ".join(TEXTS) + " Zoë’s naïve façade 🚀 done.")
    for start in (1, 5, len(ids) // 2):  # a beam's answer so far, then its branch's new tokens
        detok = IncrementalText(tok, ids[:start])
        assert detok.text == tok.decode(ids[:start], skip_special_tokens=True)
        for i in range(start, len(ids)):
            assert detok.add(ids[i]) == tok.decode(ids[: i + 1], skip_special_tokens=True)


@pytest.mark.parametrize(("sentence", "earlier", "expected"), [
    ("The Bridge opened in 1820!", ["The bridge opened in 1820."], True),  # case and punctuation aside
    ("3. The bridge opened in 1820.", ["1. The bridge opened in 1820."], True),  # list numbers aside
    ("The answer is: 1.", ["1. The answer is: 1."], True),
    ("- It is long.", ["• It is long."], True),  # bullets aside
    ("It is 500 m.", ["It is 330 m."], False),  # another number says something else
    ("1920 was the year it opened.", ["1820 was the year it opened."], False),  # a year is no list number
    ("A. Smith built it.", ["B. Smith built it."], False),  # an initial is no list marker
    ("2.", ["1."], False),
    ("...", ["..."], False),  # no words: nothing to repeat
])
def test_what_counts_as_a_repeat(sentence, earlier, expected):
    from faithwatch.text import repeats

    assert repeats(sentence, earlier) is expected


@pytest.mark.parametrize("text, blank", [
    ("", True), (" \n\t", True), ("\u200b", True), ("\ufeff \u2060\u200c", True), ("\x00\x07", True),
    ("\u00a0\u3000", True), (".", False), ("\u200bA", False), ("é", False), ("ä", False), ("中", False),
])
def test_text_is_blank_without_a_visible_character(text, blank):
    from faithwatch.text import is_blank
    assert is_blank(text) is blank
