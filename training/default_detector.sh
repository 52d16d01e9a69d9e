#!/usr/bin/env bash
# Rebuilds the detector shipped in src/faithwatch/detectors/default for the embedded SmolLM2-135M-Instruct.
# Deterministic given the seed. Needs ../shared/data (or FAITHWATCH_DATA). Features are cached, so a re-run takes
# seconds; the first run teacher-forces ~1,400 examples (about 45 min on 2 CPU cores).
# Following paper 000 A.1, LID is left out: two of the three data sets are summarisation, where LID did not help
# (measured here too: leave-one-data-set-out AUROC on QAGS 0.80 -> 0.77 with LID).
# align_score comes from the default scorer, nli-minilm+lexical+embedding (with lexical+embedding, the previous
# default, the leave-one-data-set-out AUROC was 0.753 on average instead of 0.779; docs/nli.md).
set -euo pipefail
cd "$(dirname "$0")/.."
FW="${FW:-$([ -x .venv/bin/faithwatch ] && echo .venv/bin/faithwatch || echo faithwatch)}"
KIND="${KIND:-lr}"
SEED="${SEED:-0}"
ALIGN="${ALIGN:-nli-minilm+lexical+embedding}"
tmp="$(mktemp -d)"
"$FW" train --data faithbench,qags-cnndm,begin-dev --detector "$KIND" --no-lid --lens span --seed "$SEED" \
  --alignment "$ALIGN" \
  --out "$tmp/default"
rm -rf src/faithwatch/detectors/default
mv "$tmp/default" src/faithwatch/detectors/default
chmod -R a+rX src/faithwatch/detectors/default
rmdir "$tmp"
