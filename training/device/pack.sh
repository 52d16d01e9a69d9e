#!/usr/bin/env bash
# Run HERE, in the repo root: packs what the GPU machine needs into .gpu/ and .whl/ (both git-ignored via
# .git/info/exclude), within the device tool's 64 MiB (the tracked tree travels too, ~33 MB): the base encoder in
# int8 (23 MB; training/device/dequant.py rebuilds fp32 there), the gzipped NLI train file and the MNLI-mismatched
# dev sets, QAGS, and wheels of three pure-Python packages (peft: the adapter's config needs peft >= 0.21).
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
cp training/device/run.sh training/device/qags_quick_auroc.py training/device/dequant.py .gpu/
for pkg in pysbd platformdirs peft; do
  $PY -m pip download -q --no-deps -d .whl "$pkg==$($PY -c "import importlib.metadata as m; print(m.version('$pkg'))")"
done
du -sh .gpu .whl
