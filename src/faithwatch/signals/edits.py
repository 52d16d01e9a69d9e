"""Near-copy edit evidence: the changes a sentence made to the context sentence it restates, as features.

Text only (no model pass), so teacher-forced tables add it after extraction like ``lexical``.
"""

from __future__ import annotations

from faithwatch.alignment.edits import EDIT_FEATURES, EDITS_VERSION, EditScorer
from faithwatch.signals.base import TextEvidenceSignal
from faithwatch.text import MARKUP_RULE


class EditSignal(TextEvidenceSignal):
    """Emits :data:`~faithwatch.alignment.edits.EDIT_FEATURES` for each sentence."""

    name = "edits"
    features = EDIT_FEATURES

    def make_scorer(self) -> EditScorer:
        """The near-copy edit scorer."""
        return EditScorer()

    @property
    def version(self) -> str:
        """The meaning of the features: the rules' :data:`~faithwatch.alignment.edits.EDITS_VERSION` and the markup
        left out (:data:`~faithwatch.text.MARKUP_RULE`)."""
        return f"{EDITS_VERSION}+{MARKUP_RULE}"
