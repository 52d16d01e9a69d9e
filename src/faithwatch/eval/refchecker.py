"""What can honestly be measured on ``refchecker-annotations`` (paper 002's human labels).

Claim triplets of 2,100 responses (7 LLMs x 3 context settings) with human Entailment / Neutral / Contradiction
labels, but *without* the questions and references. Only descriptive statistics are computed
(:func:`summarize_refchecker`); :data:`REFCHECKER_NOT_EVALUABLE` lists what cannot be evaluated and why.
``faithwatch eval-lss`` reports them next to the LSS evaluation (:func:`faithwatch.eval.lss.run_lss_eval`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from faithwatch.claims.lss import absent_words, split_words
from faithwatch.data.loaders import read_json_list
from faithwatch.errors import InputError

#: the folder of refchecker-annotations under the data root
REFCHECKER_DIR = "refchecker-annotations"
#: the human labels of a triplet
REFCHECKER_LABELS = ("Entailment", "Neutral", "Contradiction")

#: what cannot be evaluated on refchecker-annotations, and why (shown in reports and docs)
REFCHECKER_NOT_EVALUABLE: tuple[tuple[str, str], ...] = (
    ("agreement of an alignment scorer / NLI / LSS with the human labels",
     "the labels judge each triplet against a reference (NQ answer, MS MARCO passages, dolly context) that is not "
     "in the release; scoring the triplet against the response instead measures extraction, not faithfulness"),
    ("LSS score of a response or triplet against its reference",
     "no reference text"),
    ("RefChecker's checker accuracy / macro-F1 (paper 002)",
     "needs the references and a checker's predictions; neither is included"),
    ("the paper's copy rate vs label analysis",
     "copy rate is measured against the context, which is not included"),
    ("inter-annotator agreement",
     "one human label per triplet in this release"),
    ("whether the extracted triplets answer the question",
     "the questions are not included"),
)


def load_refchecker(root: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Load refchecker-annotations (the folder, or the data root holding it).

    Files are ``<setting>/<source>_<model>_answers.json``: a list of ``{"id", "response", "claude2_response_kg":
    [{"triplet": [head, relation, tail], "human_label": "Entailment" | "Neutral" | "Contradiction"}]}``.

    Returns:
        ``(responses, triplets)``: one row per response (``setting``, ``source``, ``model``, ``id``, ``response``,
        ``n_triplets``) and one per triplet (``setting``, ``model``, ``id``, ``head``, ``relation``, ``tail``,
        ``label``).

    Raises:
        InputError: no files, or a file not in this format (the message names the file and entry).
    """
    base = Path(root)
    if (base / REFCHECKER_DIR).is_dir():
        base = base / REFCHECKER_DIR
    files = sorted(base.glob("*/*_answers.json"))
    if not files:
        raise InputError(f"no refchecker-annotations files (<setting>/<source>_<model>_answers.json) under {root}")
    responses, triplets = [], []
    for f in files:
        setting = f.parent.name
        source, _, model = f.name[: -len("_answers.json")].partition("_")
        data = read_json_list(f, "responses")
        for i, item in enumerate(data):
            where = f"{f} entry {i}"
            if not isinstance(item, dict) or "response" not in item or "claude2_response_kg" not in item:
                raise InputError(f"{where}: expected an object with 'response' and 'claude2_response_kg'")
            kg = item["claude2_response_kg"] or []
            if not isinstance(kg, list):
                raise InputError(f"{where}: 'claude2_response_kg' must be a list")
            rid = str(item.get("id", i))
            responses.append({"setting": setting, "source": source, "model": model, "id": rid,
                              "response": str(item["response"] or ""), "n_triplets": len(kg)})
            for j, t in enumerate(kg):
                trip = t.get("triplet") if isinstance(t, dict) else None
                label = t.get("human_label") if isinstance(t, dict) else None
                if not (isinstance(trip, list) and len(trip) == 3):
                    raise InputError(f"{where} triplet {j}: 'triplet' must be [head, relation, tail]")
                if label not in REFCHECKER_LABELS:
                    raise InputError(f"{where} triplet {j}: human_label {label!r} is not one of "
                                     f"{', '.join(REFCHECKER_LABELS)}")
                triplets.append({"setting": setting, "model": model, "id": rid, "head": str(trip[0]),
                                 "relation": str(trip[1]), "tail": str(trip[2]), "label": label})
    tcols = ["setting", "model", "id", "head", "relation", "tail", "label"]
    return pd.DataFrame(responses), pd.DataFrame(triplets, columns=tcols)


