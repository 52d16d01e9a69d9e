"""Sentence-vs-context alignment scorers (the "semantic alignment" signal, ``align_score`` in [0, 1]).

Use :func:`get_scorer` to build one from a spec string:

* ``"lexical"`` - surface overlap (numbers, entities, content words, bigrams), no model;
* ``"embedding"`` - max cosine similarity with the context's sentences (packaged MiniLM);
* ``"nli-minilm"`` - max entailment probability of faithwatch's shipped MiniLM NLI model over sliding
  context windows (offline; ``"nli-minilm:<artifact-dir>"`` for another trained adapter);
* scorer names joined with ``+`` give their equally weighted mean: ``"nli-minilm+lexical+embedding"`` is the
  default (it checks support, and beat ``"lexical+embedding"`` and ``"nli-minilm"`` alone on QAGS, BEGIN and
  FaithBench; docs/nli.md); ``"lexical+embedding"`` is the model-free relatedness baseline;
* ``"nli:<path-or-hub-id>"`` - max entailment probability of a Hugging Face NLI model over context chunks;
* ``"none"`` - no alignment scoring (``get_scorer`` returns ``None``).
"""

from __future__ import annotations

from faithwatch import registry
from faithwatch.alignment.base import AlignmentScorer, validate_inputs
from faithwatch.alignment.combined import CombinedScorer
from faithwatch.alignment.embedding import EmbeddingScorer
from faithwatch.alignment.lexical import NEUTRAL_SCORE, LexicalScorer
from faithwatch.alignment.minilm import MiniLMNLIScorer
from faithwatch.alignment.nli import NLIScorer
from faithwatch.errors import InputError

#: the scorer used when the user does not choose one
DEFAULT_SCORER = "nli-minilm+lexical+embedding"
#: the default scorer of the alignment claim checker (``--checker alignment``, /v1/check) and of LSS
CHECK_SCORER = "lexical+embedding"
#: named combinations offered beside the single scorers (any ``a+b`` of registered names is accepted)
PRESETS = ("nli-minilm+lexical+embedding", "lexical+embedding")

registry.scorers.add("nli-minilm", lambda arg, device: MiniLMNLIScorer(arg, device=device) if arg
                     else MiniLMNLIScorer(device=device), "faithwatch's shipped MiniLM NLI model (offline)",
                     arg="optional", arg_hint="[:<dir>]", nli=True)
registry.scorers.add("lexical", lambda arg, device: LexicalScorer(), "surface overlap, no model")
registry.scorers.add("embedding", lambda arg, device: EmbeddingScorer(device=device),
                     "max cosine similarity with the context's sentences (packaged MiniLM)")
registry.scorers.add("nli", lambda arg, device: NLIScorer(arg, device=device),
                     "a Hugging Face NLI model, max entailment over context chunks", arg="required",
                     arg_hint=":<model>", nli=True)
registry.scorers.add("none", lambda arg, device: None, "no alignment scoring", combinable=False)

__all__ = [
    "CHECK_SCORER",
    "DEFAULT_SCORER",
    "NEUTRAL_SCORE",
    "PRESETS",
    "AlignmentScorer",
    "CombinedScorer",
    "EmbeddingScorer",
    "LexicalScorer",
    "MiniLMNLIScorer",
    "NLIScorer",
    "get_scorer",
    "is_nli_spec",
    "parse_spec",
    "plain_specs",
    "spec_help",
    "validate_inputs",
]


def parse_spec(spec: str) -> list[tuple[str, str | None]]:
    """Split a scorer spec into ``(name, argument)`` parts: ``"nli-minilm+lexical"``, ``"nli:<model>"``,
    ``"nli-minilm:<dir>"``. Names are case-insensitive, arguments (paths, hub ids) are kept as given.

    Raises :class:`~faithwatch.errors.InputError` (a ``ValueError``) for an unknown name or a missing argument.
    """
    if not isinstance(spec, str):
        raise TypeError(f"scorer spec must be a str, got {type(spec).__name__}")
    pieces = [p.strip() for p in spec.strip().split("+")]
    if len(pieces) > 1 and any(not p for p in pieces):
        raise InputError(f"bad combined scorer {spec!r}: join two or more scorer names with '+'")
    parts = []
    for piece in pieces:
        name, _, arg = piece.partition(":")
        name, arg = name.strip().lower(), arg.strip()
        if name not in registry.scorers:
            raise InputError(f"unknown alignment scorer {spec!r}; valid: {spec_help(', ')}")
        entry = registry.scorers.get(name)
        if entry.options.get("arg") == "required" and not arg:
            raise InputError(f"the {name!r} scorer needs a model, e.g. '{name}:/path/to/model' or '{name}:<hub-id>'")
        if arg and not entry.options.get("arg"):
            raise InputError(f"the {name!r} scorer takes no argument (got {piece!r})")
        if len(pieces) > 1 and entry.options.get("combinable") is False:
            raise InputError(f"bad combined scorer {spec!r}: {name!r} cannot be combined")
        parts.append((name, arg or None))
    return parts


def get_scorer(spec: str = DEFAULT_SCORER, device: str = "cpu") -> AlignmentScorer | None:
    """Build the alignment scorer named by ``spec`` (see :func:`spec_help`); ``"none"`` gives ``None``.

    Scorer names joined with ``+`` give their equally weighted mean. Raises ``ValueError`` (an ``InputError``) for
    an unknown spec or an ``nli:`` spec without a model.
    """
    parts = parse_spec(spec)
    built = [registry.scorers.get(name).obj(arg, device) for name, arg in parts]
    return built[0] if len(built) == 1 else CombinedScorer(built)


def is_nli_spec(spec: str) -> bool:
    """Whether ``spec`` names one three-way NLI scorer (usable by the claims NLI checker)."""
    parts = parse_spec(spec)
    return len(parts) == 1 and bool(registry.scorers.get(parts[0][0]).options.get("nli"))


def plain_specs() -> tuple[str, ...]:
    """Specs that need no argument from the user (offered to HTTP clients, and as cache donors)."""
    singles = [n for n in registry.scorers.names() if registry.scorers.get(n).options.get("arg") != "required"
               and n != "none"]
    return tuple(dict.fromkeys([*PRESETS, *singles]))


def spec_help(sep: str = " | ") -> str:
    """Every accepted spec for help texts: the presets, then each registered scorer (with its argument)."""
    return sep.join(dict.fromkeys([*PRESETS, *registry.scorers.choices(sep="\0").split("\0")]))
