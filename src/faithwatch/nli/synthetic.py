"""FactCC-style synthetic pairs built from premise texts (deterministic given a seed).

A synthetic premise is a *window* of several unrelated texts (so support must be found among
distractors, as in AlignScore-style context windows). Hypotheses:

* entailment - a sentence of the window, sometimes shortened at its last comma;
* contradiction - a window sentence with a number changed, two entities swapped, or negation toggled; optionally
  (``window_swaps``) also a number or name replaced by another one *of the same window* ("He had six wives. Two of
  them ..." -> "He had two wives."), which the shipped adapter mostly entails;
* neutral - a sentence from outside the window, or a window sentence extended by a clause from outside.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from faithwatch.nli.data import LABEL_IDS, NLIPair

_DETOK = [(" -LRB- ", " ("), ("-LRB- ", "("), (" -RRB-", ")"), ("`` ", '"'), (" ''", '"'), (" n't", "n't"),
          (" 's", "'s"), (" ,", ","), (" .", "."), (" ;", ";"), (" :", ":"), (" ?", "?"), (" !", "!")]
#: the contradiction moves that swap in a value of the premise window itself (``document_pairs(window_swaps=True)``)
WINDOW_MOVES = ("number-window", "entity-window")
#: a number, and a capitalised name after a lower-case word (what the swaps replace)
NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\b")
ENTITY = re.compile(r"(?<=[a-z,] )(?:[A-Z][a-z]+)(?: [A-Z][a-z]+)*")
_NEGATABLE = re.compile(r"\b(is|are|was|were|has|have|had|does|did|can|will|would|could|should)\b( not\b)?")
_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


def detokenize(text: str) -> str:
    """Undo PTB-style tokenisation (``word .``, ``-LRB-``) found in SNLI/FEVER-derived text."""
    for old, new in _DETOK:
        text = text.replace(old, new)
    return text.strip()


def sentences_of(text: str) -> list[str]:
    """Rough sentence split (regex; good enough for short premise texts)."""
    return [s.strip() for s in _SENT_END.split(text) if len(s.split()) >= 5]


def _swap_number(sent: str, rng: random.Random) -> str | None:
    nums = list(NUMBER.finditer(sent))
    if not nums:
        return None
    m = rng.choice(nums)
    digits = m.group(0).replace(",", "")
    try:
        value = float(digits)
    except ValueError:
        return None
    if "." in digits:
        new = f"{value * rng.choice([0.5, 2, 1.5, 3]):.{len(digits.split('.')[1])}f}"
    elif len(digits) == 4 and 1000 < value < 2100:  # a year
        new = str(int(value) + rng.choice([-12, -5, -3, -1, 1, 2, 4, 9]))
    else:
        new = str(max(0, int(value) + rng.choice([-3, -2, -1, 1, 2, 5, 10])) if value < 20 else
                  int(value * rng.choice([0.5, 2, 3, 0.25])))
    if new == m.group(0):
        return None
    return sent[: m.start()] + new + sent[m.end():]


def swap_within(sent: str, others: str | Sequence[str], pattern: re.Pattern[str], rng: random.Random) -> str | None:
    """``sent`` with one match of ``pattern`` (:data:`NUMBER`, :data:`ENTITY`) replaced by a different match found in
    ``others`` (the rest of the premise window, or the other sentences of the document); None when either has
    none."""
    mine = list(pattern.finditer(sent))
    texts = [others] if isinstance(others, str) else others
    pool = sorted({m.group(0) for text in texts for m in pattern.finditer(text)} - {m.group(0) for m in mine})
    if not mine or not pool:
        return None
    m = rng.choice(mine)
    return sent[: m.start()] + rng.choice(pool) + sent[m.end():]


def is_window_swap(premise: str, hypothesis: str) -> bool:
    """Whether ``hypothesis`` is a sentence of ``premise`` with one number or name replaced by another one found in
    the premise's other sentences (what :func:`swap_within` makes)."""
    sents = sentences_of(premise)
    return any(s[: m.start()] + v + s[m.end():] == hypothesis
               for s in sents for pattern in (NUMBER, ENTITY) for m in pattern.finditer(s)
               for v in {x.group(0) for x in pattern.finditer(" ".join(o for o in sents if o != s))})


def _toggle_negation(sent: str, rng: random.Random) -> str | None:
    hits = list(_NEGATABLE.finditer(sent))
    if not hits:
        return None
    m = rng.choice(hits)
    new = m.group(1) if m.group(2) else f"{m.group(1)} not"
    return sent[: m.start()] + new + sent[m.end():]


def _shorten(sent: str) -> str:
    head = sent.rsplit(",", 1)[0]
    return head + "." if head != sent and len(head.split()) >= 6 else sent


