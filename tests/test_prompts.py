"""The RAG prompt and its no-context twin (faithwatch.models.prompts)."""

from __future__ import annotations

import logging
import re

import pytest

from faithwatch.errors import ContextTooLongError, InputError
from faithwatch.models.prompts import CONTEXT_CLOSE, CONTEXT_OPEN, build_prompts

QUESTION = "Who built the tower?"
CONTEXT = "Gustave Eiffel designed the lattice tower, finished in 1889 for the World's Fair in Paris."
CONTEXT_ONLY_WORDS = ["Gustave", "Eiffel", "designed", "lattice", "finished", "1889", "World", "Fair", "Paris"]
LONG_CONTEXT = " ".join(
    ["The river Seine flows through the city, and the museum opens at nine in the morning."] * 30
)


def split_point(rag: list[int], twin: list[int]) -> tuple[int, int]:
    """(a, b) with twin == rag[:a] + rag[b:], or an AssertionError."""
    a = 0
    while a < min(len(rag), len(twin)) and rag[a] == twin[a]:
        a += 1
    b = len(rag) - (len(twin) - a)
    assert a < b, "the RAG prompt does not contain extra tokens"
    assert twin == rag[:a] + rag[b:], "the twin is not the RAG prompt with one contiguous block removed"
    return a, b


@pytest.fixture(params=["chat", "plain"])
def tok(request, tokenizer, tokenizer_plain):
    return tokenizer if request.param == "chat" else tokenizer_plain


def test_twin_is_rag_without_context_block_string_level(tok):
    pair = build_prompts(tok, QUESTION, CONTEXT)
    block = f"{CONTEXT_OPEN}{CONTEXT}{CONTEXT_CLOSE}"
    assert block == f"Context:\n{CONTEXT}\n\n"
    assert pair.rag_text.count(block) == 1
    assert pair.rag_text.replace(block, "", 1) == pair.twin_text
    assert QUESTION in pair.twin_text and QUESTION in pair.rag_text
    assert pair.context_tokens_cut == 0


def test_twin_is_rag_without_context_block_token_level(tok):
    pair = build_prompts(tok, QUESTION, CONTEXT)
    assert pair.rag_ids == tok(pair.rag_text, add_special_tokens=not tok.chat_template)["input_ids"]
    a, b = split_point(pair.rag_ids, pair.twin_ids)
    assert tok.decode(pair.rag_ids[a:b]) == f"Context:\n{CONTEXT}\n\n"


def test_twin_contains_no_context_words(tok):
    pair = build_prompts(tok, QUESTION, CONTEXT)
    twin_decoded = tok.decode(pair.twin_ids)
    for word in CONTEXT_ONLY_WORDS:
        assert word in pair.rag_text
        assert word not in pair.twin_text
        assert word not in twin_decoded
    assert "Context:" not in pair.twin_text


def test_chat_template_path(tokenizer):
    pair = build_prompts(tokenizer, QUESTION, CONTEXT)
    start = tokenizer.convert_tokens_to_ids("<|im_start|>")
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert pair.rag_text.startswith("<|im_start|>user\n")
    assert pair.rag_text.endswith("<|im_start|>assistant\n")
    # special tokens are single ids, not spelled out byte by byte
    assert pair.rag_ids.count(start) == 2 and pair.rag_ids.count(end) == 1
    assert pair.twin_ids.count(start) == 2 and pair.twin_ids.count(end) == 1


def test_no_chat_template_path(tokenizer_plain):
    pair = build_prompts(tokenizer_plain, QUESTION, CONTEXT, instruction="Be brief.")
    assert pair.rag_text == f"Be brief.\n\nContext:\n{CONTEXT}\n\nQuestion: {QUESTION}\nAnswer:"
    assert pair.twin_text == f"Be brief.\n\nQuestion: {QUESTION}\nAnswer:"
    assert "<|im_start|>" not in pair.rag_text
    assert tokenizer_plain.decode(pair.rag_ids) == pair.rag_text
    split_point(pair.rag_ids, pair.twin_ids)


