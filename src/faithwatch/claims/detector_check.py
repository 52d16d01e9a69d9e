"""The sentence detector as a claim checker (``--checker detector``): the verdict `faithwatch monitor` gives.

Each claim is scored against each passage by a text-only :class:`~faithwatch.monitor.Monitor` (no language model:
the shipped detector reads alignment, lexical, edits and tagger features only). A claim that scores at or above
the detector's threshold is **Entailment**. Below it, a claim is **Contradiction** when it is a near copy of a
passage sentence with a number, a name or a negation changed, or a word swapped for its opposite (the ``edits``
features), and **Neutral** otherwise: the detector measures support, so "not supported" is all it can say of the
rest. Passages are combined by the checker's ``combine`` rule. Confidence is the detector's probability of the
label (``score`` for Entailment, ``1 - score`` otherwise), and so is the evidence's score;
``scores["detector_score"]`` holds the detector score (the best over the passages). Evidence: the passage
sentence holding most of the claim's words; for a Contradiction, also what the claim changed in the passage
sentence it copies (``Evidence.changes``: "'400' for '300'", "'not' added").

A claim that no passage decides alone (Neutral under every passage) is scored once more against the passages
joined, as `monitor` reads them: a sentence that takes one fact from each of two passages ("Acme, founded in 1990,
has 12,000 staff") is Entailment when the joined passages support it. Its evidence is a sentence of each passage
that adds a word of the claim (a passage holding only words the others give, such as the company's name, gives
none). ``scores["detector_score"]`` is then the joined score when it is higher.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from faithwatch.alignment.edits import EditScorer
from faithwatch.claims.spans import content_keys, locate, sentence_around, tokens
from faithwatch.claims.types import CONTRADICTION, ENTAILMENT, NEUTRAL, Claim, ClaimVerdict, Evidence
from faithwatch.errors import FaithwatchError, InputError

#: features of a near copy with a local change (faithwatch.alignment.edits): below the threshold, Contradiction
EDIT_FLAGS = ("edit_swap_num", "edit_swap_word", "edit_neg_flip")


class DetectorChecker:
    """A sentence detector's verdict per claim and passage (see the module doc)."""

    def __init__(self, monitor: Any, combine: str) -> None:
        if not getattr(monitor, "model_free", False):
            raise InputError(f"--checker detector needs a detector that reads text only; "
                             f"{monitor.detector.name} reads the language model")
        self.monitor, self.combine = monitor, combine
        self.name = f"detector:{monitor.detector.name}"
        self._edits = EditScorer()  # what a Contradiction changed (the features themselves come from the monitor)

    def config(self) -> dict[str, Any]:
        """What the verdicts depend on besides the name: the detector (its content hash), the flag threshold, the
        alignment scorer and signals, and the rule combining passages."""
        return {**self.monitor.scoring_config(), "combine": self.combine}

    def check(
        self, claims: Sequence[Claim], references: str | Sequence[str], question: str | None = None
    ) -> list[ClaimVerdict]:
        """A verdict per claim from the served detector's score of the claim against each passage, merged across
        passages."""
        from faithwatch.claims.checking import PassageVerdict, merge_verdicts, validate_references

        refs = validate_references(references)
        claims = list(claims)
        per_claim: list[list[PassageVerdict]] = [[] for _ in claims]
        scores: list[list[float]] = [[] for _ in claims]
        for p, passage in enumerate(refs):
            results = self.monitor.score_many([(question, passage, c.text) for c in claims])
            for i, (claim, result) in enumerate(zip(claims, results, strict=True)):
                if isinstance(result, FaithwatchError):
                    raise InputError(f"the detector cannot score the claim {claim.text!r}: {result}")
                if not result.sentences:
                    raise InputError(f"the claim {claim.text!r} holds no sentence to score")
                weakest = min(result.sentences, key=lambda s: s.score)
                label, conf = self._label(weakest.score, weakest.features)
                span = sentence_around(locate(claim.text, passage)[0], passage)
                changes = tuple(self._edits.changes(weakest.text, passage)[1]) if label == CONTRADICTION else ()
                ev = (Evidence(p, span[0], span[1], passage[span[0]:span[1]], label, conf, changes) if span
                      else None)
                per_claim[i].append(PassageVerdict(label, conf, ev, relevance=weakest.score))
                scores[i].append(weakest.score)
        merged = [merge_verdicts(passages, self.combine) for passages in per_claim]
        if len(refs) > 1:  # what no passage decides alone, the passages together may support
            undecided = [i for i, (label, _, _) in enumerate(merged) if label == NEUTRAL]
            for i, score in zip(undecided, self._joined(claims, undecided, refs, question), strict=True):
                scores[i].append(score)
                if score >= self.monitor.threshold:
                    merged[i] = (ENTAILMENT, score, _spans(claims[i].text, refs, score))
        return [ClaimVerdict(claim, label, conf, evidence, {"detector_score": max(s)})
                for claim, (label, conf, evidence), s in zip(claims, merged, scores, strict=True)]

    def _joined(self, claims: Sequence[Claim], which: list[int], refs: Sequence[str],
                question: str | None) -> list[float]:
        """The weakest sentence score of each claim ``which`` names against the passages joined, as `monitor` reads
        them."""
        context = "\n\n".join(refs)
        results = self.monitor.score_many([(question, context, claims[i].text) for i in which]) if which else []
        out = []
        for i, result in zip(which, results, strict=True):
            if isinstance(result, FaithwatchError) or not result.sentences:
                raise InputError(f"the detector cannot score the claim {claims[i].text!r} against the passages "
                                 f"together: {result if isinstance(result, FaithwatchError) else 'no sentence'}")
            out.append(min(s.score for s in result.sentences))
        return out

    def _label(self, score: float, features: dict[str, float | None]) -> tuple[str, float]:
        if score >= self.monitor.threshold:
            return ENTAILMENT, float(score)
        edited = any((features.get(k) or 0.0) > 0 for k in EDIT_FLAGS)
        return (CONTRADICTION if edited else NEUTRAL), float(1.0 - score)


