"""How often English text is taken for another language (``faithwatch.text.other_language``): every context and
response of the twelve sets (``edits_dump.SETS``) and every premise and hypothesis of the NLI pairs
(``nli_edits.FILES``), all English. Prints the count noted per source and each text noted.

    FAITHWATCH_DATA=../shared/data PYTHONPATH=src:training/experiments python training/experiments/language_scan.py

Run from the repository root; the CLIFF sets need ``training/experiments/cliff_sets.py`` first.
"""

from __future__ import annotations

from collections import Counter


def main() -> None:
    """Scan the sets, then the NLI pairs, and print what reads as another language."""
    from edits_dump import SETS
    from nli_edits import FILES, pairs

    from faithwatch.data.loaders import load_dataset
    from faithwatch.text import other_language

    noted: Counter[str] = Counter()
    total = 0

    def scan(source: str, text: str) -> None:
        nonlocal total
        total += 1
        if language := other_language(text):
            noted[source] += 1
            print(f"  {source}: {language}: {text[:120]!r}")

    for name in SETS:
        for e in load_dataset(name, questionable="faithful", generic="faithful"):
            scan(name, e.context)
            scan(name, e.response)
    for name in FILES:
        for pair in pairs(name):
            scan(f"nli/{name}", pair["premise"])
            scan(f"nli/{name}", pair["hypothesis"])
    print(f"{sum(noted.values())} of {total} English texts read as another language", dict(noted))


if __name__ == "__main__":
    main()
