#!/usr/bin/env bash
# Rebuilds the detector shipped in src/faithwatch/detectors/default for the embedded SmolLM2-135M-Instruct.
# Deterministic given the seed: features come from teacher forcing (greedy-free), the LID bank sample and the
# aggregator use --seed. Needs ../shared/data (or FAITHWATCH_DATA). Features are cached: a re-run takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
KIND="${KIND:-lr}"
SEED="${SEED:-0}"
rm -rf src/faithwatch/detectors/default
faithwatch train --data faithbench,qags-cnndm,begin-dev --detector "$KIND" --lens span --seed "$SEED" \
  --out src/faithwatch/detectors/default
