"""Decoding strategies: greedy, abstention, reranking, CAD, AdaCAD, Lookback-Lens-guided chunks, FOD, FOD-BT and
FOD-CAD (FOD's sentence search over the CAD distribution).

Every strategy runs on :class:`~faithwatch.decoding.loop.DecodingLoop` and returns a
:class:`~faithwatch.decoding.types.DecodingResult` with a trace of every candidate considered.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from faithwatch.decoding.loop import (
    Beam,
    Candidate,
    Chooser,
    DecodingLoop,
    adacad_chooser,
    cad_chooser,
    greedy_chooser,
    sampling_chooser,
)
from faithwatch.decoding.types import REFUSAL, DecodingResult, TraceEvent
from faithwatch.errors import InputError

STRATEGIES = ("greedy", "abstain", "rerank", "cad", "adacad", "lookback", "fod-bt", "fod", "fod-cad")


def generate(
    monitor,
    question: str,
    context: str,
    strategy: str = "fod",
    *,
    tau1: float = 0.7,
    tau2: float = 0.85,
    beams: int = 2,
    samples: int = 6,
    temperature: float = 0.7,
    alpha: float = 0.5,
    abstain_threshold: float = 0.7,
    max_new_tokens: int = 128,
    max_sentence_tokens: int = 96,
    chunk_tokens: int = 8,
    seed: int = 0,
    lens=None,
    instruction: str | None = None,
) -> DecodingResult:
    """Answer ``question`` from ``context`` with a decoding strategy (see :data:`STRATEGIES`).

    Defaults follow paper 000 Table 2 (τ1=0.7, τ2=0.85, K=2 beams, S=6 samples) and Shi et al. (α=0.5).
    ``adacad`` sets α per token from the divergence of the two distributions; ``fod-cad`` runs FOD on CAD's
    distribution (stage 1 greedy and stage 2 sampling alike).
    Sentence scores come from the monitor's detector; ``lens`` (a LookbackLens or its folder) guides ``lookback``.
    """
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy '{strategy}'; choose one of {', '.join(STRATEGIES)}")
    if beams < 1 or samples < 1 or max_new_tokens < 1:
        raise InputError("beams, samples and max_new_tokens must be at least 1")
    params = {k: v for k, v in locals().items() if k not in ("monitor", "question", "context", "lens", "instruction")}
    generator = torch.Generator().manual_seed(seed)
    loop = DecodingLoop(monitor, question, context, max_new_tokens=max_new_tokens,
                        max_sentence_tokens=max_sentence_tokens, instruction=instruction)
    trace: list[TraceEvent] = []
    greedy = greedy_chooser()
    if strategy in ("greedy", "abstain", "cad", "adacad"):
        chooser = {"cad": cad_chooser(alpha, greedy), "adacad": adacad_chooser(greedy)}.get(strategy, greedy)
        beam = _run_to_end(loop, chooser, trace)
        if strategy == "abstain":
            low = [s for s in beam.sentences if s.score < abstain_threshold]
            if low:
                trace.append(TraceEvent("refuse", low[0].index, low[0].text, low[0].score,
                                        reason=f"score below {abstain_threshold}"))
                return _result(loop, monitor, strategy, beam, trace, params, refused=True)
    elif strategy == "rerank":
        beam = _rerank(loop, sampling_chooser(temperature, generator), samples, trace)
    elif strategy == "lookback":
        beam = _lookback(loop, monitor, _load_lens(lens, monitor), sampling_chooser(temperature, generator),
                         samples=8 if samples == 6 else samples, chunk_tokens=chunk_tokens, trace=trace)
    else:
        sampler = sampling_chooser(temperature, generator)
        if strategy == "fod-cad":
            sampler, greedy = cad_chooser(alpha, sampler), cad_chooser(alpha, greedy)
        beam = _fod(loop, greedy, sampler, tau1, tau2, beams, samples, trace, backtrack_only=strategy == "fod-bt")
        if not beam.sentences:  # nothing faithful survived: say so explicitly rather than answer ""
            trace.append(TraceEvent("refuse", 0, reason="no sentence passed the thresholds"))
            return _result(loop, monitor, strategy, beam, trace, params, refused=True)
    return _result(loop, monitor, strategy, beam, trace, params)


def _run_to_end(loop: DecodingLoop, chooser: Chooser, trace: list[TraceEvent]) -> Beam:
    while not loop.beams[0].finished:
        (cand,) = loop.sample(1, chooser)
        loop.keep([cand])
        if cand.report is not None:
            trace.append(TraceEvent("accept", cand.report.index, cand.report.text, cand.report.score, 0))
    return loop.beams[0]


def _rerank(loop: DecodingLoop, chooser: Chooser, samples: int, trace: list[TraceEvent]) -> Beam:
    first = True
    while not all(b.finished for b in loop.beams):
        cands = loop.sample(samples if first else 1, chooser)
        loop.keep(cands)
        first = False
    for i, beam in enumerate(loop.beams):
        trace.append(TraceEvent("candidate", 0, loop.text(beam.ids), beam.mean_score, i,
                                reason=f"full sample, mean sentence score over {len(beam.sentences)} sentences"))
    best = max(range(len(loop.beams)), key=lambda i: (loop.beams[i].mean_score, -i))
    trace.append(TraceEvent("select", 0, loop.text(loop.beams[best].ids), loop.beams[best].mean_score, best,
                            reason="best mean sentence score"))
    return loop.beams[best]


def _fod(loop: DecodingLoop, greedy: Chooser, sampler: Chooser, tau1: float, tau2: float, k: int, s: int,
         trace: list[TraceEvent], backtrack_only: bool) -> Beam:
    """Paper 000 Algorithm 1 (``greedy`` for stage 1, ``sampler`` for the sentence beam search)."""
    # stage 1: greedy sentence by sentence while the score is >= tau1
    while not loop.beams[0].finished:
        checkpoint = loop.session.checkpoint()
        (cand,) = loop.sample(1, greedy)
        if cand.report is None or cand.report.score >= tau1:
            loop.keep([cand])
            if cand.report is not None:
                trace.append(TraceEvent("accept", cand.report.index, cand.report.text, cand.report.score, 0,
                                        reason=f"greedy, score >= tau1={tau1}"))
            continue
        loop.session.restore(checkpoint)  # backtrack to the faithful prefix
        trace.append(TraceEvent("backtrack", cand.report.index, cand.report.text, cand.report.score, 0,
                                reason=f"greedy sentence below tau1={tau1}"))
        break
    else:
        return loop.beams[0]
    if backtrack_only:
        loop.beams[0].stop_reason = "backtracked"
        return loop.beams[0]
    # stage 2: sentence-level beam search from the faithful prefix
    while True:
        open_beams = [b for b in loop.beams if not b.finished]
        per_beam = math.ceil(s / max(1, len(open_beams)))
        cands = loop.sample(per_beam, sampler)
        step = max(len(b.sentences) for b in loop.beams)
        survivors: list[Candidate] = []
        for c in cands:
            if c.carried:
                survivors.append(c)
                continue
            text = c.report.text if c.report else "<eos>"
            score = c.report.score if c.report else None
            trace.append(TraceEvent("candidate", step, text, score, c.parent))
            if c.report is not None and c.report.score < tau2:
                trace.append(TraceEvent("prune", step, text, score, c.parent, reason=f"score below tau2={tau2}"))
            else:
                survivors.append(c)
        if not [c for c in survivors if not c.carried]:
            trace.append(TraceEvent("stop", step, reason=f"no candidate scored >= tau2={tau2}"))
            for beam in loop.beams:
                beam.stop_reason = beam.stop_reason or "no candidate above tau2"
            break

        def beam_score(c: Candidate) -> float:
            scores = [x.score for x in loop.beams[c.parent].sentences] + ([c.report.score] if c.report else [])
            return sum(scores) / len(scores) if scores else 0.0

        ranked = sorted(survivors, key=lambda c: (-beam_score(c), c.branch))
        kept, dropped = ranked[:k], ranked[k:]
        for c in dropped:
            trace.append(TraceEvent("drop", step, c.report.text if c.report else "", beam_score(c), c.parent,
                                    reason=f"not among the {k} best beams"))
        for i, c in enumerate(kept):
            trace.append(TraceEvent("keep", step, c.report.text if c.report else "<eos>", beam_score(c), i,
                                    reason="beam"))
        loop.keep(kept)
        if any(b.finished for b in loop.beams):
            trace.append(TraceEvent("stop", step, reason="a beam ended"))
            break
    best = max(range(len(loop.beams)), key=lambda i: (loop.beams[i].mean_score, -i))
    trace.append(TraceEvent("select", len(loop.beams[best].sentences), loop.text(loop.beams[best].ids),
                            loop.beams[best].mean_score, best, reason="most faithful beam"))
    return loop.beams[best]


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


def _result(loop: DecodingLoop, monitor, strategy: str, beam: Beam, trace: list[TraceEvent], params: dict,
            refused: bool = False) -> DecodingResult:
    sentences = [] if refused else beam.sentences  # a refusal has no answer sentences (the trace keeps them)
    if strategy == "lookback" and beam.ids and not refused:  # chunks are not sentences: score them afterwards
        sentences = monitor.score(loop.question, loop.context, beam.ids).sentences
    return DecodingResult(
        strategy=strategy, answer=REFUSAL if refused else loop.text(beam.ids).strip(), refused=refused,
        sentences=sentences, trace=trace, num_tokens=0 if refused else len(beam.ids), generated_tokens=loop.generated,
        stop_reason="refused" if refused else (beam.stop_reason or "eos"), params=params,
        detector=monitor.detector.name,
    )
