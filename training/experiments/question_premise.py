"""Issue 12: what the user asked, as part of the NLI premise (scratch).

``nli-minilm`` reads a sentence against chunks of the context alone. An answer or a dialogue turn often leans on
what it answers ("Yes, and it was his first film." after "Did he direct Jaws?"; "5 cups" after "how much flour"),
so the context alone entails it weakly. Lexical scorer version 6 already counts the question's words as support;
the NLI model has never seen the question. Here every premise is the question (its first 64 tokens, or half the
room a long sentence leaves: the first attempt crashed on such a sentence before any score, and this is the fix)
followed by a context chunk packed to the budget left, and the NLI third of ``align_score`` becomes the max of the
shipped score (context alone; the GPU run's saved export ``build/gpu-ab/scores_g14.json``, ``base``) and the best of
these new premises. The same rule for every set: for summaries the "question" is the instruction ("Write a short summary
of the context."), which should change little.

Rule, committed before the first run: the question joins the NLI premise (a new scorer version) only if, with the
shipped recipe and the NLI third replaced, LOO over the six sets: the mean AUROC rises by at least 0.003, no set
falls by more than 0.01, the worst gain over ``align_score`` (each with its own NLI third) is not lower, and the
mean over the five never-seen sets (trained on all six) is not lower; then the blatant suite must still meet its
targets.

    python training/experiments/question_premise.py [--out /tmp/question-premise]   # from the repo root,
                                                                                      # PYTHONPATH=training/experiments
"""

from __future__ import annotations

from topk_premise import run

QUESTION_TOKENS = 64


def premises(nli, text: str, question: str, context: str) -> list[str]:
    """The question-led premises of ``text``: the question, then each context chunk that fits beside it."""
    question = " ".join(question.split())
    if not question:
        return []
    limit = min(QUESTION_TOKENS, nli.budget_for(text) // 2)  # a long sentence leaves the context half the room
    if nli.n_tokens(question) > limit:
        question = nli._token_windows(question, limit)[0]
    budget = nli.budget_for(text) - nli.n_tokens(question) - 1
    return [f"{question}\n{chunk}" for chunk in nli._chunks(context, budget)]


def main() -> None:
    run(lambda nli, text, e: premises(nli, text, e.question, e.context), "question", __doc__)


if __name__ == "__main__":
    main()
