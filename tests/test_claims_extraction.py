"""Claim extraction: granularities, triplet parsing of recorded LLM answers, retries, span mapping."""

from __future__ import annotations

import pytest

from faithwatch.claims import (
    ExtractionError,
    HFChatBackend,
    SegmentExtractor,
    TripletExtractor,
    get_extractor,
    parse_triplets,
)
from faithwatch.claims.extraction import TripletFormatError
from faithwatch.claims.llm import LLMBackendError
from faithwatch.claims.spans import chunk_spans, find_quote, locate, sentence_spans, subsentence_spans
from faithwatch.errors import InputError

RESPONSE = ("The Eiffel Tower is in Paris. It was completed in 1889 and is 330 metres tall; "
            "Gustave Eiffel's company built it, but the design came from two engineers.")

# recorded answers of chat models (shapes seen from small local models and hosted APIs)
VALID = '[["Eiffel Tower", "located in", "Paris"], ["Eiffel Tower", "completed in", "1889"]]'
FENCED = "```json\n" + VALID + "\n```"
WITH_PROSE = "Sure! Here are the triplets [as JSON]:\n" + VALID + "\nLet me know if you need more."
OBJECTS = ('{"triplets": [{"subject": "Eiffel Tower", "predicate": "height", "object": 330}, '
           '{"head": "Eiffel Tower", "relation": "located in", "tail": "Paris"}]}')
PARTIAL = '[["Eiffel Tower", "located in", "Paris"], ["Eiffel Tower", "completed'
TWO_ITEMS = '[["Eiffel Tower", "located in"]]'
PROSE_ONLY = "The Eiffel Tower is located in Paris and was completed in 1889."


class Scripted:
    """An LLM backend that replays recorded answers and records what it was sent."""

    name = "scripted"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[dict] = []

    def complete(self, messages, *, max_tokens, temperature):
        self.calls.append({"messages": [dict(m) for m in messages], "max_tokens": max_tokens,
                           "temperature": temperature})
        return self.replies[min(len(self.calls), len(self.replies)) - 1]


def test_get_extractor_triplet_parses_the_scripted_reply_into_claims() -> None:
    # the whole path behind get_extractor("triplet"): prompt -> backend -> parse -> spans, on a chatty reply
    backend = Scripted(WITH_PROSE)
    extractor = get_extractor("triplet", backend, max_retries=1, max_tokens=64)
    assert extractor.name == "triplet (scripted)"
    claims = extractor.extract(RESPONSE)
    assert [c.triplet for c in claims] == [("Eiffel Tower", "located in", "Paris"),
                                          ("Eiffel Tower", "completed in", "1889")]
    assert [c.text for c in claims] == ["Eiffel Tower located in Paris", "Eiffel Tower completed in 1889"]
    assert [RESPONSE[slice(*c.response_span)] for c in claims] == ["Eiffel Tower is in Paris", "completed in 1889"]
    assert [(c["max_tokens"], c["temperature"]) for c in backend.calls] == [(64, 0.0)]
    assert backend.calls[0]["messages"][-1]["content"] == f"Question: (none)\nResponse: {RESPONSE}"


