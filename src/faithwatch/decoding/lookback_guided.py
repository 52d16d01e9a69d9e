"""Lookback-Lens-guided decoding (paper 003 §3.1): sampled chunks, the one the Lookback Lens scores most faithful.
Registered in :mod:`faithwatch.decoding`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from faithwatch.decoding.loop import Beam, Chooser, DecodingLoop, sampling_chooser
from faithwatch.decoding.strategies import StrategyRun
from faithwatch.decoding.types import TraceEvent
from faithwatch.errors import InputError


def lookback(run: StrategyRun) -> tuple[Beam, bool]:
    """Chunks chosen by the Lookback Lens (paper 003 §3.1)."""
    p = run.params
    lens = _load_lens(run.lens, run.monitor)
    return _lookback(run.loop, run.monitor, lens, sampling_chooser(p.temperature, run.generator), samples=p.samples,
                     chunk_tokens=p.chunk_tokens, trace=run.trace), False


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
