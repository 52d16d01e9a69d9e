#!/usr/bin/env bash
# Run THERE (the GPU machine; carry .gpu and .whl, made by pack.sh and faith_tune_loo.py export): the LOO runs of
# faith_tune.py, every (config, held-out set) in parallel on one GPU. Leaves scores_<config>.json, the adapters
# trained on every set (adapter_<config>.tgz) and ft.log in $OUT.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD/src || exit 1
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
mkdir -p /tmp/base /tmp/data/nli /tmp/ft
cp .gpu/base/*.json .gpu/base/vocab.txt /tmp/base/
python3 training/device/dequant.py .gpu/base/model8.safetensors /tmp/base/model.safetensors || exit 1
gunzip -c .gpu/data/nli/train.jsonl.gz > /tmp/data/nli/train.jsonl
FT="python3 training/device/faith_tune.py"
$FT prepare > $OUT/ft.log 2>&1 || { tail -30 $OUT/ft.log; exit 1; }
pids=()
for config in ${CONFIGS:-A B}; do
  for held in ${HELD:-faithbench qags-cnndm begin-dev ragtruth-qa ragtruth-summary q2-wow all}; do
    (timeout ${FOLD_TIMEOUT:-380} $FT fold --config $config --held $held > /tmp/ft/$config-$held.log 2>&1) &
    pids+=($!)
  done
done
wait "${pids[@]}"
cat /tmp/ft/*.log | grep -v -i "warn" >> $OUT/ft.log
$FT collect --out $OUT >> $OUT/ft.log 2>&1
for d in /tmp/ft/adapter_*; do [ -d "$d" ] && tar -C /tmp/ft -czf $OUT/$(basename $d).tgz $(basename $d); done
grep -a "prepare\|done\|scores_\|Error\|error" $OUT/ft.log
nvidia-smi --query-gpu=name,memory.used --format=csv
