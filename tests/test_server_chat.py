"""/v1/chat/completions' generator: n choices as branches of one session equal the same choices made one at a time."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic")
from faithwatch.server.chat import ChatRequest, generate_choices  # noqa: E402

MESSAGES = [{"role": "user", "content": "Tell me about the tower in Paris."}]


def _request(**kw) -> ChatRequest:
    return ChatRequest(messages=MESSAGES, logprobs=True, top_logprobs=2, **kw)


@pytest.mark.parametrize("temperature", [0.0, 0.9])
def test_choices_together_equal_choices_alone(lm, temperature):
    together = generate_choices(lm, _request(n=3, seed=5, temperature=temperature), 12, lambda: None)
    alone = [generate_choices(lm, _request(n=1, seed=5 + i, temperature=temperature), 12, lambda: None)[0]
             for i in range(3)]
    assert [c["index"] for c in together] == [0, 1, 2]
    for mine, theirs in zip(together, alone, strict=True):
        assert mine["message"] == theirs["message"]
        assert mine["finish_reason"] == theirs["finish_reason"]
        got, want = mine["logprobs"]["content"], theirs["logprobs"]["content"]
        assert [e["token"] for e in got] == [e["token"] for e in want]
        assert all(abs(a["logprob"] - b["logprob"]) < 1e-4 for a, b in zip(got, want, strict=True))
    if temperature > 0:  # seeds differ per choice: the choices are not all the same text
        assert len({c["message"]["content"] for c in together}) > 1


def test_deltas_rebuild_each_choice(lm):
    """Streamed pieces interleave across choices; each choice's pieces join to its text and end once."""
    pieces: dict[int, list[str]] = {0: [], 1: []}
    ends: dict[int, list[str]] = {0: [], 1: []}

    def on_delta(index, text, _entries, finish):
        (ends[index].append(finish) if finish else pieces[index].append(text))

    choices = generate_choices(lm, _request(n=2, seed=1, temperature=1.0), 10, lambda: None, on_delta)
    for c in choices:
        assert "".join(pieces[c["index"]]) == c["message"]["content"]
        assert ends[c["index"]] == [c["finish_reason"]]


@pytest.mark.parametrize("field, value", [("stream", "yes"), ("logprobs", 1), ("continue_final_message", "no"),
                                          ("add_generation_prompt", "false")])
def test_flags_are_json_booleans(field, value):
    # "stream": "yes" was read as true (pydantic's lax mode); OpenAI's API and faithwatch proxy refuse it
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="valid boolean"):
        ChatRequest(messages=MESSAGES, **{field: value})


@pytest.mark.parametrize("field, value", [("n", "2"), ("n", True), ("max_tokens", "5"), ("top_logprobs", True),
                                          ("temperature", "0.5"), ("seed", "7")])
def test_numbers_are_json_numbers(field, value):
    # "n": "2" was read as 2 and "n": true as 1 (pydantic's lax mode); OpenAI's API and faithwatch proxy refuse them
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="must be a number"):
        ChatRequest(messages=MESSAGES, logprobs=True, **{field: value})
    told = ChatRequest(messages=MESSAGES, n=2.0, temperature=1)  # JSON's 2.0 is the integer 2; 1 is a float
    assert (told.n, told.temperature) == (2, 1.0)


def test_a_content_part_that_is_not_text_is_refused_not_dropped():
    from pydantic import ValidationError

    parts = [{"type": "text", "text": "What is in this picture?"}, {"type": "image_url", "image_url": {"url": "x"}}]
    with pytest.raises(ValidationError, match="reads text only, got type 'image_url'"):  # was answered without it
        ChatRequest(messages=[{"role": "user", "content": parts}])
    told = ChatRequest(messages=[{"role": "user", "content": parts[:1]}])
    assert told.messages[0].text() == "What is in this picture?"


@pytest.mark.parametrize("field, value", [("top_p", 0.9), ("frequency_penalty", 0.5), ("presence_penalty", -1),
                                          ("logit_bias", {"50256": -100}), ("response_format", {"type": "json_object"}),
                                          ("tool_choice", "required"), ("top_k", 40), ("repetition_penalty", 1.2),
                                          ("top_p", True)])
def test_sampling_and_output_fields_it_cannot_honour_are_refused_not_ignored(field, value):
    # top_p 0.9, a JSON response_format or a required tool call were accepted and ignored: the answer came from the
    # plain distribution as plain text, with nothing to tell the client
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=f"cannot honour {field} "):
        ChatRequest(messages=MESSAGES, **{field: value})


def test_the_neutral_values_that_clients_send_by_default_are_taken():
    neutral = {"top_p": 1, "frequency_penalty": 0.0, "presence_penalty": 0, "logit_bias": {}, "top_k": -1,
               "response_format": {"type": "text"}, "tool_choice": "auto", "tools": [{"type": "function"}],
               "user": "ana"}
    assert ChatRequest(messages=MESSAGES, **neutral).model_extra["top_p"] == 1
