#!/usr/bin/env bash
# The GPU benchmarks as run on a lent H100 (random-weight Llama-1B; no weights travel). Needs the wheels the
# GPU image lacks in .whl/ and a tokenizer folder in .gpu/tok (see bench/README.md). Wheels used on 2026-11-25
# (python 3.12): pysbd gguf platformdirs pydantic pydantic-core annotated-types typing-inspection typing-extensions
# transformers==5.24.0 fastapi starlette uvicorn opentelemetry-api. On 2026-11-26 (H200): pysbd 0.3.4, gguf 0.19.0,
# platformdirs 4.14.8, pydantic 2.14.4, pydantic-core 2.50.5, annotated-types 0.8.0, typing-inspection 0.4.5,
# typing-extensions 4.16.0, transformers 5.24.0, fastapi 0.165.0, starlette 1.10.0, uvicorn 0.54.0,
# opentelemetry-api 1.45.2 (17 MB together).
# Usage: bash bench/gpu_run.sh STEP... (throughput, overhead, overhead-graph, overhead-graph-1 (token by token,
# no run-ahead), decoding, decoding-graph, profile,
# profile-graph, tests, server, or any shell command); each step's output goes to $OUT/STEP.txt. 'server' saves a
# random-weight Llama-1B with the tokenizer to /tmp/rand1b, then load-tests 'faithwatch serve' on it (monitor
# streams, 1/4/16 clients, unbatched and --batch-rows 16).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/src:$PWD/bench:/tmp/site PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
# every white-box signal, lexical alignment (the MiniLM package, hence 'tagger' and NLI alignment, does not travel)
SIG=likelihood,entropy,lid,contrastive,influence,lookback,alignment,lexical,edits
M="--device cuda --random-model llama-1b --tokenizer .gpu/tok"
for step in "$@"; do
  case $step in
    throughput) timeout 300 python3 bench/throughput.py $M --records 256 --batch-sizes 8,32,128 --host-workers 8 ;;
    overhead) timeout 300 python3 bench/overhead.py $M --tokens 256 --alignment lexical --signals $SIG --static-anchor ;;
    overhead-static) timeout 200 python3 bench/overhead.py $M --tokens 256 --alignment lexical --signals $SIG --static-cache --repeats 2 ;;
    overhead-graph) timeout 300 python3 bench/overhead.py $M --tokens 256 --alignment lexical --signals $SIG --static-anchor --cuda-graph --repeats 5 ;;
    overhead-graph-1) timeout 150 python3 bench/overhead.py $M --tokens 256 --alignment lexical --signals $SIG --cuda-graph --repeats 3 --run-ahead 1 ;;
    decoding) timeout 300 python3 bench/decoding.py $M --signals ${SIG/lid,/} --strategies monitor,greedy,fod,fod-adacad ;;
    decoding-graph) timeout 300 python3 bench/decoding.py $M --signals ${SIG/lid,/} --strategies monitor,greedy,fod,fod-adacad --cuda-graph ;;
    profile) timeout 120 python3 bench/gpu_profile.py $SIG ;;
    profile-graph) timeout 120 python3 bench/gpu_profile.py $SIG --cuda-graph ;;
    server) timeout 120 python3 bench/overhead.py --random-model llama-1b --tokenizer .gpu/tok --save-random /tmp/rand1b &&
      timeout 460 python3 bench/server_load.py --model /tmp/rand1b --detector heuristic --endpoint monitor --batch-rows 1,16 \
        --requests 32 --duration 60 --max-new-tokens 64 \
        --server-args "--device cuda --dtype auto --cuda-graph --signals ${SIG/lid,/} --alignment lexical" ;;
    tests) timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_engine_graph.py tests/test_engine_static.py ;;
    *) timeout 300 bash -c "$step" ;;
  esac 2>&1 | tee "$OUT/$(echo "$step" | tr -c 'a-z0-9-' '_' | cut -c1-40).txt"
done
