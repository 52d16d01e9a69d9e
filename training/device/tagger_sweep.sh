#!/usr/bin/env bash
# Run THERE (the GPU machine; carry .gpu and .whl, after training/device/pack.sh here, which also packs lss-dev):
# every configuration of tagger_sweep.py at seeds 13 and 14, in parallel on one GPU; leaves $OUT/sweep.tgz (the
# out-of-fold rows and each fold's cache) and $OUT/sweep.log. Back here: tar -xzf sweep.tgz -C DIR, then
# python training/device/tagger_sweep.py summarize DIR. A dry run here: SKIP_PIP=1 DEVICE=cpu LIMIT=40 CONFIGS=base.
set -u
export PYTHONPATH=/tmp/site:$PWD/src:$PWD/.gpu/site  # .gpu/site: rouge_score (no wheel), copied from a venv here
[ -n "${SKIP_PIP:-}" ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || exit 1
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
mkdir -p /tmp/base /tmp/data/lss-dev /tmp/sweep
cp .gpu/base/*.json .gpu/base/vocab.txt /tmp/base/
python3 training/device/dequant.py .gpu/base/model8.safetensors /tmp/base/model.safetensors || exit 1
cp .gpu/data/lss-dev/* /tmp/data/lss-dev/
for c in ${CONFIGS:-base e8 lr1e3 lr2e4 r64 syn1}; do for s in 13 14; do
  (timeout ${SWEEP_TIMEOUT:-400} python3 training/device/tagger_sweep.py run --config $c --seed $s --data /tmp/data \
     --base /tmp/base --out /tmp/sweep --device ${DEVICE:-cuda} ${LIMIT:+--limit $LIMIT --epochs 1} 2>&1 \
     | grep -v Warning | sed -u "s/^/[$c-$s] /" >> $OUT/sweep.log) &
done; done
wait
tar -C /tmp/sweep -czf $OUT/sweep.tgz .
grep -a "done\|Error\|error" $OUT/sweep.log | tail -20
python3 training/device/tagger_sweep.py summarize /tmp/sweep --data /tmp/data --n-boot 20
