"""The hand probe of docs/claims.md ("scored once more against the passages joined"): six sentences, each taking
one fact from each of two passages (two right, four wrong), checked by the shipped detector.

    OMP_NUM_THREADS=2 python training/experiments/joined_passages.py
"""

from __future__ import annotations

from faithwatch.claims.checking import CheckerSpec, get_checker
from faithwatch.claims.types import Claim

PASSAGES = ["Acme reported revenue of $4.2bn for 2025, up 8%. Its chief executive, Dana Ortiz, said margins improved. "
            "The company employs 12,000 people in 14 countries.",
            "Acme was founded in 1990 in Leeds by two engineers."]
#: (sentence, right?)
PROBES = [("Acme was founded in 1990 and has 12,000 staff.", True),
          ("Acme was founded in 1990 and has 15,000 staff.", False),
          ("Acme, founded in Leeds, employs 12,000 people.", True),
          ("Acme, founded in York, employs 12,000 people.", False),
          ("Dana Ortiz founded Acme in 1990.", False),
          ("Acme was founded in 1995 and employs 12,000 people.", False)]


def main() -> None:
    """Print each probe's label and detector score."""
    checker = get_checker(CheckerSpec(kind="detector"))
    for text, right in PROBES:
        (verdict,) = checker.check([Claim(text, "sentence", (0, len(text)))], PASSAGES)
        print(f"{verdict.label:<13} {verdict.scores['detector_score']:.3f} {'right' if right else 'wrong'}  {text}")


if __name__ == "__main__":
    main()
