"""The task prompts, one home: the instruction (and, for summaries, the question) per task (docs/datasets.md).

faithwatch's prompts need a question; a summary's is :data:`SUMMARY_QUESTION`.
"""

from __future__ import annotations

#: the task instruction used when none is given (question answering)
DEFAULT_INSTRUCTION = "Answer the question using only the information in the context."
QA_INSTRUCTION = DEFAULT_INSTRUCTION
SUMMARY_INSTRUCTION = "Summarize the context. Use only information stated in the context."
SUMMARY_QUESTION = "Write a short summary of the context."
DIALOGUE_INSTRUCTION = "Reply to the message using only the knowledge in the context."


def summary_defaults(question: str | None, instruction: str | None) -> tuple[str | None, str | None]:
    """A record without a question (``None``) is a summary of its context: the summarization sets' question, and
    their instruction unless it has its own. Any other question is kept as it is (a blank question or instruction
    is the caller's error to report)."""
    if question is None:
        return SUMMARY_QUESTION, SUMMARY_INSTRUCTION if instruction is None else instruction
    return question, instruction
