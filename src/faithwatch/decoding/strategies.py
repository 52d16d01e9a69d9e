"""Decoding strategies: greedy, abstention, reranking (by score, or by question coverage then score), CAD, AdaCAD,
Lookback-Lens-guided chunks, FOD, FOD-BT, FOD-CAD and FOD-AdaCAD (FOD's sentence search over the CAD or AdaCAD
distribution), and FOD-fallback (plain FOD that searches over AdaCAD before it refuses).

Every strategy runs on :class:`~faithwatch.decoding.loop.DecodingLoop` and returns a
:class:`~faithwatch.decoding.types.DecodingResult` with a trace of every candidate considered.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from pydantic import ValidationError

from faithwatch import registry
from faithwatch.decoding.coverage import Coverage
from faithwatch.decoding.loop import (
    Beam,
    Candidate,
    Chooser,
    DecodingLoop,
    adacad_chooser,
    cad_chooser,
    forced_chooser,
    greedy_chooser,
    sampling_chooser,
)
from faithwatch.decoding.types import REFUSAL, REPEATED, DecodingResult, TraceEvent
from faithwatch.errors import InputError
from faithwatch.params import DEFAULT_STRATEGY, DecodingParams
from faithwatch.text import repeats

if TYPE_CHECKING:
    from faithwatch.models.engine import Checkpoint


@dataclass
class StrategyRun:
    """What a strategy works with: the decoding loop, the monitor, the parameters, the trace it appends to."""

    loop: DecodingLoop
    monitor: Any
    params: DecodingParams
    trace: list[TraceEvent]
    generator: torch.Generator
    lens: Any = None


#: a strategy: ``run -> (the chosen beam, refused)``
Strategy = Callable[[StrategyRun], tuple[Beam, bool]]


def generate(
    monitor,
    question: str,
    context: str,
    strategy: str = DEFAULT_STRATEGY,
    *,
    params: DecodingParams | None = None,
    lens=None,
    instruction: str | None = None,
    **overrides: Any,
) -> DecodingResult:
    """Answer ``question`` from ``context`` with a decoding strategy (see :data:`faithwatch.registry.strategies`).

    Parameters come from ``params`` (default :class:`~faithwatch.params.DecodingParams`) with keyword
    ``overrides`` (``tau1=0.6``, ...); a bad value is an :class:`InputError`. ``adacad`` sets α per token from the
    divergence of the two distributions; ``fod-cad`` runs FOD on CAD's distribution (stage 1 greedy and stage 2
    sampling alike). Sentence scores come from the monitor's detector; ``lens`` (a LookbackLens or its folder)
    guides ``lookback``.
    """
    entry, chosen = _entry_and_params(strategy, params, overrides)
    loop = DecodingLoop(monitor, question, context, max_new_tokens=chosen.max_new_tokens,
                        max_sentence_tokens=chosen.max_sentence_tokens, instruction=instruction)
    run = StrategyRun(loop, monitor, chosen, [], torch.Generator().manual_seed(chosen.seed), lens)
    beam, refused = entry.obj(run)
    return _result(run, strategy, beam, refused)


def _entry_and_params(strategy: str, params: DecodingParams | None, overrides: dict[str, Any]):
    """The registry entry of ``strategy`` and its parameters (``params`` with ``overrides``, then its defaults)."""
    entry = registry.strategies.get(strategy)
    try:
        chosen = DecodingParams(**{**(params.model_dump(exclude_unset=True) if params else {}), **overrides})
    except ValidationError as exc:
        raise InputError(f"bad decoding parameters: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}") from None
    return entry, chosen.for_strategy(entry.options.get("defaults", {}))


#: the one-beam strategies (no search, a deterministic chooser): their chooser from the parameters
_ONE_BEAM: dict[str, Callable[[DecodingParams], Chooser]] = {
    "greedy": lambda p: greedy_chooser(),
    "abstain": lambda p: greedy_chooser(),
    "cad": lambda p: cad_chooser(p.alpha, greedy_chooser()),
    "adacad": lambda p: adacad_chooser(greedy_chooser()),
}


@dataclass(frozen=True)
class OneBeamPlan:
    """A one-beam strategy (greedy, abstain, cad, adacad) ready to run token by token as a row of a live batch
    (:meth:`~faithwatch.live_batch.LiveBatch.submit_strategy`): its parameters and chooser."""

    strategy: str
    params: DecodingParams
    chooser: Chooser

    def result(self, monitor: Any, ids: list[int], sentences: list, stop: str) -> DecodingResult:
        """The :class:`DecodingResult` of the finished beam (as :func:`generate` returns it)."""
        trace = [TraceEvent("accept", r.index, r.text, r.score, 0) for r in sentences]
        refused = _refusal(self.strategy, sentences, self.params, trace)
        text = monitor.lm.tokenizer.decode(ids, skip_special_tokens=True)
        return _decoding_result(monitor, self.strategy, self.params, trace, Beam(ids, sentences, True, stop), refused,
                                text, sentences, len(ids))


def one_beam_plan(strategy: str, params: DecodingParams | None = None, **overrides: Any) -> OneBeamPlan | None:
    """The plan of a one-beam strategy, or ``None`` for a strategy that searches (FOD, rerank, lookback, ...).
    Bad parameters are an :class:`InputError`, as in :func:`generate`."""
    _entry, chosen = _entry_and_params(strategy, params, overrides)
    make = _ONE_BEAM.get(strategy)
    return None if make is None else OneBeamPlan(strategy, chosen, make(chosen))


def _refusal(strategy: str, sentences: list, params: DecodingParams, trace: list[TraceEvent]) -> bool:
    """Abstain's rule: refuse when a sentence scores below ``abstain_threshold`` (a ``refuse`` event)."""
    low = [s for s in sentences if s.below(params.abstain_threshold)] if strategy == "abstain" else []
    if low:
        trace.append(TraceEvent("refuse", low[0].index, low[0].text, low[0].score,
                                reason=f"score below {params.abstain_threshold}"))
    return bool(low)