def make_hypothesis(kind: str, sent: str, rng: random.Random, moves: Sequence[str], entity_texts: Sequence[str],
                    outside: Sequence[str], window: str = "") -> str | None:
    """A hypothesis of class ``kind`` made from ``sent`` (None when this draw cannot make one); ``window``: the rest
    of the premise, for the moves ``number-window`` and ``entity-window``."""
    if kind == "entailment":
        return _shorten(sent) if rng.random() < 0.3 else sent
    if kind == "contradiction":
        move = rng.choice(list(moves))
        if move in WINDOW_MOVES:
            return swap_within(sent, window, NUMBER if move == "number-window" else ENTITY, rng)
        return (_swap_number(sent, rng) if move == "number" else
                swap_within(sent, entity_texts, ENTITY, rng) if move == "entity" else _toggle_negation(sent, rng))
    if not outside:
        return None
    extra = rng.choice(list(outside))
    if rng.random() < 0.5:
        return extra
    clause = extra.rstrip(".!?").split(",")[0]
    return f"{sent.rstrip('.!?')}, and {clause[0].lower()}{clause[1:]}."


def _balanced(n: int, draw: Callable[[str], NLIPair | None], what: str) -> list[NLIPair]:
    """``n`` pairs, entailment / contradiction / neutral in turn, each from ``draw(kind)`` (retried on None)."""
    pairs: list[NLIPair] = []
    kinds = ["entailment", "contradiction", "neutral"]
    attempts = 0
    while len(pairs) < n:
        attempts += 1
        if attempts > 50 * n:
            raise ValueError(f"could not build enough {what}")
        pair = draw(kinds[len(pairs) % 3])
        if pair is not None:
            pairs.append(pair)
    return pairs


def synthetic_pairs(texts: Sequence[str], n: int, seed: int = 0, window: tuple[int, int] = (2, 6)) -> list[NLIPair]:
    """Make ``n`` synthetic pairs (a third per class) from ``texts`` (premises of licensed sources)."""
    rng = random.Random(seed)
    docs = [d for d in (detokenize(t) for t in dict.fromkeys(texts)) if sentences_of(d)]
    if len(docs) < window[1] + 2:
        raise ValueError(f"need at least {window[1] + 2} texts with a full sentence, got {len(docs)}")

    def draw(kind: str) -> NLIPair | None:
        chosen = rng.sample(range(len(docs)), rng.randint(*window) + 1)
        window_docs = [docs[i] for i in chosen[:-1]]
        target_doc = rng.choice(window_docs)
        sent = rng.choice(sentences_of(target_doc))
        hyp = make_hypothesis(kind, sent, rng, ["number", "entity", "negation"],
                          [d for d in window_docs if d is not target_doc], sentences_of(docs[chosen[-1]]))
        if not hyp or hyp == sent and kind != "entailment":
            return None
        return NLIPair(" ".join(window_docs), hyp, LABEL_IDS[kind], f"synthetic_{kind}")

    return _balanced(n, draw, "synthetic pairs from these texts")


def _window(sents: list[str], rng: random.Random, max_words: int) -> tuple[int, int]:
    """A random run of consecutive sentences ``[i, j)`` of at most ``max_words`` words (at least one sentence)."""
    i = rng.randrange(len(sents))
    j, used = i + 1, len(sents[i].split())
    while j < len(sents) and used + len(sents[j].split()) <= max_words:
        used += len(sents[j].split())
        j += 1
    return i, j


def document_pairs(texts: Sequence[str], n: int, seed: int = 0, max_words: int = 48,
                   min_sentences: int = 3, window_swaps: bool = False) -> list[NLIPair]:
    """Make ``n`` on-topic synthetic pairs (a third per class) from multi-sentence documents.

    The premise is a short window of one document (about the 64 tokens the ``nli-minilm`` scorer
    reads at a time). Contradictions swap a number, an entity of the *same* document or a negation;
    neutrals are sentences of the same document outside the window, or a window sentence extended by
    one of their clauses: related and plausible, but not stated in the window. With ``window_swaps``,
    contradictions also replace a number or name by another one of the window itself (the pairs
    without it are unchanged).
    """
    rng = random.Random(seed)
    docs = [s for s in (sentences_of(detokenize(t)) for t in dict.fromkeys(texts)) if len(s) >= min_sentences]
    if not docs:
        raise ValueError(f"no document with at least {min_sentences} sentences to build on-topic pairs from")

    def draw(kind: str) -> NLIPair | None:
        sents = rng.choice(docs)
        i, j = _window(sents, rng, max_words)
        inside = sents[i:j]
        sent = rng.choice(inside)
        moves = ["number", "entity", "entity", "negation", *(WINDOW_MOVES if window_swaps else ())]
        hyp = make_hypothesis(kind, sent, rng, moves, [s for s in sents if s != sent], sents[:i] + sents[j:],
                              " ".join(x for x in inside if x != sent))
        if not hyp or hyp == sent and kind != "entailment" or kind == "neutral" and hyp in " ".join(inside):
            return None
        return NLIPair(" ".join(inside), hyp, LABEL_IDS[kind], f"synthetic_doc_{kind}")

    return _balanced(n, draw, "on-topic synthetic pairs from these documents")