def test_malformed_reply_is_retried_then_reported_with_its_error() -> None:
    # one good triplet and one bad item: nothing is half-accepted, the error names the item
    bad = '[["Eiffel Tower", "located in", "Paris"], ["Eiffel Tower", 1889]]'
    backend = Scripted(bad)
    with pytest.raises(ExtractionError) as info:
        get_extractor("triplet", backend, max_retries=1).extract(RESPONSE)
    item = 'item 2 is ["Eiffel Tower", 1889], not [subject, predicate, object] (three non-empty strings)'
    assert str(info.value) == f"triplet extraction failed after 2 attempt(s) with scripted: {item}"
    assert info.value.attempts == [bad, bad] and info.value.errors == [item, item]
    retry = backend.calls[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": bad} and item in retry[-1]["content"]


def test_cut_off_replies_double_the_budget_up_to_four_times() -> None:
    backend = Scripted(PARTIAL)
    with pytest.raises(ExtractionError, match="cut off") as info:
        TripletExtractor(backend, max_retries=3, max_tokens=100).extract(RESPONSE)
    assert [c["max_tokens"] for c in backend.calls] == [100, 200, 400, 400]
    assert info.value.errors == ["invalid JSON: the JSON is cut off before its end"] * 4


# ---- parsing ------------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [VALID, FENCED, WITH_PROSE, "```\n" + VALID])
def test_parse_valid_answers(answer: str) -> None:
    assert parse_triplets(answer) == [("Eiffel Tower", "located in", "Paris"), ("Eiffel Tower", "completed in", "1889")]


def test_parse_object_forms_numbers_and_duplicates() -> None:
    assert parse_triplets(OBJECTS) == [("Eiffel Tower", "height", "330"), ("Eiffel Tower", "located in", "Paris")]
    dup = '[["a b", "is", "c"], ["A B", "IS", "c "], ["x", "y", "z"]]'
    assert parse_triplets(dup) == [("a b", "is", "c"), ("x", "y", "z")]
    assert parse_triplets("[]") == []


@pytest.mark.parametrize(
    ("answer", "message", "truncated"),
    [
        (PARTIAL, "cut off", True),
        (TWO_ITEMS, "item 1", False),
        (PROSE_ONLY, "no JSON list", False),
        ("", "empty", False),
        ('[["a", "", "c"]]', "three non-empty strings", False),
        ('{"answer": "none"}', "object with keys", False),
        ('[["a", "b", "c"],]', "invalid JSON", False),
    ],
)
def test_parse_invalid_answers(answer: str, message: str, truncated: bool) -> None:
    with pytest.raises(TripletFormatError, match=message) as info:
        parse_triplets(answer)
    assert info.value.truncated is truncated


# ---- retries --------------------------------------------------------------------------------------


def test_valid_answer_one_call_and_prompt() -> None:
    backend = Scripted(FENCED)
    claims = TripletExtractor(backend).extract(RESPONSE, question="Tell me about the tower.")
    assert len(backend.calls) == 1
    call = backend.calls[0]
    assert call["temperature"] == 0.0 and call["max_tokens"] == 512
    roles = [m["role"] for m in call["messages"]]
    assert roles == ["system", "user", "assistant", "user"]  # instructions, one example, the response
    assert "EXTRACTION" in call["messages"][0]["content"]
    assert RESPONSE in call["messages"][-1]["content"] and "Tell me about the tower." in call["messages"][-1]["content"]
    assert [c.triplet for c in claims] == [("Eiffel Tower", "located in", "Paris"),
                                          ("Eiffel Tower", "completed in", "1889")]
    assert all(c.granularity == "triplet" and c.text == " ".join(c.triplet) for c in claims)


def test_longer_item_lists_join_into_the_object_and_shorter_ones_fail() -> None:
    # a small model's qualifier after the object: the claim text joins every item anyway, so nothing is lost
    answer = '[["Eiffel Tower", "built", "1887", "to 1889"], ["Eiffel Tower", "height", 330, "metres"]]'
    assert parse_triplets(answer) == [("Eiffel Tower", "built", "1887 to 1889"),
                                      ("Eiffel Tower", "height", "330 metres")]
    for bad in ('[["a", "b", "c", ""]]', '[["a", "b", "c", ["d"]]]', '[["a", "b", "c", true]]'):
        with pytest.raises(TripletFormatError, match="item 1"):
            parse_triplets(bad)


def test_a_triplet_with_no_word_of_the_response_is_sent_back() -> None:
    # the 135M model answered a porterhouse recipe with the prompt's Eiffel example: not a claim of the response
    recipe = "To grill a porterhouse, spread the coals into a double layer. Sear the steak for four minutes."
    stray = '[["Eiffel Tower", "designed by", "Gustave Eiffel"], ["steak", "seared for", "four minutes"]]'
    good = '[["steak", "seared for", "four minutes"]]'
    backend = Scripted(stray, good)
    claims = TripletExtractor(backend).extract(recipe)
    assert [c.triplet for c in claims] == [("steak", "seared for", "four minutes")]
    retry = backend.calls[1]["messages"][-1]["content"]
    assert 'item 1 ["Eiffel Tower", "designed by", "Gustave Eiffel"]: no word of it is in the response' in retry
    with pytest.raises(ExtractionError, match="no word of it is in the response"):
        TripletExtractor(Scripted(stray), max_retries=1).extract(recipe)
    # a pronoun resolved by the extractor still counts: "1889" is the response's
    assert len(TripletExtractor(Scripted(VALID)).extract("It was completed in 1889 in Paris.")) == 2


def test_invalid_then_valid_feeds_the_error_back() -> None:
    backend = Scripted(TWO_ITEMS, VALID)
    claims = TripletExtractor(backend, max_retries=2).extract(RESPONSE)
    assert len(claims) == 2 and len(backend.calls) == 2
    retry = backend.calls[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": TWO_ITEMS}
    assert "item 1" in retry[-1]["content"] and retry[-1]["role"] == "user"


def test_partial_json_retries_with_a_larger_budget() -> None:
    backend = Scripted(PARTIAL, VALID)
    TripletExtractor(backend, max_tokens=100).extract(RESPONSE)
    assert [c["max_tokens"] for c in backend.calls] == [100, 200]


def test_always_invalid_raises_after_max_retries_plus_one_calls() -> None:
    backend = Scripted(PROSE_ONLY)
    with pytest.raises(ExtractionError, match="after 3 attempt") as info:
        TripletExtractor(backend, max_retries=2).extract(RESPONSE)
    assert len(backend.calls) == 3
    assert info.value.attempts == [PROSE_ONLY] * 3 and len(info.value.errors) == 3
    # the retry chat does not grow: the first messages, the latest bad answer, the correction
    assert len(backend.calls[2]["messages"]) == len(backend.calls[0]["messages"]) + 2
    backend = Scripted(PROSE_ONLY)
    with pytest.raises(ExtractionError):
        TripletExtractor(backend, max_retries=0).extract(RESPONSE)
    assert len(backend.calls) == 1


def test_empty_list_is_no_claim_not_a_failure() -> None:
    assert TripletExtractor(Scripted("[]")).extract("I do not know.") == []


def test_backend_errors_are_not_retried() -> None:
    class Broken:
        name = "broken"
        calls = 0

        def complete(self, messages, *, max_tokens, temperature):
            Broken.calls += 1
            raise LLMBackendError("HTTP 500")

    with pytest.raises(LLMBackendError):
        TripletExtractor(Broken()).extract(RESPONSE)
    assert Broken.calls == 1


def test_extractor_input_errors() -> None:
    with pytest.raises(InputError, match="empty"):
        TripletExtractor(Scripted(VALID)).extract("   ")
    with pytest.raises(InputError, match="unknown extractor"):
        get_extractor("paragraph")
    with pytest.raises(InputError, match="needs an LLM"):
        get_extractor("triplet")
    with pytest.raises(InputError):
        TripletExtractor(Scripted(VALID), max_retries=-1)


# ---- granularities and spans -------------------------------------------------------------------------


def test_granularities_on_a_fixed_text() -> None:
    text = "  " + RESPONSE + "\n"
    whole = get_extractor("response").extract(text)
    assert [c.text for c in whole] == [RESPONSE] and whole[0].response_span == (2, 2 + len(RESPONSE))
    sentences = get_extractor("sentence").extract(text)
    assert [c.text for c in sentences] == [
        "The Eiffel Tower is in Paris.",
        "It was completed in 1889 and is 330 metres tall; Gustave Eiffel's company built it, but the design "
        "came from two engineers.",
    ]
    subs = SegmentExtractor("subsentence").extract(text)
    assert [c.text for c in subs] == [
        "The Eiffel Tower is in Paris.",
        "It was completed in 1889 and is 330 metres tall;",
        "Gustave Eiffel's company built it,",
        "but the design came from two engineers.",
    ]
    for claims in (whole, sentences, subs):
        assert all(text[c.response_span[0] : c.response_span[1]] == c.text and c.span_score == 1.0 for c in claims)
    spans = [c.response_span for c in subs]
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))  # never overlapping