def _plain(run: StrategyRun, strategy: str) -> tuple[Beam, bool]:
    beam = _run_to_end(run.loop, _ONE_BEAM[strategy](run.params), run.trace)
    return beam, _refusal(strategy, beam.sentences, run.params, run.trace)


def greedy(run: StrategyRun) -> tuple[Beam, bool]:
    """Plain greedy decoding (the baseline)."""
    return _plain(run, "greedy")


def abstain(run: StrategyRun) -> tuple[Beam, bool]:
    """Greedy, refusing when a sentence scores below ``abstain_threshold``."""
    return _plain(run, "abstain")


def cad(run: StrategyRun) -> tuple[Beam, bool]:
    """Context-aware decoding with a fixed α (Shi et al.)."""
    return _plain(run, "cad")


def adacad(run: StrategyRun) -> tuple[Beam, bool]:
    """CAD with α per token from the Jensen-Shannon divergence of the two distributions (AdaCAD)."""
    return _plain(run, "adacad")


def rerank(run: StrategyRun) -> tuple[Beam, bool]:
    """S full samples; the one with the best mean sentence score. With ``no_repeat``, each sample ends before its
    first sentence that says an earlier one again (:func:`_cut_at_repeat`)."""
    loop = run.loop
    pool = _full_samples(loop, sampling_chooser(run.params.temperature, run.generator), run.params.samples, run.trace,
                         no_repeat=run.params.no_repeat)
    best = max(range(len(pool)), key=lambda i: (pool[i].mean_score, -i))
    run.trace.append(TraceEvent("select", 0, loop.text(pool[best].ids), pool[best].mean_score, best,
                                reason="best mean sentence score"))
    return pool[best], False


