"""Rebuild the extra labelled data sets in this folder from snapshots of their public repositories.

Needs the repositories as bare git mirrors (``MIRROR/<owner>+<name>/repo``); CI never runs this: the converted
files are committed next to it. Output: faithwatch's generic JSONL (see docs/datasets.md), one response a line,
``spans`` in the response marking unfaithful text (``"excluded"`` spans are left out of sentence labels).

* ``ragtruth-qa.jsonl`` - RAGTruth (Niu et al., ACL 2024; MIT), QA task (MS MARCO passages), test split, every
  response kept in vectara/FaithJudge. Spans marked ``implicit_true`` (baseless but true) are excluded.
* ``ragtruth-summary.jsonl`` / ``ragtruth-data2txt.jsonl`` - the same for news summaries and Yelp data-to-text,
  300 responses each (a fixed random sample); ``due_to_null`` spans (data2txt) are excluded.
* ``q2-wow.jsonl`` - Q² (Honovich et al., EMNLP 2021; MIT): Wizard-of-Wikipedia responses of two dialogue
  systems, 300 consistent and 300 inconsistent with their knowledge snippet (response-level labels). A first
  turn has no user message; its question is "Let's talk about <topic>.".
* ``begin-dev-cmu.tsv`` / ``begin-dev-tc.tsv`` - BEGIN (Dziri et al., TACL 2022; annotations CC BY 4.0), the
  **development** split of its CMU-DoG (movie articles) and Topical-Chat (CDLA-Sharing 1.0) parts, copied as
  released (BEGIN's own format, read by faithwatch's BEGIN loader). Never the test split: faithwatch is judged on it.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
SOURCES = {
    "ragtruth": ("vectara+FaithJudge", "ca35eb45d0d32cffd5ddc2d6513c4e8342cb9f5d"),
    "q2": ("orhonovich+q-squared", "cab6027dc9a50cf73d80caf0858da05c2323c433"),
    "begin": ("google+BEGIN-dataset", "6e65f0d5a1ed1b9574643a7640ff1678d4e979b5"),
}
#: BEGIN's development files only (its test files are a held-out set faithwatch is judged on)
BEGIN_DEV = {"begin-dev-cmu.tsv": "cmu-dog/begin_dev_cmu.tsv", "begin-dev-tc.tsv": "topicalchat/begin_dev_tc.tsv"}
SAMPLE = {"summary": 300, "data2txt": 300}
QA = "Answer the question using only the information in the context."
INSTRUCTIONS = {
    "qa": (QA, None),
    "summary": ("Summarize the context. Use only information stated in the context.",
                "Write a short summary of the news in the context."),
    "data2txt": ("Write an objective overview of the business from the structured data in the context. Use only "
                 "information stated in the context.", "Write an overview of this local business."),
}
DIALOGUE = "Reply to the message using only the knowledge in the context."


def show(mirror: Path, key: str, path: str) -> str:
    repo, rev = SOURCES[key]
    return subprocess.run(["git", f"--git-dir={mirror / repo / 'repo'}", "show", f"{rev}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def literal(x):
    if isinstance(x, str):
        try:
            return ast.literal_eval(x)
        except (ValueError, SyntaxError):
            return x
    return x


def ragtruth(mirror: Path) -> None:
    for task, (instruction, question) in INSTRUCTIONS.items():
        rows = []
        for line in show(mirror, "ragtruth", f"eval_data/ragtruth_{task}.jsonl").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            src = literal(row["source"])
            if task == "qa":
                q, context = src["question"], src["passages"]
            else:
                q, context = question, src if isinstance(src, str) else json.dumps(src, ensure_ascii=False)
            for i, resp in enumerate(literal(row["responses"])):
                text = resp["response"]
                spans = []
                for lab in resp.get("labels", []):
                    s, e = int(lab["start"]), int(lab["end"])
                    if text[s:e] != lab.get("text", text[s:e]):
                        k = text.find(lab["text"])
                        if k < 0:
                            continue
                        s, e = k, k + len(lab["text"])
                    excluded = bool(lab.get("implicit_true")) or bool(lab.get("due_to_null"))
                    spans.append({"start": s, "end": e, "label": "excluded" if excluded else "unfaithful"})
                if not text.strip() or not context.strip():
                    continue
                rows.append({"id": f"ragtruth-{task}-{row['source_id']}-{resp.get('model')}-{i}",
                             "context": context, "question": q, "response": text, "instruction": instruction,
                             "spans": spans,
                             "label": 1 if any(s["label"] == "unfaithful" for s in spans) else
                             (None if spans else 0),
                             "source_model": resp.get("model")})
        if task in SAMPLE:
            rows = random.Random(0).sample(rows, SAMPLE[task])
        write(f"ragtruth-{task}", rows)


def q2(mirror: Path) -> None:
    rows = []
    for system in ("dodeca", "memnet"):
        for kind, label in (("consistent", 0), ("inconsistent", 1)):
            for r in csv.DictReader(io.StringIO(show(mirror, "q2", f"third_party/data/{system}_{kind}.csv"))):
                # a first turn has no message: the system opens the conversation on the episode's topic
                message = r["message"].strip() or f"Let's talk about {r['topic']}."
                rows.append({"id": f"q2-{system}-{kind}-{r['episode_idx']}-{r['round']}", "context": r["knowledge"],
                             "question": message, "response": r["response"], "instruction": DIALOGUE,
                             "label": label, "source_model": system})
    write("q2-wow", rows)


def begin(mirror: Path) -> None:
    for name, path in BEGIN_DEV.items():
        assert "_dev_" in path, path  # never a test split
        (HERE / name).write_text(show(mirror, "begin", path), encoding="utf-8")
        print(f"{HERE / name}: copied from {path}")


def write(name: str, rows: list[dict]) -> None:
    path = HERE / f"{name}.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({k: v for k, v in r.items() if v is not None}, ensure_ascii=False) + "\n")
    print(f"{path}: {len(rows)} responses, {sum(r.get('label') == 1 for r in rows)} unfaithful")


if __name__ == "__main__":
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror")
    ragtruth(root)
    q2(root)
    begin(root)
