"""The RAG prompt [x; c] and its no-context twin [x] (paper 000 §3.2, "Context Influence").

Both prompts are rendered from one template; the twin is the RAG prompt with the context block
removed and nothing else changed, so the contrastive KL measures the context's influence alone.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from faithwatch.errors import ContextTooLongError, InputError
from faithwatch.tasks import DEFAULT_INSTRUCTION
from faithwatch.text.visible import is_blank, require_text

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

log = logging.getLogger(__name__)

CONTEXT_OPEN = "Context:\n"
CONTEXT_CLOSE = "\n\n"


def user_message(question: str, context: str | None, instruction: str = DEFAULT_INSTRUCTION) -> str:
    """The user turn: instruction, the context block (absent in the twin), the question."""
    block = f"{CONTEXT_OPEN}{context}{CONTEXT_CLOSE}" if context is not None else ""
    return f"{instruction}\n\n{block}Question: {question}"


def render(tokenizer: PreTrainedTokenizerBase, message: str) -> str:
    """Apply the model's chat template when it has one, else a plain 'Question/Answer' layout."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(
            [{"role": "user", "content": message}], tokenize=False, add_generation_prompt=True
        )
    return f"{message}\nAnswer:"


@dataclass
class PromptPair:
    """Token ids of the RAG prompt and of its no-context twin."""

    rag_ids: list[int]
    twin_ids: list[int]
    rag_text: str
    twin_text: str
    context_tokens_cut: int = 0
    #: the context as it stands in the prompt (cut with ``truncate_context``): what every signal must see
    context: str = ""

    @property
    def key(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """What the model is given: equal keys prefill the same cache rows (the engine shares them)."""
        return tuple(self.rag_ids), tuple(self.twin_ids)


def groups_in_order(keys: Iterable[Hashable]) -> tuple[list[int], list[int]]:
    """(each item's group, each group's first item): items with equal keys share a group, and groups are numbered
    in order of first appearance (records of one prompt together, keeping the order prompts came in)."""
    slots: dict[Hashable, int] = {}
    groups, firsts = [], []
    for i, key in enumerate(keys):
        if key not in slots:
            slots[key] = len(firsts)
            firsts.append(i)
        groups.append(slots[key])
    return groups, firsts


def check_text(name: str, value: Any) -> str:
    """``value`` when it is a non-empty string, else an :class:`InputError` that says what it is (a list of
    passages is told how to join them)."""
    if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
        raise InputError(f"The {name} is a list of {len(value)} strings; faithwatch reads one {name} string: join "
                         "the passages first, e.g. '\\n\\n'.join(passages).")
    if not isinstance(value, str):
        raise InputError(f"The {name} must be a string, got {type(value).__name__}.")
    if is_blank(value):
        raise InputError(f"The {name} is empty (no visible character): faithwatch needs a non-empty {name}.")
    require_text(value, f"The {name}")
    return value


def _encode(tokenizer: PreTrainedTokenizerBase, text: str) -> list[int]:
    # the chat template already holds the special tokens
    return list(tokenizer(text, add_special_tokens=not getattr(tokenizer, "chat_template", None))["input_ids"])


def build_prompts(
    tokenizer: PreTrainedTokenizerBase,
    question: str,
    context: str,
    *,
    instruction: str = DEFAULT_INSTRUCTION,
    max_length: int | None = None,
    reserve: int = 0,
    truncate_context: bool = False,
) -> PromptPair:
    """Build the RAG prompt and its twin.

    ``max_length`` is the model window and ``reserve`` the tokens kept free for the response. When the
    RAG prompt does not fit, a :class:`ContextTooLongError` is raised, unless ``truncate_context`` is
    set: then the context's tail is cut and a warning states how many tokens were cut. A blank question, context
    or instruction is an :class:`InputError`.
    """
    check_text("question", question)
    check_text("context", context)
    check_text("instruction", instruction)
    cut = 0
    rag_text = render(tokenizer, user_message(question, context, instruction))
    rag_ids = _encode(tokenizer, rag_text)
    if max_length is not None and len(rag_ids) + reserve > max_length:
        over = len(rag_ids) + reserve - max_length
        if not truncate_context:
            raise ContextTooLongError(
                f"The prompt is {len(rag_ids)} tokens and {reserve} are reserved for the answer, "
                f"{over} more than the model window of {max_length}. Shorten the context, allow truncation "
                "(--truncate-context), or, when generating, lower max_new_tokens."
            )
        ctx_ids = tokenizer(context, add_special_tokens=False)["input_ids"]
        if over >= len(ctx_ids):
            raise ContextTooLongError(
                f"Even with the whole context cut, the prompt needs {over - len(ctx_ids)} tokens more than "
                f"the model window of {max_length}; shorten the question, or, when generating, lower max_new_tokens."
            )
        keep = len(ctx_ids) - over
        while True:  # re-tokenising may shift by a token or two
            context = tokenizer.decode(ctx_ids[:keep], skip_special_tokens=True)
            rag_text = render(tokenizer, user_message(question, context, instruction))
            rag_ids = _encode(tokenizer, rag_text)
            if len(rag_ids) + reserve <= max_length or keep == 0:
                break
            keep -= 1
        cut = len(ctx_ids) - keep
        log.warning("Context truncated: %d of %d context tokens cut to fit the model window of %d.",
                    cut, len(ctx_ids), max_length)
    twin_text = render(tokenizer, user_message(question, None, instruction))
    return PromptPair(rag_ids, _encode(tokenizer, twin_text), rag_text, twin_text, cut, context)