def rerank_coverage(run: StrategyRun) -> tuple[Beam, bool]:
    """The greedy answer when it fills every question slot (:mod:`faithwatch.decoding.coverage`) and each of its
    sentences scores at least τ1; otherwise that answer and S full samples (rerank's, the same for one seed), the one
    with the fewest open slots, then the best mean sentence score. It never refuses. With ``no_repeat``, every answer
    of the pool, the greedy one too, ends before its first sentence that says an earlier one again."""
    loop, p = run.loop, run.params
    coverage = _coverage(run)
    start = loop.session.checkpoint()
    plain = _run_to_end(loop, greedy_chooser(), run.trace)
    if p.no_repeat:
        plain = _cut_at_repeat(plain, run.trace)
    run.trace.append(TraceEvent("candidate", 0, loop.text(plain.ids), plain.mean_score, 0, reason="greedy answer"))
    if plain.sentences and not any(s.below(p.tau1) for s in plain.sentences) and not coverage.open(_texts(plain)):
        run.trace.append(TraceEvent("select", 0, loop.text(plain.ids), plain.mean_score, 0,
                                    reason=f"greedy answer fills every question slot, every sentence >= "
                                    f"tau1={p.tau1:.3g}: no samples"))
        return plain, False
    loop.rewind(start)
    pool = [plain, *_full_samples(loop, sampling_chooser(p.temperature, run.generator), p.samples, run.trace, 1,
                                  no_repeat=p.no_repeat)]
    best = _most_complete(pool, coverage)
    run.trace.append(TraceEvent("select", 0, loop.text(best.ids), best.mean_score, pool.index(best),
                                reason="fewest open question slots, then best mean sentence score"))
    return best, False


def lookback(run: StrategyRun) -> tuple[Beam, bool]:
    """Chunks chosen by the Lookback Lens (paper 003 §3.1)."""
    p = run.params
    lens = _load_lens(run.lens, run.monitor)
    return _lookback(run.loop, run.monitor, lens, sampling_chooser(p.temperature, run.generator), samples=p.samples,
                     chunk_tokens=p.chunk_tokens, trace=run.trace), False


def _fod_run(run: StrategyRun, contrast: str | None = None, backtrack_only: bool = False,
             fallback: bool = False) -> tuple[Beam, bool]:
    """FOD; ``contrast`` ("cad" or "adacad") applies that distribution to both stages; ``fallback``: where plain
    FOD would refuse, search once more from the answer's start over the AdaCAD distribution first, and where that
    keeps nothing either and ``last_resort`` is set, a last time with τ2 lowered to the monitor's flag threshold (an
    answer the detector does not flag rather than a refusal)."""
    p = run.params
    plain = sampling_chooser(p.temperature, run.generator)
    first, sampler = greedy_chooser(), plain
    if contrast == "cad":
        sampler, first = cad_chooser(p.alpha, sampler), cad_chooser(p.alpha, first)
    elif contrast == "adacad":
        sampler, first = adacad_chooser(sampler), adacad_chooser(first)
    coverage = _coverage(run)
    start = run.loop.session.checkpoint()
    beam = _fod(run.loop, first, sampler, p.tau1, p.tau2, p.beams, p.samples, run.trace, backtrack_only, coverage,
                trim=p.trim, no_repeat=p.no_repeat)
    why = _fod_refusal(beam, coverage)
    if why and fallback:
        run.trace.append(TraceEvent("backtrack", 0, reason=f"{why}: searching again over the AdaCAD distribution"))
        run.loop.rewind(start)
        beam = _search(run.loop, adacad_chooser(plain), p.tau2, p.beams, p.samples, run.trace, coverage,
                       no_repeat=p.no_repeat)
        run.trace.append(_selected(run.loop, beam, "most faithful AdaCAD beam"))
        why = _fod_refusal(beam, coverage)
        floor = float(run.monitor.threshold)
        if why and p.last_resort and floor < p.tau2:  # last resort: what the detector itself would not flag
            run.trace.append(TraceEvent("backtrack", 0, reason=f"{why}: a last search over AdaCAD, tau2 lowered to "
                                        f"the detector's threshold {floor:.3f}"))
            run.loop.rewind(start)
            beam = _search(run.loop, adacad_chooser(plain), floor, p.beams, p.samples, run.trace, coverage,
                           no_repeat=p.no_repeat)
            run.trace.append(_selected(run.loop, beam, "most faithful last-resort beam"))
            why = _fod_refusal(beam, coverage)
    if why:
        run.trace.append(TraceEvent("refuse", len(beam.sentences), reason=why))
    return beam, why is not None


