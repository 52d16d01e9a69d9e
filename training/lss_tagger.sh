#!/usr/bin/env bash
# Rebuilds the LSS tagger shipped in src/faithwatch/nli/lss_tagger (`faithwatch lss --scorer lss-tagger`).
# Trains on lss-dev's human LSS annotations (CC0): first a 5-fold cross-validation whose out-of-fold figures are
# the honest ones (written to docs/results/lss-tagger and recorded in the artifact), then the final model on every
# pair. Half the training pairs also give a word-labelled synthetic example from their reference (a sentence
# copied, or with one number or name changed; made per fold from its training pairs only). About 65 min on 2 CPU
# cores (5 folds + the final fit, about 10 min each). Deterministic given the seed and the thread count.
# Resumable: finished folds are cached in $OUT/cv. Starts from the shipped nli-minilm, so retraining the NLI
# adapter means retraining this too (loading refuses a tagger made on another NLI adapter).
set -euo pipefail
cd "$(dirname "$0")/.."
FW="${FW:-$([ -x .venv/bin/faithwatch ] && echo .venv/bin/faithwatch || echo faithwatch)}"
OUT="${OUT:-build/lss-tagger}"
OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" "$FW" train-lss-tagger --out "$OUT" --cv 5 --epochs 4 --batch-size 16 \
  --lr 5e-4 --lora-r 16 --seed 13 --synthetic 0.5 --threads 2 --device "${DEVICE:-cpu}" --report docs/results/lss-tagger
rm -rf src/faithwatch/nli/lss_tagger
mkdir -p src/faithwatch/nli/lss_tagger
cp "$OUT"/adapter_model.safetensors "$OUT"/adapter_config.json "$OUT"/faithwatch_lss_tagger.json \
  src/faithwatch/nli/lss_tagger/
