#!/usr/bin/env bash
# Run HERE, in the repo root: packs what the GPU machine needs into .gpu/ and .whl/ (both git-ignored via
# .git/info/exclude), within the device tool's 64 MiB (the tracked tree travels too, ~27 MB): the base encoder in
# int8 (23 MB; training/device/dequant.py rebuilds fp32 there), the gzipped NLI train file and the MNLI-mismatched
# dev sets, QAGS, and wheels of the packages the GPU image lacks (peft: the adapter's config needs peft >= 0.21;
# pydantic and its dependencies, which faithwatch.claims imports; pydantic_core is a cp312 x86-64 build).
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA="${FAITHWATCH_DATA:-../shared/data}"
PY=.venv/bin/python
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || printf '/.gpu/\n/.whl/\n' >> .git/info/exclude
mkdir -p .gpu/base .gpu/data/nli .gpu/data/qags-cnndm .whl
BASE=$($PY -c "from faithwatch.nli.model import default_base_dir; print(default_base_dir())")
cp "$BASE"/{config.json,tokenizer.json,tokenizer_config.json,special_tokens_map.json,vocab.txt} .gpu/base/
$PY - "$BASE" <<'PYEOF'
import sys
import torch
from safetensors.torch import load_file, save_file
out = {}
for k, v in load_file(f"{sys.argv[1]}/model.safetensors").items():
    if v.dim() == 2:  # int8 with one absmax scale per row; training/device/dequant.py rebuilds fp32 there
        s = v.abs().amax(1, keepdim=True).clamp(min=1e-12) / 127
        out[k + ".q"], out[k + ".s"] = torch.round(v / s).to(torch.int8).contiguous(), s.squeeze(1).half().contiguous()
    else:
        out[k] = v.half().contiguous()
save_file(out, ".gpu/base/model8.safetensors", metadata={"format": "pt"})
PYEOF
for f in train dev_mnli_mismatched_3way dev_mnli_mismatched_binary; do gzip -c "$DATA/nli/$f.jsonl" > .gpu/data/nli/$f.jsonl.gz; done
cp "$DATA/qags-cnndm/mturk_cnndm.jsonl" .gpu/data/qags-cnndm/
mkdir -p .gpu/data/lss-dev && cp "$DATA/lss-dev/LSS_dev.csv" .gpu/data/lss-dev/  # for tagger_sweep.sh
cp training/device/run.sh training/device/qags_quick_auroc.py training/device/dequant.py .gpu/
# rouge_score (for tagger_sweep.sh) has no wheel: its pure-Python package is copied from this environment
RS=$($PY -c "import os, rouge_score; print(os.path.dirname(rouge_score.__file__))")
mkdir -p .gpu/site && rm -rf .gpu/site/rouge_score && cp -r "$RS" .gpu/site/ && rm -rf .gpu/site/rouge_score/__pycache__
version() { $PY -c "import importlib.metadata as m; print(m.version('$1'))"; }
for pkg in pysbd platformdirs peft nltk pydantic annotated-types typing-inspection typing_extensions; do
  $PY -m pip download -q --no-deps -d .whl "$pkg==$(version $pkg)"
done
$PY -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl "pydantic_core==$(version pydantic_core)"
du -sh .gpu .whl
# what travels: the tracked tree, .gpu and .whl, at most 64 MiB together
total=$(( $(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1) + $(du -sb .gpu .whl | awk '{s+=$1} END {print s}') ))
echo "travels: $((total / 1048576)) MiB of 64"
if [ $total -gt 67108864 ]; then
  echo "over the limit: for the call, untrack docs/results (git rm -r -q --cached docs/results; echo /docs/results/ >>"
  echo ".git/info/exclude), and afterwards restore it (git reset -q -- docs/results; drop the line from the exclude file)"
  echo "commit nothing in between: a commit then would delete docs/results"
fi