def _fod_refusal(beam: Beam, coverage: Coverage) -> str | None:
    """Why FOD refuses ``beam`` rather than answer with it (``None``: it answers)."""
    if not beam.sentences:  # nothing faithful survived: say so explicitly rather than answer ""
        return "no sentence passed the thresholds"
    if coverage.slots and coverage.open(_texts(beam)) == len(coverage.slots):  # an echo of the question
        return "the answer fills no part of the question"
    return None


def fod(run: StrategyRun) -> tuple[Beam, bool]:
    """FOD: backtracking + sentence-level beam search (paper 000 Algorithm 1)."""
    return _fod_run(run)


def fod_bt(run: StrategyRun) -> tuple[Beam, bool]:
    """FOD's backtracking alone: stop at the first low sentence."""
    return _fod_run(run, backtrack_only=True)


def fod_fallback(run: StrategyRun) -> tuple[Beam, bool]:
    """FOD; where it would refuse, its sentence search once more from the start over the AdaCAD distribution (and,
    with ``last_resort``, a last time with τ2 lowered to the monitor's flag threshold); it refuses when that keeps
    nothing either."""
    return _fod_run(run, fallback=True)


def fod_cad(run: StrategyRun) -> tuple[Beam, bool]:
    """FOD's sentence search over the CAD distribution."""
    return _fod_run(run, contrast="cad")


def fod_adacad(run: StrategyRun) -> tuple[Beam, bool]:
    """FOD's sentence search over the AdaCAD distribution (α per token from the JS divergence)."""
    return _fod_run(run, contrast="adacad")


def _run_to_end(loop: DecodingLoop, chooser: Chooser, trace: list[TraceEvent]) -> Beam:
    while not loop.beams[0].finished:
        (cand,) = loop.sample(1, chooser)
        loop.keep([cand])
        if cand.report is not None:
            trace.append(TraceEvent("accept", cand.report.index, cand.report.text, cand.report.score, 0))
    return loop.beams[0]


def _full_samples(loop: DecodingLoop, chooser: Chooser, samples: int, trace: list[TraceEvent],
                  first_index: int = 0, no_repeat: bool = False) -> list[Beam]:
    """``samples`` full answers decoded side by side from the current beam, each a ``candidate`` event (numbered
    from ``first_index``); with ``no_repeat``, each cut before its first repeated sentence (:func:`_cut_at_repeat`)."""
    first = True
    while not all(b.finished for b in loop.beams):
        cands = loop.sample(samples if first else 1, chooser)
        loop.keep(cands)
        first = False
    beams = [_cut_at_repeat(b, trace, first_index + i) if no_repeat else b for i, b in enumerate(loop.beams)]
    for i, beam in enumerate(beams):
        trace.append(TraceEvent("candidate", 0, loop.text(beam.ids), beam.mean_score, first_index + i,
                                reason=f"full sample, mean sentence score over {len(beam.sentences)} sentence"
                                       f"{'' if len(beam.sentences) == 1 else 's'}"))
    return beams


