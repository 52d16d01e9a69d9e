#!/usr/bin/env bash
# Rebuilds the detector shipped in src/faithwatch/detectors/default for the embedded SmolLM2-135M-Instruct.
# Deterministic given the seed. Needs ../shared/data (or FAITHWATCH_DATA) and training/data. Features are cached,
# so a re-run takes a minute; the first run teacher-forces ~3,000 examples (about 3 h on 2 CPU cores).
#
# The recipe (training/recipe.json) was chosen by `faithwatch select` over the same six data sets: the candidate
# with the best worst-case leave-one-data-set-out AUROC gain over align_score alone (table:
# docs/results/selection.csv). SELECT=1 re-runs the selection first.
# Calibration and the threshold come from out-of-fold predictions (each data set predicted by the recipe trained
# on the other five).
set -euo pipefail
cd "$(dirname "$0")/.."
FW="${FW:-$([ -x .venv/bin/faithwatch ] && echo .venv/bin/faithwatch || echo faithwatch)}"
SEED="${SEED:-0}"
ALIGN="${ALIGN:-nli-minilm+lexical+embedding}"
DATA="faithbench,qags-cnndm,begin-dev,training/data/ragtruth-qa.jsonl,training/data/ragtruth-summary.jsonl"
DATA="$DATA,training/data/q2-wow.jsonl"
if [ "${SELECT:-0}" = "1" ]; then
  "$FW" select --data "$DATA" --alignment "$ALIGN" --seed "$SEED" --out training/recipe.json \
    --table docs/results/selection.csv
fi
tmp="$(mktemp -d)"
"$FW" train --data "$DATA" --recipe training/recipe.json --lens span --seed "$SEED" --alignment "$ALIGN" \
  --out "$tmp/default"
rm -rf src/faithwatch/detectors/default
mv "$tmp/default" src/faithwatch/detectors/default
chmod -R a+rX src/faithwatch/detectors/default
rmdir "$tmp"