def _grounding(triplet: pd.Series, response: str) -> float | None:
    """Share of the triplet's content words found in the response it was extracted from (lexical pre-filter)."""
    words = split_words(" ".join((triplet["head"], triplet["relation"], triplet["tail"])))
    if not response.strip() or not words:
        return None
    return sum(not a for a in absent_words(words, response)) / len(words)


def summarize_refchecker(root: str | Path) -> dict[str, pd.DataFrame]:
    """Descriptive statistics of refchecker-annotations: what can be measured without the references.

    Tables: label distribution and claim granularity per setting; per setting x model the paper's aggregations
    (macro-averaged per-response label ratios, share of responses with a Contradiction, share "non-factual" =
    any Neutral or Contradiction) over responses with at least one triplet; lexical grounding of the triplets in
    their *response* (an extraction check, not a faithfulness measure) per setting and label; and the list of
    what cannot be evaluated (:data:`REFCHECKER_NOT_EVALUABLE`).
    """
    responses, triplets = load_refchecker(root)
    tables: dict[str, pd.DataFrame] = {}

    def label_shares(t: pd.DataFrame) -> dict[str, float]:
        n = len(t)
        return {f"share {lab}": (float((t.label == lab).mean()) if n else None) for lab in REFCHECKER_LABELS}

    rows = []
    for setting, r in [*responses.groupby("setting", sort=True), ("all", responses)]:
        t = triplets if setting == "all" else triplets[triplets.setting == setting]
        rows.append({"setting": setting, "responses": len(r), "responses without triplets": int((r.n_triplets == 0)
                     .sum()), "triplets": len(t), "triplets per response (mean)": float(r.n_triplets.mean()),
                     "median": float(r.n_triplets.median()), "max": int(r.n_triplets.max()), **label_shares(t)})
    tables["refchecker: labels and claim granularity per setting"] = pd.DataFrame(rows)

    rows = []
    for (setting, model), r in responses.groupby(["setting", "model"], sort=True):
        t = triplets[(triplets.setting == setting) & (triplets.model == model)]
        per_resp = t.groupby("id").label.agg(list)
        ratios = {lab: float(np.mean([lbls.count(lab) / len(lbls) for lbls in per_resp])) if len(per_resp) else None
                  for lab in REFCHECKER_LABELS}
        rows.append({
            "setting": setting, "model": model, "responses": len(r), "with triplets": len(per_resp),
            "triplets per response": float(r.n_triplets.mean()),
            **{f"macro {lab} ratio": v for lab, v in ratios.items()},
            "responses with a Contradiction": float(np.mean(["Contradiction" in x for x in per_resp]))
            if len(per_resp) else None,
            "non-factual responses (any Neutral/Contradiction)": float(np.mean(
                [("Contradiction" in x) or ("Neutral" in x) for x in per_resp])) if len(per_resp) else None,
        })
    tables["refchecker: per LLM (responses with triplets; paper 002 aggregations)"] = pd.DataFrame(rows)

    text = {(s, m, i): resp for s, m, i, resp in
            responses[["setting", "model", "id", "response"]].itertuples(index=False)}
    g = triplets.copy()
    g["grounding"] = [_grounding(t, text.get((t["setting"], t["model"], t["id"]), "")) for _, t in g.iterrows()]
    grounded = g.dropna(subset=["grounding"])
    if len(grounded):
        pivot = grounded.pivot_table(index="setting", columns="label", values="grounding", aggfunc="mean")
        pivot = pivot.reindex(columns=[lab for lab in REFCHECKER_LABELS if lab in pivot.columns])
        pivot["all"] = grounded.groupby("setting").grounding.mean()
        tables["refchecker: triplet words found in their own response (extraction check, NOT faithfulness)"] = \
            pivot.reset_index()
    tables["refchecker: not evaluable without the references"] = pd.DataFrame(
        list(REFCHECKER_NOT_EVALUABLE), columns=["what", "why not"])
    return tables