def _cut_at_repeat(beam: Beam, trace: list[TraceEvent], index: int = 0) -> Beam:
    """``beam`` ended before its first sentence that repeats an earlier one (:func:`faithwatch.text.repeats`), with
    a ``prune`` event for that sentence; ``beam`` itself when no sentence repeats. (A whole-answer strategy cannot
    resample that sentence as FOD does; what came before it stands as the answer.)"""
    texts = _texts(beam)
    cut = next((i for i in range(1, len(texts)) if repeats(texts[i], texts[:i])), None)
    if cut is None:
        return beam
    dropped = beam.sentences[cut]
    trace.append(TraceEvent("prune", cut, dropped.text, dropped.score, index, reason=f"{REPEATED}: the answer ends "
                            "before it"))
    return Beam(beam.ids[: dropped.token_start], beam.sentences[:cut], True, "repeated sentence")


def _fod(loop: DecodingLoop, greedy: Chooser, sampler: Chooser, tau1: float, tau2: float, k: int, s: int,
         trace: list[TraceEvent], backtrack_only: bool, coverage: Coverage, trim: bool = False,
         no_repeat: bool = False) -> Beam:
    """Paper 000 Algorithm 1 (``greedy`` for stage 1, ``sampler`` for the sentence beam search), question-aware
    through ``coverage`` (:mod:`faithwatch.decoding.coverage`): while the question has open slots, a greedy sentence
    that fills none of them, or an end of the answer, starts the search as a low score does; the search may not end
    such an answer (for :data:`~faithwatch.decoding.coverage.PATIENCE` sentences that fill nothing) and ranks
    candidates by open slots first, then by score; if its best answer still leaves slots open after a prefix from
    stage 1, it searches once more from the answer's start and keeps the better answer. A question without slots
    leaves Algorithm 1 as it is. With ``trim``, a greedy sentence below ``tau1`` is first tried cut at a comma
    (:func:`_trimmed`). With ``no_repeat``, a sentence that repeats one of its answer (:func:`_repeats`) counts as a
    low score in both stages."""
    start = loop.session.checkpoint()
    # stage 1: greedy sentence by sentence while the score is >= tau1
    while not loop.beams[0].finished:
        checkpoint = loop.session.checkpoint()
        (cand,) = loop.sample(1, greedy)
        why = _stage1_refusal(loop, coverage, cand, tau1, no_repeat)
        if why is None:
            if cand.eos and cand.report is not None and coverage.must_go_on(_texts(loop.beams[0], cand)):
                cand = replace(cand, eos=False)  # keep the sentence; the answer is not over yet
            loop.keep([cand])
            if cand.report is not None:
                trace.append(TraceEvent("accept", cand.report.index, cand.report.text, cand.report.score, 0,
                                        reason=f"greedy, score >= tau1={tau1:.3g}"))
            continue
        loop.session.restore(checkpoint)  # backtrack to the faithful prefix
        if trim and cand.report is not None and cand.report.below(tau1):
            cut = _trimmed(loop, coverage, cand, greedy, tau1, checkpoint, no_repeat)
            if cut is not None:
                loop.keep([cut])
                trace.append(TraceEvent("accept", cut.report.index, cut.report.text, cut.report.score, 0,
                                        reason=f"greedy sentence cut at a comma (whole: {cand.report.score:.3g}), "
                                        f"score >= tau1={tau1:.3g}"))
                continue
        report = cand.report
        trace.append(TraceEvent("backtrack", report.index if report else len(loop.beams[0].sentences),
                                report.text if report else "<eos>", report.score if report else None, 0, reason=why))
        break
    else:
        return loop.beams[0]
    if backtrack_only:
        loop.beams[0].stop_reason = "backtracked"
        return loop.beams[0]
    # stage 2: sentence-level beam search from the faithful prefix
    from_prefix = bool(loop.beams[0].sentences)
    best = _search(loop, sampler, tau2, k, s, trace, coverage, no_repeat=no_repeat)
    if from_prefix and coverage.open(_texts(best)):
        trace.append(TraceEvent("backtrack", 0, reason="question slots still open: searching again from the start"))
        loop.rewind(start)
        again = _search(loop, sampler, tau2, k, s, trace, coverage, no_repeat=no_repeat)
        best = _most_complete([best, again], coverage)
    trace.append(_selected(loop, best, "most faithful beam" + (" of those that fill the most slots"
                                                               if coverage.slots else "")))
    return best


