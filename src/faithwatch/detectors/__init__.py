"""Detectors: features -> faithfulness score P(faithful) in [0, 1].

``heuristic`` is the untrained default; trained detectors (SynCheck aggregators, Lookback Lens) live in
artifact directories (see :mod:`faithwatch.detectors.artifact`) and are loaded by path.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from faithwatch.detectors.artifact import LENS_KIND, META_FILE, SYNCHECK_KINDS, ArtifactError, ArtifactMeta
from faithwatch.detectors.base import Detector
from faithwatch.detectors.heuristic import HeuristicDetector
from faithwatch.errors import InputError

if TYPE_CHECKING:
    from faithwatch.detectors.aggregator import SynCheckDetector
    from faithwatch.detectors.lookback_lens import HeadMapping, LookbackLens

#: the trained detectors' classes, imported on first use: they import torch and scikit-learn (seconds), which a
#: command that only checks a detector folder does not need
_LAZY = {"SynCheckDetector": "aggregator", "HeadMapping": "lookback_lens", "LookbackLens": "lookback_lens"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"faithwatch.detectors.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_detector(
    path: str | Path,
    expect_model_id: str | None = None,
    expect_features: Sequence[str] | None = None,
) -> SynCheckDetector | LookbackLens:
    """Load a trained detector artifact directory, choosing the class by its recorded ``kind``.

    ``expect_model_id``: the model the monitor runs; a detector trained on another model is refused.
    ``expect_features``: the features the monitor computes; a detector needing others is refused.
    """
    directory = Path(path)
    meta = ArtifactMeta.load(directory, expect_model_id=expect_model_id, expect_features=expect_features)
    if meta.kind in SYNCHECK_KINDS:
        from faithwatch.detectors.aggregator import SynCheckDetector

        return SynCheckDetector._from_artifact(directory, meta)
    if meta.kind == LENS_KIND:
        from faithwatch.detectors.lookback_lens import LookbackLens

        return LookbackLens._from_artifact(directory, meta)
    raise ArtifactError(f"detector {directory} has kind '{meta.kind}', which this faithwatch cannot load")


#: the names that stand for the untrained heuristic detector
HEURISTIC_NAMES = ("", "heuristic", HeuristicDetector.name)


def get_detector(name: str | Path | None, expect_model_id: str | None = None) -> Detector:
    """Detector by name or path: ``heuristic`` (also for ``None``), ``default`` (the shipped detector), or a
    trained artifact directory."""
    if name is None or name in HEURISTIC_NAMES:
        return HeuristicDetector()
    return load_detector(detector_path(name), expect_model_id=expect_model_id)  # type: ignore[arg-type]


def detector_path(name: str | Path, *, trained_only: bool = False) -> Path:
    """The folder a detector name or path stands for (``default``: the shipped one), without loading it; an
    :class:`InputError` when there is none (so that a command can refuse a bad name before loading a model).
    ``trained_only``: the caller takes no heuristic (evaluation, calibration), and its error says so."""
    from faithwatch.detectors.shipped import detector_dir

    if isinstance(name, str) and name in HEURISTIC_NAMES:
        raise InputError("the heuristic detector is a fixed rule with no folder: give default (the shipped detector) "
                         "or a detector folder made by `faithwatch train`")
    path = detector_dir(name)  # type: ignore[arg-type]
    if path.is_file() and path.name == META_FILE:
        path = path.parent
    if path.is_dir() and (path / META_FILE).is_file():
        return path
    what = (f"{name} is not a detector folder (no {META_FILE})" if path.is_dir()
            else f"detector folder not found: {name}")
    raise InputError(
        f"{what}; give {'' if trained_only else 'heuristic, '}default (the shipped one), or a trained detector "
        f"folder (holding {META_FILE}; "
        f"kinds {', '.join((*SYNCHECK_KINDS, LENS_KIND))})"
    )


__all__ = [
    "ArtifactError",
    "ArtifactMeta",
    "Detector",
    "HeadMapping",
    "HEURISTIC_NAMES",
    "HeuristicDetector",
    "detector_path",
    "LookbackLens",
    "SynCheckDetector",
    "get_detector",
    "load_detector",
]
