"""Dialogue summaries no part of faithwatch has seen, for measurement only: FacEval's human annotations (scratch).

FacEval (Wang et al., "Analyzing and Evaluating Faithfulness in Dialogue Summarization", EMNLP 2022) annotated 750
summaries of 150 SAMSum chat dialogues (one human reference and four BART models each) for factual errors: wrong
subject or object, pronoun, negation, particulars, hallucination, other; 294 have at least one. The repository is MIT
licensed, but the dialogues are SAMSum's (CC BY-NC-ND 4.0), so the converted file is written under ``build/`` and
never committed. No span is marked: an unfaithful summary keeps only its response label. It is none of the held-out
sets faithwatch is judged on (QAGS-XSum, SummEdits, BEGIN test, LSS test); SummEdits' chat domain also draws on
SAMSum dialogues, with other summaries and other annotators, so this set measures and never trains or tunes.

    fetch github:BinWang28/FacEval   (the /work/.library fetch tool), then
    python training/experiments/faceval_set.py [MIRROR]     # writes build/extra-data/faceval.jsonl
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "extra-data" / "faceval.jsonl"
REPO, REV = "BinWang28+FacEval", "548f7591836b5cb096462e07051927eaa6107eba"
PATH = "human_result/FacEval_human_result.csv"
QUESTION = "Write a short summary of the dialogue in the context."
INSTRUCTION = "Summarize the dialogue. Use only information stated in the context."


def main(mirror: Path) -> None:
    text = subprocess.run(["git", f"--git-dir={mirror / REPO / 'repo'}", "show", f"{REV}:{PATH}"], check=True,
                          capture_output=True, text=True)
    rows = []
    for r in csv.DictReader(io.StringIO(text.stdout)):
        label = {"yes": 1, "no": 0}[r["w/ Error"].strip()]
        row = {"id": f"faceval-{r['DocID']}-{r['Model'].replace(' ', '_')}", "context": r["Dialogue"],
               "question": QUESTION, "response": r["Summary"], "instruction": INSTRUCTION, "label": label,
               "source_model": r["Model"]}
        if not label:
            row["spans"] = []
        rows.append(row)
    if len({r["id"] for r in rows}) != len(rows):
        raise SystemExit("duplicate ids")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as f:
        f.writelines(json.dumps(x, ensure_ascii=False) + "\n" for x in rows)
    print(f"{OUT}: {len(rows)} summaries, {sum(x['label'] for x in rows)} unfaithful (response labels only)")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror"))
