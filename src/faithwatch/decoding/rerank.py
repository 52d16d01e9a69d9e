"""Whole-answer strategies: rerank (S full samples, the best mean sentence score) and rerank-coverage (the greedy
answer when it fills the question and passes τ1, else it and S samples: fewest open question slots, then score).
Registered in :mod:`faithwatch.decoding`."""

from __future__ import annotations

from faithwatch.decoding.loop import Beam, Chooser, DecodingLoop, greedy_chooser, sampling_chooser
from faithwatch.decoding.strategies import StrategyRun, answer_texts, most_complete, question_coverage, run_to_end
from faithwatch.decoding.types import REPEATED, TraceEvent
from faithwatch.text import repeats


def rerank(run: StrategyRun) -> tuple[Beam, bool]:
    """S full samples; the one with the best mean sentence score. With ``no_repeat``, each sample ends before its
    first sentence that says an earlier one again (:func:`_cut_at_repeat`)."""
    loop = run.loop
    pool = _full_samples(loop, sampling_chooser(run.params.temperature, run.generator), _draws(run), run.trace,
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
    coverage = question_coverage(run)
    start = loop.session.checkpoint()
    plain = run_to_end(loop, greedy_chooser(), run.trace)
    if p.no_repeat:
        plain = _cut_at_repeat(plain, run.trace)
    run.trace.append(TraceEvent("candidate", 0, loop.text(plain.ids), plain.mean_score, 0, reason="greedy answer"))
    if plain.sentences and not any(s.below(p.tau1) for s in plain.sentences) and not coverage.open(answer_texts(plain)):
        run.trace.append(TraceEvent("select", 0, loop.text(plain.ids), plain.mean_score, 0,
                                    reason=f"greedy answer fills every question slot, every sentence >= "
                                    f"tau1={p.tau1:.3g}: no samples"))
        return plain, False
    loop.rewind(start)
    pool = [plain, *_full_samples(loop, sampling_chooser(p.temperature, run.generator), _draws(run), run.trace, 1,
                                  no_repeat=p.no_repeat)]
    best = most_complete(pool, coverage)
    run.trace.append(TraceEvent("select", 0, loop.text(best.ids), best.mean_score, pool.index(best),
                                reason="fewest open question slots, then best mean sentence score"))
    return best, False


def _draws(run: StrategyRun) -> int:
    """S, or 1 at temperature 0, where every sample is the greedy answer (S identical answers cost S times one)."""
    return run.params.samples if run.params.temperature > 0 else 1


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
    texts = answer_texts(beam)
    cut = next((i for i in range(1, len(texts)) if repeats(texts[i], texts[:i])), None)
    if cut is None:
        return beam
    dropped = beam.sentences[cut]
    trace.append(TraceEvent("prune", cut, dropped.text, dropped.score, index, reason=f"{REPEATED}: the answer ends "
                            "before it"))
    return Beam(beam.ids[: dropped.token_start], beam.sentences[:cut], True, "repeated sentence")
