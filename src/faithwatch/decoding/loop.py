"""The one decoding loop every strategy uses: beams grow by sentences (or chunks) sampled as one batch.

All candidates of a round are branches of one engine session: they share the prefix's KV cache (and the
no-context twin), advance in lockstep, and a branch that has finished its sentence leaves masked holes while the
others go on. A sentence ends when its text ends in terminal punctuation, pysbd agrees, and the next token the
branch would take starts a new word (or is EOS); that next token is not fed, so the next sentence is sampled
afresh from the same distribution.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from faithwatch.detok import IncrementalText
from faithwatch.errors import InputError
from faithwatch.results import SentenceReport
from faithwatch.sentences import Sentence
from faithwatch.text import segmenter

if TYPE_CHECKING:
    from faithwatch.models.engine import Checkpoint

#: picks one token per branch from main log-probs [B, V] and twin log-probs [B, V] (or None)
Chooser = Callable[[torch.Tensor, torch.Tensor | None], list[int]]

_TERMINAL = re.compile(r"[.!?…。！？][\"'”’)\]]*$")
_WORD = re.compile(r"\w")


def greedy_chooser() -> Chooser:
    """The most likely token of every branch."""
    return lambda logp, _twin: logp.argmax(-1).tolist()


def sampling_chooser(temperature: float, generator: torch.Generator) -> Chooser:
    """Temperature sampling (greedy at temperature 0), reproducible through ``generator``."""
    if temperature <= 0:
        return greedy_chooser()

    def choose(logp: torch.Tensor, _twin: torch.Tensor | None) -> list[int]:
        # inverse-CDF sampling where the distribution lives (one uniform per row from ``generator``): exact, and
        # on a CPU ~10x faster than torch.multinomial over a full vocabulary; no copy of [B, V] to the host
        cdf = torch.softmax(logp.float() / temperature, dim=-1).cumsum(-1)
        u = torch.rand(len(cdf), 1, generator=generator, dtype=cdf.dtype).to(cdf.device)
        picked = torch.searchsorted(cdf, u * cdf[:, -1:], right=True).clamp_(max=cdf.shape[-1] - 1)
        return picked[:, 0].tolist()

    return choose


def cad_logprobs(logp: torch.Tensor, twin: torch.Tensor, alpha: float | torch.Tensor) -> torch.Tensor:
    """Context-aware decoding (Shi et al. 2023): (1+α)·logit(y|c,x) − α·logit(y|x), renormalised.

    Log-probabilities differ from logits by a per-distribution constant, which the softmax removes. ``alpha`` may
    be a tensor broadcasting against the distributions (one α per row).
    """
    return torch.log_softmax((1 + alpha) * logp - alpha * twin, dim=-1)


def adacad_logprobs(logp: torch.Tensor, twin: torch.Tensor) -> torch.Tensor:
    """AdaCAD (Wang et al., NAACL 2025): CAD with α per token = JSD(p(·|c,x) ‖ p(·|x)) in bits, in [0, 1].

    Where context and memory agree (JSD ≈ 0) the distribution is left alone; where they conflict, the context
    is amplified up to α = 1.
    """
    logp, twin = logp.float(), twin.float()
    p, q = logp.exp(), twin.exp()
    m = (0.5 * (p + q)).clamp_min(1e-30).log()
    jsd = 0.5 * ((p * (logp - m)).sum(-1) + (q * (twin - m)).sum(-1)) / math.log(2.0)
    return cad_logprobs(logp, twin, jsd.clamp(0.0, 1.0)[..., None])


def forced_chooser(ids: Sequence[int], then: Chooser) -> Chooser:
    """``ids`` one per step (one branch only), then ``then``'s choice: a given sentence through the engine path."""
    left = iter(ids)

    def choose(logp: torch.Tensor, twin: torch.Tensor | None) -> list[int]:
        token = next(left, None)
        return [int(token)] if token is not None else then(logp, twin)

    return choose