@pytest.mark.parametrize("question, context", [
    ("", CONTEXT), ("   \n\t", CONTEXT), (QUESTION, ""), (QUESTION, "  \n "),
    ("\u200b", CONTEXT), (QUESTION, "\ufeff\u200c \x07"),  # zero-width, byte-order and control characters only
])
def test_empty_inputs_raise(tokenizer, question, context):
    with pytest.raises(InputError, match="empty"):
        build_prompts(tokenizer, question, context)


@pytest.mark.parametrize("instruction", ["", "  \n"])
def test_a_blank_instruction_is_refused(tokenizer, instruction):
    """A blank instruction is no prompt: refused where prompts are built, so every caller gets the same error."""
    with pytest.raises(InputError, match="instruction is empty"):
        build_prompts(tokenizer, QUESTION, CONTEXT, instruction=instruction)
    told = build_prompts(tokenizer, QUESTION, CONTEXT, instruction="Answer in one word.")
    assert "Answer in one word." in told.rag_text and "Answer in one word." in told.twin_text


@pytest.mark.parametrize("context, said", [
    (["Eiffel designed it.", "It was finished in 1889."], r"a list of 2 strings.*'\\n\\n'\.join\(passages\)"),
    (1889, "must be a string, got int"), (None, "must be a string, got NoneType"),
])
def test_a_context_that_is_no_string_is_named_for_what_it_is(tokenizer, context, said):
    """Not "the context is empty": a list of passages is told how to join them (the Monitor has one context)."""
    with pytest.raises(InputError, match=said):
        build_prompts(tokenizer, QUESTION, context)


def test_too_long_context_raises_with_sizes(tokenizer):
    full = build_prompts(tokenizer, QUESTION, LONG_CONTEXT)
    n = len(full.rag_ids)
    window, reserve = 120, 16
    assert n > window
    with pytest.raises(ContextTooLongError) as info:
        build_prompts(tokenizer, QUESTION, LONG_CONTEXT, max_length=window, reserve=reserve)
    message = str(info.value)
    assert f"{n} tokens" in message
    assert f"{reserve} are reserved" in message
    assert f"window of {window}" in message
    assert str(n + reserve - window) in message
    assert isinstance(info.value, InputError)


def test_prompt_that_fits_is_untouched(tokenizer):
    full = build_prompts(tokenizer, QUESTION, CONTEXT)
    fit = build_prompts(tokenizer, QUESTION, CONTEXT, max_length=len(full.rag_ids) + 5, reserve=5)
    assert fit.rag_ids == full.rag_ids and fit.context_tokens_cut == 0
    with pytest.raises(ContextTooLongError):
        build_prompts(tokenizer, QUESTION, CONTEXT, max_length=len(full.rag_ids) + 5, reserve=6)


def test_truncate_context_fits_and_warns(tokenizer, caplog):
    window, reserve = 120, 16
    full = build_prompts(tokenizer, QUESTION, LONG_CONTEXT)
    with caplog.at_level(logging.WARNING, logger="faithwatch.models.prompts"):
        pair = build_prompts(
            tokenizer, QUESTION, LONG_CONTEXT, max_length=window, reserve=reserve, truncate_context=True
        )
    assert len(pair.rag_ids) + reserve <= window
    assert pair.context_tokens_cut > 0
    assert pair.context_tokens_cut >= len(full.rag_ids) + reserve - window
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings, "truncation must be logged"
    text = warnings[-1].getMessage()
    assert "truncated" in text.lower()
    assert str(pair.context_tokens_cut) in re.findall(r"\d+", text)
    # the head of the context is kept, the twin is unaffected by truncation
    assert "Context:\nThe river Seine flows" in pair.rag_text
    assert pair.twin_text == full.twin_text and pair.twin_ids == full.twin_ids
    split_point(pair.rag_ids, pair.twin_ids)


def test_truncation_cannot_help_when_question_alone_is_too_long(tokenizer):
    full = build_prompts(tokenizer, QUESTION, CONTEXT)
    twin_len = len(full.twin_ids)
    with pytest.raises(ContextTooLongError, match="whole context cut"):
        build_prompts(tokenizer, QUESTION, CONTEXT, max_length=twin_len - 5, truncate_context=True)