def test_subsentence_merges_short_pieces() -> None:
    text = "Yes: it is. The river, and the bridge, are old."
    assert [text[s:e] for s, e in subsentence_spans(text)] == ["Yes: it is.", "The river, and the bridge, are old."]


def test_triplet_spans_map_back_to_the_response() -> None:
    answer = ('[["Eiffel Tower", "completed in", "1889"], ["Eiffel Tower", "height", "330 metres"], '
              '["Eiffel Tower", "located in", "Paris"]]')
    claims = TripletExtractor(Scripted(answer)).extract(RESPONSE)
    got = [RESPONSE[c.response_span[0] : c.response_span[1]] for c in claims]
    # the subject is a pronoun in the second sentence: the relation and tail find the sentence
    assert got == ["completed in 1889", "330 metres", "Eiffel Tower is in Paris"]
    assert claims[0].span_score == pytest.approx(0.5) and claims[2].span_score == pytest.approx(0.75)


def test_span_helpers() -> None:
    text = "First one.   Second  sentence here.  "
    assert [text[s:e] for s, e in sentence_spans(text)] == ["First one.", "Second  sentence here."]
    assert find_quote("“second sentence\nHERE…”", text) == (13, 34)
    assert find_quote("not there", text) is None
    assert locate("nothing matches", text) == (None, 0.0)
    long = "alpha beta gamma delta. " * 6
    chunks = chunk_spans(long, 10, lambda s: len(s.split()))
    assert all(len(long[s:e].split()) <= 10 for s, e in chunks) and len(chunks) == 3
    one_long_sentence = " ".join(["word"] * 25) + "."
    pieces = chunk_spans(one_long_sentence, 10, lambda s: len(s.split()))
    assert [len(one_long_sentence[s:e].split()) for s, e in pieces] == [10, 10, 5]