def _contrast_chooser(name: str, contrast: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
                      inner: Chooser) -> Chooser:
    def choose(logp: torch.Tensor, twin: torch.Tensor | None) -> list[int]:
        if twin is None:
            raise InputError(f"{name} needs the no-context twin pass: enable the 'contrastive' signal")
        return inner(contrast(logp, twin), twin)

    return choose


def _without_eos(inner: Chooser, rows: list[int], eos: list[int]) -> Chooser:
    """``inner`` choosing from distributions whose ``rows`` give EOS no mass (a very low finite log-prob, so that
    contrasts and divergences stay finite)."""
    mask: list[torch.Tensor] = []  # [B, V], built once for the round's shape

    def choose(logp: torch.Tensor, twin: torch.Tensor | None) -> list[int]:
        if not mask or mask[0].shape != logp.shape or mask[0].device != logp.device:
            banned = torch.zeros_like(logp, dtype=torch.bool)
            banned[torch.tensor(rows, device=logp.device)[:, None], torch.tensor(eos, device=logp.device)] = True
            mask[:] = [banned]
        return inner(logp.masked_fill(mask[0], torch.finfo(logp.dtype).min / 4), twin)

    return choose


def adacad_chooser(inner: Chooser) -> Chooser:
    """Apply AdaCAD to the distributions, then choose with ``inner``."""
    return _contrast_chooser("AdaCAD", adacad_logprobs, inner)


def cad_chooser(alpha: float, inner: Chooser) -> Chooser:
    """Apply CAD to the distributions, then choose with ``inner``."""
    return _contrast_chooser("CAD", lambda logp, twin: cad_logprobs(logp, twin, alpha), inner)


@dataclass
class Beam:
    """One branch of the search: the answer's tokens so far and its scored sentences."""

    ids: list[int] = field(default_factory=list)
    sentences: list[SentenceReport] = field(default_factory=list)
    finished: bool = False
    stop_reason: str = ""

    @property
    def mean_score(self) -> float:
        """Mean score of the beam's sentences (0 without any)."""
        return sum(s.score for s in self.sentences) / len(self.sentences) if self.sentences else 0.0


@dataclass
class Candidate:
    """A unit sampled from a beam: new tokens and, for sentences, the scored sentence."""

    parent: int
    branch: int
    ids: list[int]
    report: SentenceReport | None
    eos: bool = False
    truncated: bool = False  # the sentence or answer hit its token budget
    carried: bool = False  # the parent had already finished; nothing was sampled


