"""Detectors: features -> faithfulness score."""

from faithwatch.detectors.base import Detector
from faithwatch.detectors.heuristic import HeuristicDetector


def get_detector(name: str | None) -> Detector:
    """Detector by name: ``heuristic`` (default until trained detectors ship)."""
    if name in (None, "", "heuristic", HeuristicDetector.name):
        return HeuristicDetector()
    raise ValueError(f"unknown detector '{name}'; available: heuristic")


__all__ = ["Detector", "HeuristicDetector", "get_detector"]