def _selected(loop: DecodingLoop, beam: Beam, reason: str) -> TraceEvent:
    """The trace event of FOD's chosen ``beam`` (its index among the loop's beams, 0 if it is none of them)."""
    index = next((i for i, b in enumerate(loop.beams) if b is beam), 0)
    if not beam.sentences:  # nothing passed: no beam to speak of, and no score
        return TraceEvent("select", 0, "", None, index, reason=f"{reason}: none, no sentence passed")
    return TraceEvent("select", len(beam.sentences), loop.text(beam.ids), beam.mean_score, index, reason=reason)


def _search(loop: DecodingLoop, sampler: Chooser, tau2: float, k: int, s: int, trace: list[TraceEvent],
            coverage: Coverage, no_repeat: bool = False) -> Beam:
    """FOD's stage 2, the sentence-level beam search from the current beams; the best beam. With ``no_repeat``, a
    candidate that repeats a sentence of its beam is pruned as one below ``tau2`` is."""
    while True:
        open_beams = [b for b in loop.beams if not b.finished]
        per_beam = math.ceil(s / max(1, len(open_beams)))
        cands = loop.sample(per_beam, sampler, ban_eos=[coverage.must_go_on(_texts(b)) for b in loop.beams])
        step = max(len(b.sentences) for b in loop.beams)
        survivors: list[Candidate] = []
        repeated = False
        for c in cands:
            if c.carried:
                survivors.append(c)
                continue
            text = c.report.text if c.report else "<eos>"
            score = c.report.score if c.report else None
            trace.append(TraceEvent("candidate", step, text, score, c.parent))
            if c.report is not None and c.report.below(tau2):
                trace.append(TraceEvent("prune", step, text, score, c.parent, reason=f"score below tau2={tau2:.3g}"))
            elif no_repeat and _repeats(loop.beams[c.parent], c):
                trace.append(TraceEvent("prune", step, text, score, c.parent, reason=REPEATED))
                repeated = True
            else:
                survivors.append(c)
        if not [c for c in survivors if not c.carried]:
            new = " new" if repeated else ""  # some candidates only repeated their answer
            trace.append(TraceEvent("stop", step, reason=f"no{new} candidate scored >= tau2={tau2:.3g}"))
            for beam in loop.beams:
                beam.stop_reason = beam.stop_reason or f"no{new} candidate above tau2"
            break

        def beam_score(c: Candidate) -> float:
            scores = [x.score for x in loop.beams[c.parent].sentences] + ([c.report.score] if c.report else [])
            return sum(scores) / len(scores) if scores else 0.0

        ranked = sorted(survivors, key=lambda c: (coverage.open(_texts(loop.beams[c.parent], c)), -beam_score(c),
                                                  c.branch))
        kept, dropped = _distinct(loop, ranked, k)
        for c, same in dropped:
            trace.append(TraceEvent("drop", step, c.report.text if c.report else "", beam_score(c), c.parent,
                                    reason="the same answer as a kept beam" if same
                                    else f"not among the {k} best beams"))
        for i, c in enumerate(kept):
            trace.append(TraceEvent("keep", step, c.report.text if c.report else "<eos>", beam_score(c), i,
                                    reason="beam"))
        loop.keep(kept)
        if any(b.finished for b in loop.beams):
            trace.append(TraceEvent("stop", step, reason="a beam ended"))
            break
    return _most_complete(loop.beams, coverage)


