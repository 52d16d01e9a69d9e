"""FOD (paper 000 Algorithm 1): greedy sentence by sentence while the score is at least τ1, then a sentence-level
beam search from the faithful prefix; its variants FOD-BT (backtracking alone), FOD-CAD and FOD-AdaCAD (both stages
over the CAD or AdaCAD distribution) and FOD-fallback (plain FOD that searches over AdaCAD before it refuses).
Registered in :mod:`faithwatch.decoding`."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

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
from faithwatch.decoding.strategies import StrategyRun, answer_texts, most_complete, question_coverage, repeats_answer
from faithwatch.decoding.types import REPEATED, TraceEvent
from faithwatch.text import repeats

if TYPE_CHECKING:
    from faithwatch.models.engine import Checkpoint


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
    coverage = question_coverage(run)
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
    if coverage.slots and coverage.open(answer_texts(beam)) == len(coverage.slots):  # an echo of the question
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
    (:func:`_trimmed`). With ``no_repeat``, a sentence that repeats one of its answer
    (:func:`~faithwatch.decoding.strategies.repeats_answer`) counts as a low score in both stages."""
    start = loop.session.checkpoint()
    # stage 1: greedy sentence by sentence while the score is >= tau1
    while not loop.beams[0].finished:
        checkpoint = loop.session.checkpoint()
        (cand,) = loop.sample(1, greedy)
        why = _stage1_refusal(loop, coverage, cand, tau1, no_repeat)
        if why is None:
            if cand.eos and cand.report is not None and coverage.must_go_on(answer_texts(loop.beams[0], cand)):
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
    if from_prefix and coverage.open(answer_texts(best)):
        trace.append(TraceEvent("backtrack", 0, reason="question slots still open: searching again from the start"))
        loop.rewind(start)
        again = _search(loop, sampler, tau2, k, s, trace, coverage, no_repeat=no_repeat)
        best = most_complete([best, again], coverage)
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
        cands = loop.sample(per_beam, sampler, ban_eos=[coverage.must_go_on(answer_texts(b)) for b in loop.beams])
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
            elif no_repeat and repeats_answer(loop.beams[c.parent], c):
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

        ranked = sorted(survivors, key=lambda c: (coverage.open(answer_texts(loop.beams[c.parent], c)), -beam_score(c),
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
    return most_complete(loop.beams, coverage)


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
    before = answer_texts(loop.beams[0])
    if cand.report is None:
        return "the answer ends with question slots open" if cand.eos and coverage.must_go_on(before) else None
    if no_repeat and repeats(cand.report.text, before):
        return f"greedy sentence {REPEATED}"
    if cand.report.below(tau1):
        return f"greedy sentence below tau1={tau1:.3g}"
    gaps = coverage.open(before)
    if gaps and coverage.open(answer_texts(loop.beams[0], cand)) == gaps:
        return "greedy sentence fills none of the question's open slots"
    return None
