#!/usr/bin/env bash
# Run THERE (the GPU machine; carry .gpu and .whl): trains one adapter per "<name>:<train-nli args>" in
# parallel on one GPU, evaluates each on MNLI-mismatched and QAGS, and leaves <name>.tgz (the adapter, as soon as it
# is trained) and the logs of all runs, each line prefixed with its name, in $OUT/runs.log.
# Back here, bind each adapter to the packaged base: python -c "from faithwatch.nli.artifact import
# rebase_artifact; rebase_artifact('<dir>')" (it was trained on the fp16 copy), then re-run eval-nli here.
# With .gpu/ft (faith_tune_loo.py export), each adapter also scores the labelled sets' sentences
# ($OUT/scores_<name>.json) against the shipped adapter's scores (faith_tune.py prepare): read them
# here with faith_tune_loo.py evaluate --scores DIR. A run stopped by its timeout leaves its checkpoint instead.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD/src || exit 1
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
mkdir -p /tmp/base /tmp/data/nli /tmp/data/qags-cnndm
cp .gpu/base/*.json .gpu/base/vocab.txt /tmp/base/
python3 .gpu/dequant.py .gpu/base/model8.safetensors /tmp/base/model.safetensors || exit 1
for f in .gpu/data/nli/*.gz; do gunzip -c "$f" > /tmp/data/nli/"$(basename "$f" .gz)"; done
cp .gpu/data/qags-cnndm/* /tmp/data/qags-cnndm/
DEV=$(cd "$(dirname "$0")" && pwd)
DEVICE=${DEVICE:-cuda}  # DEVICE=cpu LIMIT=5 TRAIN_TIMEOUT=60: a dry run of the plumbing on a CPU
export DEVICE
log() { sed -u "s/^/[$1] /" >> $OUT/runs.log; }
[ -f .gpu/ft/sentences.jsonl.gz ] && { python3 "$DEV/faith_tune.py" prepare --device $DEVICE ${LIMIT:+--limit $LIMIT} 2>&1 | log prepare & }
pids=()
for spec in "$@"; do
  name=${spec%%:*}; args=${spec#*:}
  (timeout ${TRAIN_TIMEOUT:-480} python3 -m faithwatch train-nli --out /tmp/runs/$name --train /tmp/data/nli/train.jsonl \
     --base /tmp/base --device $DEVICE --threads 2 $args 2>&1 | log $name
   if [ -f /tmp/runs/$name/adapter_model.safetensors ]; then tar -C /tmp/runs -czf $OUT/$name.tgz --exclude checkpoint $name
   else tar -C /tmp/runs -czf $OUT/$name.tgz $name; fi
   [ -f .gpu/ft/sentences.jsonl.gz ] && python3 "$DEV/score_export.py" /tmp/runs/$name $OUT/scores_$name.json \
     --device $DEVICE ${LIMIT:+--limit $LIMIT} 2>&1 | log $name
   python3 -m faithwatch eval-nli --model /tmp/runs/$name --base /tmp/base --device $DEVICE --data-root /tmp/data \
     --sets mnli_mismatched_3way,mnli_mismatched_binary --baselines "" ${LIMIT:+--limit $LIMIT} 2>&1 | log $name
   [ -z "${LIMIT:-}" ] && python3 "$DEV/qags_quick_auroc.py" /tmp/base /tmp/data /tmp/runs/$name 2>&1 | log $name) &
  pids+=($!)
done
wait "${pids[@]}"
grep -a "QAGS\|mnli_mismatched\|score_export\|prepare:\|wrote\|Error" $OUT/runs.log
