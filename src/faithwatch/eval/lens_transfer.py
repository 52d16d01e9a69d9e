"""Cross-model transfer of a Lookback Lens (paper 003 §4): map the target model's heads onto the source's.

The same texts are teacher-forced through both models; each sentence's averaged lookback-ratio vector from the
target model is regressed onto the source model's vector for the same sentence (sentences are matched by their
character span, which does not depend on the tokenizer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from faithwatch.data.schema import LabelledExample
from faithwatch.detectors.lookback_lens import HeadMapping, LookbackLens
from faithwatch.errors import FaithwatchError, InputError
from faithwatch.monitor import Monitor


def paired_lookback(
    source: Monitor, target: Monitor, examples: Sequence[LabelledExample],
    on_progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Sentence lookback vectors of both models on the same texts: (source [n, Ls*Hs], target [n, Lt*Ht], skipped)."""
    src, tgt, skipped = [], [], 0
    for n, ex in enumerate(examples, start=1):
        try:
            a = source.score(ex.question, ex.context, ex.response, instruction=ex.instruction)
            b = target.score(ex.question, ex.context, ex.response, instruction=ex.instruction)
        except FaithwatchError:
            skipped += 1
            continue
        by_span = {(s.start, s.end): s for s in b.sentences}
        for s in a.sentences:
            match = by_span.get((s.start, s.end))
            if match is not None:
                src.append(np.ravel(s.vectors["lookback_ratio"]))
                tgt.append(np.ravel(match.vectors["lookback_ratio"]))
        if on_progress:
            on_progress(n, len(examples))
    if len(src) < 2:
        raise InputError("too few sentences shared by both models to fit a head mapping")
    return np.stack(src), np.stack(tgt), skipped


def transfer_lens(
    lens: LookbackLens, source: Monitor, target: Monitor, examples: Sequence[LabelledExample], *, alpha: float = 1e-3,
    on_progress: Callable[[int, int], None] | None = None,
) -> tuple[LookbackLens, HeadMapping]:
    """The lens mapped to the target model, and the fitted mapping (its ``r2`` says how well heads map)."""
    if lens.model_id != source.lm.model_id:
        raise InputError(f"the lens was trained on '{lens.model_id}', the source monitor runs '{source.lm.model_id}'")
    src, tgt, _ = paired_lookback(source, target, examples, on_progress)
    mapping = HeadMapping.fit(
        tgt, src, target_model_id=target.lm.model_id, source_model_id=source.lm.model_id,
        target_shape=(target.lm.num_layers, target.lm.num_heads),
        source_shape=(source.lm.num_layers, source.lm.num_heads), alpha=alpha,
    )
    return lens.with_mapping(mapping), mapping
