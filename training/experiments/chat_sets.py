"""Summaries of chats no part of faithwatch has seen, for measurement only: FacEval and DialSummEval (scratch).

* **FacEval** (Wang et al., "Analyzing and Evaluating Faithfulness in Dialogue Summarization", EMNLP 2022): 750
  summaries of 150 SAMSum chats (one human reference and four BART models each) annotated for factual errors (wrong
  subject or object, pronoun, negation, particulars, hallucination, other); 294 have at least one. No span is
  marked: an unfaithful summary keeps only its response label. `BinWang28/FacEval`, MIT licensed.
* **DialSummEval** (Gao & Wan, NAACL 2022): 1,400 summaries of 100 SAMSum chats (the reference and 13 systems,
  extractive ones too), each rated for consistency 1–5 by three annotators. Binarised as fixed before any run: mean
  rating at most 3 unfaithful, at least 4 faithful, the 333 in between left out. `kite99520/DialSummEval`, no licence
  stated.

The dialogues are SAMSum's (CC BY-NC-ND 4.0), so the converted files are written under ``build/`` and never
committed. Neither is one of the held-out sets faithwatch is judged on (QAGS-XSum, SummEdits, BEGIN test, LSS test);
SummEdits' chat domain also draws on SAMSum dialogues, with other summaries and annotators, so these sets measure
and never train or tune.

    fetch github:BinWang28/FacEval and github:kite99520/DialSummEval   (the /work/.library fetch tool), then
    python training/experiments/chat_sets.py [MIRROR]   # build/extra-data/faceval.jsonl, dialsummeval.jsonl
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "extra-data"
FACEVAL = ("BinWang28+FacEval", "548f7591836b5cb096462e07051927eaa6107eba", "human_result/FacEval_human_result.csv")
DIALSUMMEVAL = ("kite99520+DialSummEval", "667118e10ae69ef8cbc5cbddec0ce91b5c9c6187",
                "annotation_campus/human_judgment.jsonl")
QUESTION = "Write a short summary of the dialogue in the context."
INSTRUCTION = "Summarize the dialogue. Use only information stated in the context."


def _show(mirror: Path, source: tuple[str, str, str]) -> str:
    repo, rev, path = source
    return subprocess.run(["git", f"--git-dir={mirror / repo / 'repo'}", "show", f"{rev}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def _row(rid: str, context: str, summary: str, label: int, model: str) -> dict:
    row = {"id": rid, "context": context, "question": QUESTION, "response": summary, "instruction": INSTRUCTION,
           "label": label, "source_model": model}
    if not label:
        row["spans"] = []  # every sentence of a faithful summary is faithful
    return row


def faceval(mirror: Path) -> list[dict]:
    """FacEval's rows: a summary is unfaithful when the annotation found any error."""
    return [_row(f"faceval-{r['DocID']}-{r['Model'].replace(' ', '_')}", r["Dialogue"], r["Summary"],
                 {"yes": 1, "no": 0}[r["w/ Error"].strip()], r["Model"])
            for r in csv.DictReader(io.StringIO(_show(mirror, FACEVAL)))]


def dialsummeval(mirror: Path) -> list[dict]:
    """DialSummEval's rows, binarised by mean consistency (<= 3 unfaithful, >= 4 faithful, else left out); turns
    separated by "|" become lines."""
    out = []
    for line in _show(mirror, DIALSUMMEVAL).splitlines():
        r = json.loads(line)
        mean = sum(a["consistency"] for a in r["annotations"]) / len(r["annotations"])
        if 3 < mean < 4:
            continue
        dialogue = "\n".join(t.strip() for t in r["dialogue"].split("|") if t.strip())
        out.append(_row(f"dialsummeval-{r['id']}-{r['model_id']}", dialogue, r["summary"], int(mean <= 3),
                        r["model_id"]))
    return out


def main(mirror: Path) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, rows in (("faceval", faceval(mirror)), ("dialsummeval", dialsummeval(mirror))):
        if len({r["id"] for r in rows}) != len(rows):
            raise SystemExit(f"{name}: duplicate ids")
        path = OUT / f"{name}.jsonl"
        with path.open("w", encoding="utf-8") as f:
            f.writelines(json.dumps(x, ensure_ascii=False) + "\n" for x in rows)
        print(f"{path}: {len(rows)} summaries, {sum(x['label'] for x in rows)} unfaithful (response labels only)")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror"))
