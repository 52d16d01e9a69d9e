#!/usr/bin/env bash
# Rebuilds the NLI adapter shipped in src/faithwatch/nli/minilm (the `nli-minilm` alignment scorer).
# Deterministic given the seed and the thread count (2 threads here; bf16 autocast where the CPU has it).
# Needs ../shared/data/nli (or FAITHWATCH_DATA). About 75 min on 2 CPU cores; resumable: re-running it after an
# interruption continues from the last checkpoint in $OUT/checkpoint.
# Then evaluates on every NLI dev set and records the figures in the model card.
set -euo pipefail
cd "$(dirname "$0")/.."
FW="${FW:-$([ -x .venv/bin/faithwatch ] && echo .venv/bin/faithwatch || echo faithwatch)}"
OUT="${OUT:-build/nli-minilm}"
"$FW" train-nli --out "$OUT" --sources licensed --synthetic 9000 --epochs 3 --batch-size 32 --lr 5e-4 \
  --max-length 256 --lora-r 32 --seed 13 --threads 2
rm -rf src/faithwatch/nli/minilm
cp -r "$OUT" src/faithwatch/nli/minilm
"$FW" eval-nli --record --report docs/results/nli
