"""Two summarization sets no part of faithwatch has seen, for measurement only: CLIFF's human annotations (scratch).

CLIFF (Cao & Wang, EMNLP 2021) annotated 600 summaries written by BART and PEGASUS, 150 documents each of XSum and
CNN/DM, for factual errors, with the wrong phrases marked. AggreFact (Tang et al., ACL 2023) republishes them with the
documents (`Liyan06/AggreFact`, `data/error_type_mapping/CLIFF_error_types.csv`; that repository states no licence,
so the converted files are written under ``build/`` and never committed). Neither set is one of the held-out sets
faithwatch is judged on (QAGS-XSum, SummEdits, BEGIN test, LSS test). The XSum half is XSum-derived, like QAGS-XSum:
a few of its 150 articles may also be among QAGS-XSum's 239, with other summaries and other annotators; it is used
here to measure, not to train.

Labels: "correct" → faithful (0); otherwise unfaithful (1), with each marked phrase located in the summary as an
unfaithful span. When a marked phrase cannot be found verbatim (case-insensitive), the summary keeps only its
response label (no ``spans``), so that sentence labels are not guessed.

    fetch github:Liyan06/AggreFact   (the /work/.library fetch tool), then
    python training/experiments/cliff_sets.py [MIRROR]     # writes build/extra-data/cliff-{xsum,cnndm}.jsonl
"""

from __future__ import annotations

import ast
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "extra-data"
REPO, REV = "Liyan06+AggreFact", "f0654b245232cd724d5caa5db4950abfb12d795e"
PATH = "data/error_type_mapping/CLIFF_error_types.csv"
QUESTION = "Write a short summary of the news in the context."
INSTRUCTION = "Summarize the context. Use only information stated in the context."


def spans_of(summary: str, marked: str) -> list[dict] | None:
    """Character spans of the marked phrases in ``summary``; None when one is missing."""
    try:
        phrases = ast.literal_eval(marked) if marked else []
    except (ValueError, SyntaxError):
        return None
    out = []
    low = summary.lower()
    for p in phrases:
        p = str(p).strip()
        start = low.find(p.lower()) if p else -1
        if start < 0:
            return None
        out.append({"start": start, "end": start + len(p)})
    return out or None


def main(mirror: Path) -> None:
    text = subprocess.run(["git", f"--git-dir={mirror / REPO / 'repo'}", "show", f"{REV}:{PATH}"], check=True,
                          capture_output=True, text=True).stdout
    rows: dict[str, list[dict]] = {"xsum": [], "cnndm": []}
    unlocated = {"xsum": 0, "cnndm": 0}
    for i, r in enumerate(csv.DictReader(io.StringIO(text))):
        correct = r["error_type"].strip() == "correct"
        row = {"id": f"cliff-{r['origin']}-{r['id']}-{r['model_name']}-{i}", "context": r["doc"], "question": QUESTION,
               "response": r["summ"], "instruction": INSTRUCTION, "label": 0 if correct else 1,
               "source_model": r["model_name"]}
        if correct:
            row["spans"] = []
        else:
            spans = spans_of(r["summ"], r["annotated_span"])
            if spans is None:
                unlocated[r["origin"]] += 1
            else:
                row["spans"] = spans
        rows[r["origin"]].append(row)
    OUT.mkdir(parents=True, exist_ok=True)
    for origin, rs in rows.items():
        path = OUT / f"cliff-{origin}.jsonl"
        with path.open("w", encoding="utf-8") as f:
            f.writelines(json.dumps(x, ensure_ascii=False) + "\n" for x in rs)
        print(f"{path}: {len(rs)} summaries, {sum(x['label'] for x in rs)} unfaithful, "
              f"{unlocated[origin]} of them with a marked phrase not found (response label only)")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror"))
