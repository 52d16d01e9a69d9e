"""Evaluation of faithfulness detectors (metrics with bootstrap CIs in :mod:`.metrics`, reports in :mod:`.report`)."""