# ---- the local HF backend (tiny random model) ------------------------------------------------------------


def test_hf_chat_backend_greedy_and_window(lm) -> None:
    backend = HFChatBackend(lm)
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Where is the tower?"}]
    assert "<|im_start|>system" in backend.render(msgs)
    first = backend.complete(msgs, max_tokens=6, temperature=0.0)
    assert isinstance(first, str) and first == backend.complete(msgs, max_tokens=6, temperature=0.0)
    with pytest.raises(LLMBackendError, match="window"):
        backend.complete([{"role": "user", "content": "word " * 600}], max_tokens=4, temperature=0.0)
    with pytest.raises(ValueError, match="role"):
        backend.complete([{"role": "robot", "content": "x"}], max_tokens=4, temperature=0.0)


def test_triplet_prompt_too_long_for_the_model_is_an_error(lm) -> None:
    # the tiny model's 512-token window cannot hold the extraction prompt: a clear error, not an empty list
    with pytest.raises(LLMBackendError, match="window of 512"):
        TripletExtractor(HFChatBackend(lm), max_retries=1, max_tokens=8).extract(RESPONSE)


@pytest.mark.slow
def test_embedded_model_extracts_triplets_or_fails_loudly(one_thread) -> None:
    from faithwatch.models.loading import load_model

    backend = HFChatBackend(load_model(None, device="cpu"))
    response = "The Eiffel Tower is in Paris. It was completed in 1889 and is 330 metres tall."
    try:
        claims = TripletExtractor(backend, max_retries=1, max_tokens=160).extract(response)
    except ExtractionError as exc:  # allowed, but then with the raw answers for inspection
        assert exc.attempts and exc.errors
        return
    assert claims and all(c.triplet and all(c.triplet) for c in claims)
    assert any(c.response_span is not None for c in claims)