class DecodingLoop:
    """Beams over one engine session, grown a sentence (or chunk) at a time."""

    def __init__(self, monitor, question: str, context: str, *, max_new_tokens: int = 128,
                 max_sentence_tokens: int = 96, instruction: str | None = None) -> None:
        self.monitor = monitor
        self.question, self.context = question, context
        self.max_new_tokens, self.max_sentence_tokens = max_new_tokens, max_sentence_tokens
        self.prompts, self.session = monitor._start(question, context, reserve=max_new_tokens, instruction=instruction)
        self.context = self.prompts.context  # cut with truncate_context: what the model saw
        self.tokenizer = monitor.lm.tokenizer
        self.eos = monitor.lm.eos_token_ids
        self.beams = [Beam()]
        self.generated = 0
        self._rule = SentenceRule(self.tokenizer, self.eos)

    def text(self, ids: Sequence[int]) -> str:
        """Token ids decoded to text, special tokens left out."""
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    def sample(
        self, per_beam: int, choose: Chooser, *, unit: str = "sentence", chunk_tokens: int = 8,
        ban_eos: Sequence[bool] | None = None,
    ) -> list[Candidate]:
        """From every unfinished beam, sample ``per_beam`` candidates as one batch; finished beams are carried.

        ``ban_eos`` (one flag per beam): the branches of a flagged beam cannot choose EOS (the answer may not end).
        """
        counts = [1 if beam.finished else per_beam for beam in self.beams]
        parents = [p for p, n in enumerate(counts) for _ in range(n)]
        banned = [b for b, p in enumerate(parents) if ban_eos is not None and ban_eos[p]]
        if banned:
            choose = _without_eos(choose, banned, sorted(self.eos))
        self.session.select(parents)
        n = len(parents)
        new: list[list[int]] = [[] for _ in range(n)]
        active = [not self.beams[p].finished for p in parents]
        eos, truncated = [False] * n, [False] * n
        texts = [IncrementalText(self.tokenizer, self.beams[p].ids) for p in parents]  # each branch's answer
        bases = [t.text for t in texts]
        needs_twin = self.session.needs.twin
        while any(active):
            logp = self.session.branch_logprobs()
            twin = self.session.branch_twin_logprobs() if needs_twin else None
            tokens = choose(logp, twin)
            feed = list(active)
            for b in range(n):
                if not active[b]:
                    continue
                total = len(self.beams[parents[b]].ids) + len(new[b])
                if tokens[b] in self.eos:
                    eos[b], active[b], feed[b] = True, False, False
                elif unit == "sentence" and self._rule.ends(texts[b].text[len(bases[b]):], tokens[b]):
                    active[b], feed[b] = False, False
                elif total >= self.max_new_tokens:
                    truncated[b], active[b], feed[b] = True, False, False
            if any(feed):
                self.session.feed_branches([t if f else 0 for t, f in zip(tokens, feed, strict=True)], feed)
                self.generated += sum(feed)
            for b in range(n):
                if feed[b]:
                    new[b].append(int(tokens[b]))
                    texts[b].add(tokens[b])
                    limit = chunk_tokens if unit == "chunk" else self.max_sentence_tokens
                    if len(new[b]) >= limit:
                        active[b] = False
                        truncated[b] = unit == "sentence"
        return [self._candidate(parents[b], b, new[b], eos[b], truncated[b], self.beams[parents[b]].finished,
                                unit) for b in range(n)]

    def _candidate(self, parent: int, branch: int, ids: list[int], eos: bool, truncated: bool, carried: bool,
                   unit: str) -> Candidate:
        beam = self.beams[parent]
        if carried or unit != "sentence":
            return Candidate(parent, branch, ids, None, eos, truncated, carried)
        sentence = sentence_of(self.tokenizer, beam.ids, ids, len(beam.sentences))
        if sentence is None:
            return Candidate(parent, branch, ids, None, eos, truncated)
        report = self.monitor._reports([sentence], self.session.branch_records[branch], self.question,
                                       self.context)[0]
        return Candidate(parent, branch, ids, report, eos, truncated)

    def rewind(self, checkpoint: Checkpoint) -> None:
        """Back to one beam at ``checkpoint`` (a state of the session taken while it had one branch): later
        tokens are dropped, and the beams become that one beam, empty (``checkpoint`` must be the answer's start)."""
        self.session.select([0])
        self.session.restore(checkpoint)
        self.beams = [Beam()]

    def keep(self, candidates: Sequence[Candidate]) -> None:
        """Make the given candidates the beams (their branches are kept, in order)."""
        if not candidates:
            raise ValueError("keep() needs at least one candidate")
        self.session.select([c.branch for c in candidates])
        beams = []
        for c in candidates:
            parent = self.beams[c.parent]
            sentences = parent.sentences + ([c.report] if c.report is not None else [])
            ids = parent.ids + c.ids
            finished = parent.finished or c.eos or len(ids) >= self.max_new_tokens
            reason = parent.stop_reason or ("eos" if c.eos else ("max_new_tokens" if finished else ""))
            beams.append(Beam(ids, sentences, finished, reason))
        self.beams = beams


