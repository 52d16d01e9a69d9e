#!/usr/bin/env bash
# Rebuilds the LSS tagger shipped in src/faithwatch/nli/lss_tagger (`faithwatch lss --scorer lss-tagger`).
# Trains on lss-dev's human LSS annotations (CC0): first a 5-fold cross-validation whose out-of-fold figures are
# the honest ones (written to docs/results/lss-tagger and recorded in the artifact), then the final model on every
# pair. About 45 min on 2 CPU cores (5 folds + the final fit, about 8 min each). Deterministic given the seed and
# the thread count. Resumable: finished folds are cached in $OUT/cv. Starts from the shipped nli-minilm, so
# retraining the NLI adapter means retraining this too (loading refuses a tagger made on another NLI adapter).
set -euo pipefail
cd "$(dirname "$0")/.."
FW="${FW:-$([ -x .venv/bin/faithwatch ] && echo .venv/bin/faithwatch || echo faithwatch)}"
OUT="${OUT:-build/lss-tagger}"
OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" "$FW" train-lss-tagger --out "$OUT" --cv 5 --epochs 4 --batch-size 16 \
  --lr 5e-4 --lora-r 16 --seed 13 --threads 2 --device "${DEVICE:-cpu}" --report docs/results/lss-tagger
rm -rf src/faithwatch/nli/lss_tagger
mkdir -p src/faithwatch/nli/lss_tagger
cp "$OUT"/adapter_model.safetensors "$OUT"/adapter_config.json "$OUT"/faithwatch_lss_tagger.json \
  src/faithwatch/nli/lss_tagger/
