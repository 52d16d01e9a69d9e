"""Issue 12, transfer (item 4, number consistency): a number the context holds, but next to another noun (scratch).

The lexical evidence counts a number as supported when the context holds it anywhere, so "King Henry VIII had two
wives." passes against "He had six wives. Two of them, Anne Boleyn and Catherine Howard, were beheaded." (fresh9:
the detector passed it at 0.67, and FOD returned it). This script adds one feature, ``num_misbound``: the numbers of
the sentence that the context holds, whose noun (the first content word within two words after the number in the
sentence, "two wives" -> "wives") the context also holds, but never in a sentence that holds that number. A noun the
context lacks is left to ``novel_content``; a number the context lacks to ``novel_numbers``. Sign-constrained: more
mis-bound numbers, less faithful. It prints how often the feature fires per set, the unfaithful share where it
fires, and LOO AUROC of the shipped recipe with and without it (the same folds and caches as
``faithwatch eval --text-only --transfer``).

**The rule, fixed before the first run:** the feature is worth building into the ``edits`` family only if, with
it, the mean LOO AUROC over the six sets does not fall, no set falls by more than 0.005, and the worst-case gain
over ``align_score`` and over the best single signal (the issue's criterion) does not fall; then, on the retrained
detector, the blatant suite must still flag >= 90% and pass >= 85%.

    python training/experiments/number_binding.py
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

# sibling scripts, on sys.path when this one runs
from aggregator_variants import print_loo, shipped_recipe, with_extra_family
from faith_tune_loo import tables_and_data

from faithwatch.text import NUMBER_WORDS, is_stop, join_thousands, split_sentences, stem, strip_preamble

ROOT = Path(__file__).resolve().parents[2]
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[A-Za-z][\w'-]*")


def _tokens(text: str) -> list[str]:
    """Lower-case tokens; numbers as normalised digits ("3,400" -> "3400", "two" -> "2")."""
    out = []
    for tok in _TOKEN.findall(join_thousands(text)):
        low = tok.lower()
        if tok[0].isdigit():
            out.append(tok.replace(",", "").rstrip("."))
        else:
            out.append(NUMBER_WORDS[low] if low in NUMBER_WORDS and low != "half" else low)
    return out


def _is_number(tok: str) -> bool:
    return tok[0].isdigit()


def _heads(tokens: list[str]) -> list[tuple[str, str]]:
    """(number, stem of its noun): the first content word within two tokens after each number."""
    pairs = []
    for i, tok in enumerate(tokens):
        if not _is_number(tok):
            continue
        for nxt in tokens[i + 1 : i + 3]:
            if _is_number(nxt):
                break
            if not is_stop(nxt) and len(nxt) > 2:
                pairs.append((tok, stem(nxt)))
                break
    return pairs


def misbound(sentence: str, context: str) -> int:
    """How many of ``sentence``'s (number, noun) pairs have both parts in the context but never in one sentence."""
    sentences = [_tokens(s) for s in split_sentences(context)]
    numbers = {t for toks in sentences for t in toks if _is_number(t)}
    stems = {stem(t) for toks in sentences for t in toks if not _is_number(t)}
    together = {(n, stem(t)) for toks in sentences for n in toks if _is_number(n) for t in toks if not _is_number(t)}
    return sum(1 for n, head in set(_heads(_tokens(strip_preamble(sentence))))
               if n in numbers and head in stems and (n, head) not in together)


def main() -> None:
    tables, data, _ = tables_and_data()
    extra: dict[str, pd.DataFrame] = {}
    for name, t in tables.items():
        contexts = {e.id: e.context for e in data[name].examples}
        col = [float(misbound(text, contexts[ex])) for text, ex in zip(t.text, t.example_id, strict=True)]
        extra[name] = t.assign(num_misbound=col)
        fired = extra[name][extra[name].num_misbound > 0]
        print(f"{Path(name).stem:<20} sentences {len(t):>6}  fires {len(fired):>4}  unfaithful where it fires "
              f"{fired.label.mean() if len(fired) else float('nan'):.3f}  (all {t.label.mean():.3f})")
    henry = "King Henry VIII ruled England from 1509 to 1547. He had six wives. Two of them were beheaded."
    print("Henry VIII:", misbound("King Henry VIII had two wives.", henry), misbound("He had six wives.", henry))
    shipped = shipped_recipe()
    print_loo(tables, {"shipped recipe": shipped})
    print_loo(extra, {"shipped recipe + num_misbound": with_extra_family(shipped, "num-binding", "num_misbound", -1)})


if __name__ == "__main__":
    main()