class SentenceRule:
    """When a decoded sentence ends: its text ends in terminal punctuation, pysbd agrees, and the next token starts a
    new word (or is EOS)."""

    def __init__(self, tokenizer, eos: Sequence[int] | set[int]) -> None:
        self.tokenizer, self.eos = tokenizer, eos
        self._segmenter = segmenter("en", char_span=False)

    def ends(self, tail: str, next_token: int) -> bool:
        """Whether the sentence ``tail`` (text since the sentence began) ends before ``next_token``."""
        if not _WORD.search(tail) or not _TERMINAL.search(tail.rstrip()) or tail != tail.rstrip():
            return False
        if next_token in self.eos:
            return True
        nxt = self.tokenizer.decode([next_token])
        if not nxt[:1].isspace():
            return False
        segments = self._segmenter.segment(tail + nxt + "Next")
        return len(segments) > 1 and segments[0].strip() == tail.strip()


def sentence_of(tokenizer, before: Sequence[int], ids: Sequence[int], index: int) -> Sentence | None:
    """The sentence formed by ``ids`` after the answer tokens ``before`` (``None`` if it has no word)."""
    if not ids:
        return None
    base = tokenizer.decode(list(before), skip_special_tokens=True)
    tail = tokenizer.decode(list(before) + list(ids), skip_special_tokens=True)[len(base):]
    if not _WORD.search(tail):
        return None
    start = len(base) + len(tail) - len(tail.lstrip())
    return Sentence(index, tail.strip(), start, start + len(tail.strip()), len(before), len(before) + len(ids))


class BeamStepper:
    """One beam of :class:`DecodingLoop` grown a token at a time, for a row of a live batch.

    For a deterministic chooser it makes the same sentences, tokens and stop as ``sample(1, chooser)`` + ``keep``
    until the beam ends (tested): ``take`` the chosen token (the sentences it closes, and whether to feed it),
    then, once fed, ``fed`` (the sentences that closes). Scores come from whoever holds the records.
    """

    def __init__(self, tokenizer, eos, max_new_tokens: int, max_sentence_tokens: int) -> None:
        self.tokenizer = tokenizer
        self._detok = IncrementalText(tokenizer)  # the beam's tokens and their text
        self.stop = ""  # "eos" or "max_new_tokens" once the beam ended
        self.max_new_tokens, self.max_sentence_tokens = max_new_tokens, max_sentence_tokens
        self._rule = SentenceRule(tokenizer, eos)
        self._start = 0  # where the open sentence's tokens begin
        self._base = ""  # the text of the tokens before it
        self._count = 0  # sentences made so far

    @property
    def ids(self) -> list[int]:
        """The beam's tokens so far."""
        return self._detok.ids

    @property
    def done(self) -> bool:
        """Whether the beam has ended."""
        return bool(self.stop)

    def take(self, token: int) -> tuple[list[Sentence], bool]:
        """The sentences ``token`` closes and whether it is fed (not EOS, within the budget)."""
        closed: list[Sentence] = []
        if token in self._rule.eos:
            self.stop = "eos"
            return self._close(), False
        if self._start < len(self.ids) and self._rule.ends(self._tail(), token):
            closed = self._close()
        if len(self.ids) >= self.max_new_tokens:
            self.stop = "max_new_tokens"
            return closed + self._close(), False
        return closed, True

    def fed(self, token: int) -> list[Sentence]:
        """Append the fed ``token``; the sentences that closes (a sentence or the answer at its token limit)."""
        self._detok.add(token)
        if len(self.ids) >= self.max_new_tokens:
            self.stop = "max_new_tokens"
            return self._close()
        return self._close() if len(self.ids) - self._start >= self.max_sentence_tokens else []

    def _tail(self) -> str:
        return self._detok.text[len(self._base):]

    def _close(self) -> list[Sentence]:
        sentence = sentence_of(self.tokenizer, self.ids[: self._start], self.ids[self._start:], self._count)
        if self._start < len(self.ids):
            self._start, self._base = len(self.ids), self._detok.text
        self._count += sentence is not None
        return [sentence] if sentence is not None else []
