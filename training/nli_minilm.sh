#!/usr/bin/env bash
# Rebuilds the NLI adapter shipped in src/faithwatch/nli/minilm (the `nli-minilm` alignment scorer).
# DEVICE=cuda trains on a GPU (6 min on one H100); the default, cpu, takes about 2.7 hours on 2 cores (extrapolated).
# WINDOW_SWAPS=1 adds contradictions that swap a number or name for another one of the same premise window (not yet
# trained: docs/nli.md, "Values swapped within the premise").
# Deterministic given the seed and the thread count on CPU; on a GPU, reruns agreed to 3 decimals here.
# Needs ../shared/data/nli (or FAITHWATCH_DATA). Resumable: re-running it after an interruption continues
# from the last checkpoint in $OUT/checkpoint. Then evaluates on every NLI dev set and records the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
FW="${FW:-$([ -x .venv/bin/faithwatch ] && echo .venv/bin/faithwatch || echo faithwatch)}"
OUT="${OUT:-build/nli-minilm}"
"$FW" train-nli --out "$OUT" --sources licensed --synthetic 0 --doc-synthetic 15000 --epochs 6 --batch-size 64 \
  --lr 7e-4 --max-length 256 --lora-r 32 --seed 13 --threads 2 --device "${DEVICE:-cpu}" \
  ${WINDOW_SWAPS:+--doc-window-swaps}
rm -rf src/faithwatch/nli/minilm
cp -r "$OUT" src/faithwatch/nli/minilm
"$FW" eval-nli --record --report docs/results/nli
