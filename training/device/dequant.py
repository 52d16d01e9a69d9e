"""Rebuild the fp32 base encoder from pack.sh's int8 copy (per-row absmax; 1-D tensors kept in fp16)."""

import sys

from safetensors.torch import load_file, save_file

src, dst = sys.argv[1], sys.argv[2]
t = load_file(src)
out = {}
for k, v in t.items():
    if k.endswith(".q"):
        out[k[:-2]] = (v.float() * t[k[:-2] + ".s"].float()[:, None]).contiguous()
    elif not k.endswith(".s"):
        out[k] = v.float().contiguous()
save_file(out, dst, metadata={"format": "pt"})
