"""The detector shipped inside faithwatch for the embedded model (rebuilt by ``training/default_detector.sh``)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from faithwatch.detectors.heuristic import HeuristicDetector

if TYPE_CHECKING:
    from faithwatch.detectors.base import Detector

log = logging.getLogger(__name__)

SHIPPED_DIR = Path(__file__).parent / "default"
#: the name that stands for the shipped detector wherever a detector folder is asked for
SHIPPED_NAME = "default"


def detector_dir(spec: str | Path) -> Path:
    """The folder a ``--detector`` value names: ``default`` is the shipped detector's (where faithwatch is
    installed), anything else a path. A folder of that name in the working directory wins."""
    path = Path(spec)
    if str(spec) == SHIPPED_NAME and not path.is_dir():
        return SHIPPED_DIR
    return path


def default_detector(model_id: str | None) -> Detector:
    """The shipped trained detector when it was trained for ``model_id`` (``None``: no model, any detector whose
    features need none), else the heuristic."""
    from faithwatch.detectors import load_detector

    if (SHIPPED_DIR / "detector.json").is_file():
        import json

        trained_for = json.loads((SHIPPED_DIR / "detector.json").read_text()).get("model_id")
        if model_id is None or trained_for == model_id:
            return load_detector(SHIPPED_DIR, expect_model_id=model_id)
        log.info("the shipped detector is for %s, not %s: using the heuristic", trained_for, model_id)
    return HeuristicDetector()


def resolve_detector(name: str | Path | None, model_id: str | None) -> Detector:
    """The detector a monitor of ``model_id`` uses for ``name``: ``None`` is :func:`default_detector`, anything
    else a name or folder (:func:`~faithwatch.detectors.get_detector`), refused when trained for another model.
    ``model_id`` ``None``: no model, so a model-free detector of any model."""
    from faithwatch.detectors import get_detector

    if name is None:
        return default_detector(model_id)
    return get_detector(str(name), expect_model_id=model_id)
