"""Overhead of monitoring: wall time and peak memory of the Monitor (all signals) vs plain greedy generate.

Both generate the same number of new tokens for the same prompt (plain: greedy, EOS suppressed). The monitored
answer is English text with real sentences (``--answer-from text``, the default: the sentences are split and scored
as in real use) or the model's own greedy choice (``--answer-from model``: a random model's answer is random text,
with next to no sentence ends to score and a sentence splitter re-run on one ever longer tail); a forward pass costs
the same whatever the token. Each mode runs in its own subprocess so peak memory is its own; the printed ratio is
monitor / plain, measured in this run.

Against the hardware's limit, in the same run: decoding one token at a time reads every weight once per token, so
no implementation passes (read bandwidth) / (weight bytes) tokens/s. The plain run measures the device's read rate
(``torch.sum`` over 512 MiB on the device, :func:`read_rate`) and the model's unique parameter bytes
(:func:`weight_bytes`), and the print shows each mode's share of that limit (the KV cache and activations, also
read per token, are left out, so the limit is generous).

    python bench/overhead.py                               # CPU, embedded SmolLM2-135M-Instruct
    python bench/overhead.py --device cuda --random-model llama-1b --tokens 256   # GPU, random ~1B Llama
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "When was the Eiffel Tower built, and how tall is it?"

# Llama-3.2-1B-like shape (1.24B parameters with a 128k vocabulary)
RANDOM_MODELS = {
    "llama-1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                     num_key_value_heads=8, vocab_size=128256, max_position_embeddings=8192,
                     tie_word_embeddings=True, rope_theta=500000.0),
    "llama-tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, vocab_size=49152, max_position_embeddings=2048),
}


def _random_config(name: str):
    """The ``transformers.LlamaConfig`` of the random-weight model ``name`` (:data:`RANDOM_MODELS`)."""
    from transformers import LlamaConfig

    return LlamaConfig(**RANDOM_MODELS[name], bos_token_id=1, eos_token_id=2, pad_token_id=2)


def save_random(name: str, tokenizer: str | None, out: str) -> None:
    """Save the random-weight model ``name`` of :data:`RANDOM_MODELS` (bf16 on a GPU, fp32 on a CPU) with the
    tokenizer folder ``tokenizer`` (default: the embedded model's) to ``out``, for a server to load."""
    import torch
    from transformers import AutoTokenizer, LlamaForCausalLM

    from faithwatch.models.loading import _materialise_embedded

    torch.manual_seed(0)
    config = _random_config(name)
    cuda = torch.cuda.is_available()
    with torch.device("cuda" if cuda else "cpu"):
        model = LlamaForCausalLM(config).to(torch.bfloat16 if cuda else torch.float32)
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(tokenizer or _materialise_embedded()).save_pretrained(out)


def _load(args):
    import torch
    from transformers import AutoModelForCausalLM, LlamaForCausalLM

    from faithwatch.models.attention import ATTENTION_NAME, register_attention
    from faithwatch.models.loading import LoadedModel, _materialise_embedded, load_model

    register_attention()
    if args.random_model is None:
        lm = load_model(None, device=args.device)
        if args.mode != "monitor":  # default attention for the baselines
            plain = AutoModelForCausalLM.from_pretrained(_materialise_embedded(), dtype=torch.float32)
            lm.model = plain.to(args.device)
        return lm
    from transformers import AutoTokenizer

    tok_dir = args.tokenizer or _materialise_embedded()
    tokenizer = AutoTokenizer.from_pretrained(tok_dir)
    torch.manual_seed(0)
    config = _random_config(args.random_model)
    config._attn_implementation = "sdpa" if args.mode != "monitor" else ATTENTION_NAME
    dtype = torch.bfloat16 if args.device.startswith("cuda") else torch.float32
    with torch.device(args.device):
        model = LlamaForCausalLM(config).to(dtype)
    model.eval()
    return LoadedModel(model=model, tokenizer=tokenizer, model_id=f"random:{args.random_model}")


def weight_bytes(model) -> int:
    """Bytes of the model's parameters, each tied (shared) tensor counted once."""
    return sum(p.numel() * p.element_size() for p in model.parameters())


def read_rate(device: str, nbytes: int = 2**29, repeats: int = 5) -> float:
    """Bytes per second that ``torch.sum`` reads from a ``nbytes`` fp32 tensor on ``device`` (median)."""
    import torch

    x = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
    cuda = device.startswith("cuda")
    float(x.sum())  # warm-up
    times = []
    for _ in range(repeats):
        if cuda:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        float(x.sum())  # the float() waits for the result
        times.append(time.perf_counter() - t0)
    return nbytes / sorted(times)[len(times) // 2]


def child(args) -> dict:
    import torch

    from faithwatch.models.prompts import build_prompts

    lm = _load(args)
    context = (ROOT / "examples" / "eiffel.txt").read_text()
    eos = sorted(lm.eos_token_ids)
    cuda = args.device.startswith("cuda")

    def sync():
        if cuda:
            torch.cuda.synchronize()

    if args.mode in ("plain", "plain-static"):
        prompts = build_prompts(lm.tokenizer, QUESTION, context)
        ids = torch.tensor([prompts.rag_ids], device=lm.device)
        # HF's fastest plain path: a static cache, whose decode step transformers compiles (CUDA graphs)
        extra = {"cache_implementation": "static"} if args.mode == "plain-static" else {}

        def run():
            with torch.inference_mode():
                out = lm.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=args.tokens,
                                        min_new_tokens=args.tokens, do_sample=False, pad_token_id=eos[0], **extra)
            return out.shape[1] - ids.shape[1], 0
    else:
        import numpy as np

        from faithwatch.models.ahead import OnDevice
        from faithwatch.monitor import Monitor
        from faithwatch.signals import LIDBank, default_lid_layers

        layers = default_lid_layers(lm.num_layers)
        d = lm.model.config.hidden_size
        rng = np.random.default_rng(0)  # a synthetic bank of realistic size: the LID cost is the kNN search
        bank = LIDBank(lm.model_id, {layer: rng.standard_normal((2000, d)).astype(np.float32) for layer in layers})
        chosen = {"alignment": args.alignment} if args.alignment else {}  # else the detector's own
        if args.signals:
            chosen["signals"] = args.signals.split(",")
        monitor = Monitor(lm, lid_bank=bank, max_new_tokens=args.tokens, static_cache=args.static_cache,
                          cuda_graph=args.cuda_graph, run_ahead=args.run_ahead, **chosen)
        banned = torch.tensor(eos, device=lm.device)

        def no_eos(logprobs, _i):
            return logprobs.index_fill(-1, banned, float("-inf")).argmax(-1, keepdim=True)

        # the model's own choice, or English text with real sentences (a random model writes neither sentences nor
        # words, so its answer under-counts sentence scoring and over-counts the sentence splitter); chosen on the
        # device, so that the Monitor may run ahead of the host as with greedy decoding
        script = torch.tensor(lm.tokenizer.encode(" ".join([context] * 8), add_special_tokens=False),
                              device=lm.device)
        choose = OnDevice(no_eos if args.answer_from == "model" else lambda _lp, i: script[i].view(1, 1))

        def run():
            result = monitor.generate(QUESTION, context, choose=choose)
            return result.num_tokens, len(result.sentences)

    if cuda:
        torch.cuda.reset_peak_memory_stats()
    run()  # warm-up (kernel selection, lazy loads)
    times = []
    for _ in range(args.repeats):
        sync()
        start = time.perf_counter()
        n, sentences = run()
        sync()
        times.append(time.perf_counter() - start)
    if cuda:
        peak = torch.cuda.max_memory_allocated() / 2**20
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"mode": args.mode, "tokens": n, "sentences": sentences, "seconds": statistics.median(times), "all": times,
           "peak_mib": peak}
    if args.mode == "plain":
        out.update(weight_bytes=weight_bytes(lm.model), read_rate=read_rate(args.device))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--tokens", type=int, default=128, help="new tokens per generation")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--random-model", choices=sorted(RANDOM_MODELS), default=None)
    parser.add_argument("--tokenizer", default=None, help="tokenizer dir for --random-model (default: embedded)")
    parser.add_argument("--alignment", default=None,
                        help="alignment scorer (default: the detector's own, nli-minilm+lexical+embedding shipped)")
    parser.add_argument("--signals", default=None,
                        help="comma-separated signal families (default: all; a machine without the MiniLM package "
                        "leaves out 'tagger', e.g. likelihood,entropy,lid,contrastive,influence,lookback,alignment,"
                        "lexical,edits)")
    parser.add_argument("--answer-from", choices=["text", "model"], default="text",
                        help="the monitored answer's tokens: English text (examples/eiffel.txt, repeated; real "
                        "sentences to split and score) or the model's own argmax (random text for a random model); "
                        "the forward passes cost the same")
    parser.add_argument("--static-cache", action="store_true",
                        help="the Monitor decodes into a preallocated (static) KV cache instead of a growing one")
    parser.add_argument("--cuda-graph", action="store_true",
                        help="the Monitor replays each decode step as a CUDA graph (implies --static-cache)")
    parser.add_argument("--run-ahead", type=int, default=None,
                        help="the Monitor's run_ahead (tokens chosen on the device per host sync; default: 8 on a "
                        "GPU, 1 on a CPU)")
    parser.add_argument("--static-anchor", action="store_true",
                        help="also time plain generate with cache_implementation='static' (HF compiles its decode "
                        "step; the fastest plain path on a GPU)")
    parser.add_argument("--save-random", metavar="DIR", default=None,
                        help="save --random-model (random weights) with --tokenizer to DIR for a server, and stop")
    parser.add_argument("--mode", choices=["plain", "plain-static", "monitor"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.save_random:
        if args.random_model is None:
            parser.error("--save-random needs --random-model")
        save_random(args.random_model, args.tokenizer, args.save_random)
        return
    if args.mode:
        print(json.dumps(child(args)))
        return
    results = {}
    for mode in ("plain", *(["plain-static"] if args.static_anchor else []), "monitor"):
        cmd = [sys.executable, __file__, "--mode", mode, *sys.argv[1:]]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            sys.exit(f"{mode} run failed:\n{proc.stderr[-3000:]}")
        results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    plain, mon = results["plain"], results["monitor"]
    assert plain["tokens"] == mon["tokens"], (plain["tokens"], mon["tokens"])
    model = args.random_model or "embedded SmolLM2-135M-Instruct"
    unit = "peak GPU MiB" if args.device.startswith("cuda") else "peak RSS MiB"
    print(f"model: {model} · device: {args.device} · new tokens: {plain['tokens']} · median of {args.repeats} · "
          f"monitored answer from the {args.answer_from} ({mon['sentences']} sentences) · "
          f"{'CUDA-graph step, static' if args.cuda_graph else 'static' if args.static_cache else 'dynamic'} KV cache")
    print(f"plain generate : {plain['seconds']:.3f} s  ({plain['tokens'] / plain['seconds']:.1f} tok/s)  "
          f"{unit} {plain['peak_mib']:.0f}")
    print(f"monitor (all)  : {mon['seconds']:.3f} s  ({mon['tokens'] / mon['seconds']:.1f} tok/s)  "
          f"{unit} {mon['peak_mib']:.0f}")
    print(f"ratio monitor/plain: time {mon['seconds'] / plain['seconds']:.2f}x · memory "
          f"{mon['peak_mib'] / plain['peak_mib']:.2f}x")
    limit = plain["read_rate"] / plain["weight_bytes"]
    shares = " · ".join(f"{k} {r['tokens'] / r['seconds'] / limit:.0%}" for k, r in results.items())
    print(f"limit: {plain['weight_bytes'] / 2**20:.0f} MiB of weights read per token at {plain['read_rate'] / 1e9:.1f} "
          f"GB/s (torch.sum here) -> at most {limit:.1f} tok/s; share of it: {shares}")
    if "plain-static" in results:
        fast = results["plain-static"]
        print(f"plain generate, static cache: {fast['seconds']:.3f} s  ({fast['tokens'] / fast['seconds']:.1f} tok/s)  "
              f"{unit} {fast['peak_mib']:.0f}")
        print(f"monitor tok/s / static-cache generate tok/s: "
              f"{(mon['tokens'] / mon['seconds']) / (fast['tokens'] / fast['seconds']):.2f}x (target >= 0.6)")


if __name__ == "__main__":
    main()
