"""Decoding strategies that steer generation toward faithful sentences (FOD and baselines)."""

from faithwatch.decoding.strategies import STRATEGIES, generate
from faithwatch.decoding.types import REFUSAL, DecodingResult, TraceEvent

__all__ = ["REFUSAL", "STRATEGIES", "DecodingResult", "TraceEvent", "generate"]