def _distinct(loop: DecodingLoop, ranked: list[Candidate],
              k: int) -> tuple[list[Candidate], list[tuple[Candidate, bool]]]:
    """The first ``k`` of ``ranked`` whose answers (tokens so far, and whether they end) differ; the rest, each
    with whether it repeats a kept answer (two beams with one answer would make the search one beam)."""
    kept: list[Candidate] = []
    dropped: list[tuple[Candidate, bool]] = []
    seen: set[tuple[tuple[int, ...], bool]] = set()
    for c in ranked:
        answer = (tuple(loop.beams[c.parent].ids + c.ids), c.eos or loop.beams[c.parent].finished)
        if answer in seen or len(kept) >= k:
            dropped.append((c, answer in seen))
        else:
            kept.append(c)
            seen.add(answer)
    return kept, dropped


def _coverage(run: StrategyRun) -> Coverage:
    """The question coverage a strategy reads (no slots when ``coverage`` is off)."""
    return Coverage(run.loop.question, run.loop.context) if run.params.coverage else Coverage("")


def _most_complete(beams: list[Beam], coverage: Coverage) -> Beam:
    """The beam with the fewest open question slots, then the best mean sentence score (the first of equals)."""
    return min(beams, key=lambda b: (coverage.open(_texts(b)), -b.mean_score))


def _repeats(beam: Beam, cand: Candidate) -> bool:
    """Whether ``cand``'s sentence says one of ``beam``'s sentences again (:func:`faithwatch.text.repeats`)."""
    return cand.report is not None and repeats(cand.report.text, _texts(beam))


def _texts(beam: Beam, cand: Candidate | None = None) -> list[str]:
    """The sentences of ``beam``, with ``cand``'s sentence after them."""
    return [x.text for x in beam.sentences] + ([cand.report.text] if cand is not None and cand.report else [])


#: how many cuts of one sentence :func:`_trimmed` tries (at its last commas)
MAX_TRIMS = 2
#: the fewest words a cut keeps
MIN_TRIM_WORDS = 3


def _trimmed(loop: DecodingLoop, coverage: Coverage, cand: Candidate, greedy: Chooser, tau1: float,
             checkpoint: Checkpoint, no_repeat: bool = False) -> Candidate | None:
    """``cand``'s sentence cut at one of its last :data:`MAX_TRIMS` commas and closed with a full stop, each fed
    through the engine and scored as any sentence is; the longest cut that stage 1 accepts, or ``None`` (the
    session is then back at ``checkpoint``). A cut keeps at least :data:`MIN_TRIM_WORDS` words."""
    stop = loop.tokenizer.encode(".", add_special_tokens=False)
    cuts = [j for j in range(1, len(cand.ids)) if loop.text(cand.ids[j:j + 1]).startswith(",")]
    before = loop.beams[0].ids
    skip = len(loop.text(before))  # the answer so far, decoded once
    for j in reversed(cuts[-MAX_TRIMS:]):
        want = (loop.text(before + cand.ids[:j]) + ".")[skip:].strip()
        if len(want.split()) < MIN_TRIM_WORDS:
            continue
        (cut,) = loop.sample(1, forced_chooser([*cand.ids[:j], *stop], greedy))
        if cut.report is not None and cut.report.text.strip() == want and \
                _stage1_refusal(loop, coverage, cut, tau1, no_repeat) is None:
            return cut
        loop.session.restore(checkpoint)
    return None


def _stage1_refusal(loop: DecodingLoop, coverage: Coverage, cand: Candidate, tau1: float,
                    no_repeat: bool = False) -> str | None:
    """Why FOD's stage 1 does not accept the greedy candidate (``None``: it accepts it)."""
    before = _texts(loop.beams[0])
    if cand.report is None:
        return "the answer ends with question slots open" if cand.eos and coverage.must_go_on(before) else None
    if no_repeat and repeats(cand.report.text, before):
        return f"greedy sentence {REPEATED}"
    if cand.report.below(tau1):
        return f"greedy sentence below tau1={tau1:.3g}"
    gaps = coverage.open(before)
    if gaps and coverage.open(_texts(loop.beams[0], cand)) == gaps:
        return "greedy sentence fills none of the question's open slots"
    return None