def _spans(claim: str, refs: Sequence[str], score: float) -> tuple[Evidence, ...]:
    """The evidence of a claim the joined passages support: the passages that together hold its words (the one
    holding most first, then each that adds a word the chosen ones lack), each by the sentence holding its words,
    found first by the words no other chosen passage holds ("12,000" rather than "Acme", which both hold). A
    passage that adds no word of the claim gives no evidence."""

    wanted = content_keys(claim)
    held = [{t.key for t in tokens(passage)} & wanted for passage in refs]
    chosen = _cover(held)
    words = [(t.key, claim[t.start:t.end]) for t in tokens(claim) if t.key in wanted]
    out = []
    for p in sorted(chosen):
        others = set().union(*(held[q] for q in chosen if q != p))
        focus = " ".join(text for key, text in words if key in held[p] and key not in others) or None
        span = sentence_around(locate(claim, refs[p], focus=focus)[0], refs[p])
        if span:
            out.append(Evidence(p, span[0], span[1], refs[p][span[0]:span[1]], ENTAILMENT, float(score)))
    return tuple(out)


def _cover(held: Sequence[set], least: int = 1) -> list[int]:
    """The indices of the sets that together hold their union (a greedy cover): the largest first, then each that
    adds most of what the chosen ones lack (ties: the earlier); the cover stops at a set adding nothing, or, after the
    first, fewer than ``least`` items."""
    chosen: list[int] = []
    covered: set = set()
    rest = list(range(len(held)))
    while rest:
        best = max(rest, key=lambda p: (len(held[p] - covered), -p))
        gain = len(held[best] - covered)
        if not gain or (chosen and gain < least):
            break
        chosen.append(best)
        covered |= held[best]
        rest.remove(best)
    return chosen


def build(spec: Any, backend: object) -> DetectorChecker:
    """The checker of :class:`~faithwatch.claims.checking.CheckerSpec` ``spec`` (``spec.detector``: a detector
    name or folder, default the shipped one)."""
    from faithwatch.monitor import NO_MODEL, Monitor

    return DetectorChecker(Monitor(NO_MODEL, detector=spec.detector, device=spec.device), spec.combine)
