"""From data set names to labelled feature tables (extraction cached), shared by `train` and `eval`.

With ``ray`` (``--ray``), the teacher-forced extraction runs on Ray actors that build the same monitor from
:func:`extraction_kwargs`; the text-only path (``--text-only``) needs no model pass and refuses ``ray``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from faithwatch.data.loaders import dataset_name, load_dataset
from faithwatch.data.schema import LabelledExample
from faithwatch.detectors.framing import aside_kinds
from faithwatch.errors import InputError, check_bools
from faithwatch.eval.features import (
    EXTRACTION_SIGNALS,
    RayExtraction,
    extract_features,
    extract_text_features,
)
from faithwatch.eval.labels import label_sentences, label_windows
from faithwatch.eval.text_features import add_text_features
from faithwatch.monitor import Monitor
from faithwatch.signals.probe import probe_candidate_layers

if TYPE_CHECKING:
    from faithwatch.models.loading import LoadedModel


@dataclass
class LabelledData:
    """One data set: its examples, labelled sentence and window tables, and what was left out."""

    name: str
    examples: list[LabelledExample]
    sentences: pd.DataFrame  # labelled sentences only
    all_sentences: pd.DataFrame  # every sentence, label None where unknown (response-level evaluation)
    windows: pd.DataFrame
    failed: dict[str, str]
    unlabelled_sentences: int
    train_only: bool = False  # an augmentation set: trained on, never evaluated


#: why ``--ray`` and ``--text-only`` do not go together
TEXT_ONLY_RAY = "--text-only computes no model pass (minutes on one machine): drop --ray, or drop --text-only"


def _absence(examples: Sequence[LabelledExample], sentences: pd.DataFrame) -> list[bool]:
    """Per sentence row: an absence note its example's context bears out, by the rule the monitor and `check` read
    (:func:`~faithwatch.detectors.framing.aside_kinds`; framing lines are told from the ``text`` column itself)."""
    context = {e.id: e.context for e in examples}
    return [aside_kinds(str(t), context[e])[1]
            for t, e in zip(sentences["text"], sentences["example_id"], strict=True)]


def extraction_kwargs(model: str | None, num_layers: int, alignment: str | None = None) -> dict[str, Any]:
    """The :class:`Monitor` arguments of :func:`extraction_monitor` for a model of ``num_layers`` layers (what
    Ray actors build the same monitor from)."""
    kwargs: dict[str, Any] = {"model": model, "signals": list(EXTRACTION_SIGNALS), "detector": "heuristic",
                              "hidden_layers": probe_candidate_layers(num_layers)}
    return kwargs if alignment is None else {**kwargs, "alignment": alignment}


def extraction_monitor(model: LoadedModel | str | None = None, alignment: str | None = None) -> Monitor:
    """The monitor whose features training and evaluation use (fixed signal set, see the cache key)."""
    from faithwatch.models.loading import LoadedModel, load_model  # transformers: not for a usage error

    lm = model if isinstance(model, LoadedModel) else load_model(model)
    return Monitor(**{**extraction_kwargs(None, lm.num_layers, alignment), "model": lm})


def read_labelled(names: Sequence[str], *, data_root: str | None = None, questionable: str = "exclude",
                  augment: Sequence[str] = ()) -> dict[str, list[LabelledExample]]:
    """Every data set of ``names`` and ``augment`` read and checked (an unknown name, a bad record) before the
    first one's features (minutes to hours) or the model (a large one: minutes)."""
    return {name: load_dataset(name, data_root, questionable=questionable)
            for name in dict.fromkeys([*names, *augment])}


def load_labelled(
    names: Sequence[str],
    monitor: Monitor,
    *,
    data_root: str | None = None,
    questionable: str = "exclude",
    on_progress: Callable[[str, int, int], None] | None = None,
    text_only: bool = False,
    augment: Sequence[str] = (),
    ray: RayExtraction | None = None,
    loaded: dict[str, list[LabelledExample]] | None = None,
) -> dict[str, LabelledData]:
    """Load, extract (cached) and label each data set.

    ``text_only``: sentence features from the text alone (``align_score`` from the monitor's scorer and the
    text signals), without teacher forcing; enough for recipes of :data:`TEXT_FAMILIES`.
    ``augment``: data sets (already in ``names`` or not) marked training-only: their sentence rows get
    ``train_only = True``, so that leave-one-out never holds them out and calibration does not use them.
    ``ray``: teacher-force on Ray actors (the same cache; not with ``text_only``).
    ``loaded``: the sets as :func:`read_labelled` read them (read before the model loads), else read here.
    """
    check_bools(text_only=text_only)
    if ray is not None and text_only:
        raise InputError(TEXT_ONLY_RAY)
    out = {}
    if loaded is None:
        loaded = read_labelled(names, data_root=data_root, questionable=questionable, augment=augment)
    for name, examples in loaded.items():
        progress = (lambda n, t, _name=name: on_progress(_name, n, t)) if on_progress else None
        if text_only:
            tables = extract_text_features(monitor.alignment, name, examples, on_progress=progress)
        else:
            tables = extract_features(monitor, name, examples, on_progress=progress, ray=ray)
        tables.sentences = add_text_features(examples, tables.sentences, name, on_progress=on_progress)
        tables.sentences = tables.sentences.assign(train_only=name in augment,
                                                   absence=_absence(examples, tables.sentences))
        sentences = label_sentences(examples, tables.sentences)
        short = dataset_name(name)
        out[short] = LabelledData(
            name=short, examples=examples, sentences=sentences,
            all_sentences=label_sentences(examples, tables.sentences, keep_unlabelled=True),
            windows=label_windows(examples, tables.windows),
            failed=tables.failed, unlabelled_sentences=sentences.attrs.get("dropped", 0), train_only=name in augment,
        )
    return out