def _load_lens(lens, monitor):
    from faithwatch.detectors import LookbackLens, load_detector

    if lens is None:
        folder = getattr(getattr(monitor.detector, "meta", None), "source_dir", None)
        candidates = [Path(folder) / "lookback-lens"] if folder else []
        from faithwatch.detectors.shipped import SHIPPED_DIR

        candidates.append(SHIPPED_DIR / "lookback-lens")
        for path in candidates:
            if (path / "detector.json").is_file():
                lens = path
                break
        else:
            raise InputError("the lookback strategy needs a Lookback Lens (--lens DIR); none was found")
    if isinstance(lens, (str, Path)):
        lens = load_detector(lens, expect_model_id=monitor.lm.model_id)
    if not isinstance(lens, LookbackLens):
        raise InputError("--lens must be a Lookback Lens detector")
    return lens


def _lookback(loop: DecodingLoop, monitor, lens, sampler: Chooser, samples: int, chunk_tokens: int,
              trace: list[TraceEvent]) -> Beam:
    """Paper 003 §3.1: sample candidate chunks, keep the one the Lookback Lens scores most faithful."""
    step = 0
    while not loop.beams[0].finished:
        cands = loop.sample(samples, sampler, unit="chunk", chunk_tokens=chunk_tokens)
        scores = []
        for c in cands:
            rec = loop.session.branch_records[c.branch]
            start = len(loop.beams[c.parent].ids)
            chunk = np.asarray(rec.lookback[start:start + len(c.ids)])
            score = float(lens.predict_proba_faithful(chunk.mean(axis=0)[None])[0]) if len(chunk) else 0.0
            scores.append(score)
            trace.append(TraceEvent("candidate", step, loop.text(c.ids), score, c.branch))
        best = max(range(len(cands)), key=lambda i: (scores[i], -i))
        trace.append(TraceEvent("select", step, loop.text(cands[best].ids), scores[best], best,
                                reason="best Lookback Lens score"))
        loop.keep([cands[best]])
        step += 1
    return loop.beams[0]


def _result(run: StrategyRun, strategy: str, beam: Beam, refused: bool) -> DecodingResult:
    loop, monitor = run.loop, run.monitor
    sentences = beam.sentences
    if strategy == "lookback" and beam.ids and not refused:  # chunks are not sentences: score them afterwards
        sentences = monitor.score(loop.question, loop.context, beam.ids).sentences
    return _decoding_result(monitor, strategy, run.params, run.trace, beam, refused, loop.text(beam.ids), sentences,
                            loop.generated)


def _decoding_result(monitor: Any, strategy: str, params: DecodingParams, trace: list[TraceEvent], beam: Beam,
                     refused: bool, text: str, sentences: list, generated: int) -> DecodingResult:
    """A refusal has no answer sentences (the trace keeps them)."""
    return DecodingResult(
        strategy=strategy, answer=REFUSAL if refused else text.strip(), refused=refused,
        sentences=[] if refused else sentences, trace=trace, num_tokens=0 if refused else len(beam.ids),
        generated_tokens=generated, stop_reason="refused" if refused else (beam.stop_reason or "eos"),
        params={"strategy": strategy, **_read_params(strategy, params)}, detector=monitor.detector.name,
    )


def _read_params(strategy: str, params: DecodingParams) -> dict[str, Any]:
    """The parameters ``strategy`` reads (its registry entry's ``reads`` and the token budgets); every parameter
    for a plug-in that does not say."""
    dump = params.model_dump()
    reads = registry.strategies.get(strategy).options.get("reads")
    return dump if reads is None else {k: dump[k] for k in ("max_new_tokens", "max_sentence_tokens", *reads)}
