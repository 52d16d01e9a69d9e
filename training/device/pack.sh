#!/usr/bin/env bash
# Run HERE, in the repo root: packs what the GPU machine needs into .gpu/ and .whl/ (both git-ignored via
# .git/info/exclude), within the device tool's 64 MiB: the base encoder in fp16 (45 MB), the gzipped NLI
# train file and the MNLI-mismatched dev sets, QAGS, and wheels of the two pure-Python packages missing there.
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
from safetensors.torch import load_file, save_file
t = load_file(f"{sys.argv[1]}/model.safetensors")
save_file({k: v.half().contiguous() for k, v in t.items()}, ".gpu/base/model16.safetensors", metadata={"format": "pt"})
PYEOF
for f in train dev_mnli_mismatched_3way dev_mnli_mismatched_binary; do gzip -c "$DATA/nli/$f.jsonl" > .gpu/data/nli/$f.jsonl.gz; done
cp "$DATA/qags-cnndm/mturk_cnndm.jsonl" .gpu/data/qags-cnndm/
cp training/device/run.sh training/device/qags_quick_auroc.py .gpu/
for pkg in pysbd platformdirs; do
  $PY -m pip download -q --no-deps -d .whl "$pkg==$($PY -c "import importlib.metadata as m; print(m.version('$pkg'))")"
done
du -sh .gpu .whl
