"""The `hf` engine against raw transformers `generate`, on the embedded SmolLM2 or any model folder
(`--model DIR`; benchmarks/random_init.py writes a ~1B Llama-architecture one), CPU here, a GPU where
there is one, greedy, on PopQA closed-book prompts.

  1. generation: the same prompts through `HFEngine.generate` and through a raw loop (tokenize,
     sort by length, left-pad, `model.generate` in batches, decode), both warm (first calls
     reported apart), the raw loop at each of `--raw-batches` and its best kept: tokens/s and
     ragbench / raw. `--batch-size auto` (the default on a GPU) shows the size the engine found
     and the seconds its load took, then loads it again to show the size read from the cache;
  2. end to end from fresh processes: `ragbench --tasks popqa --system closed_book --model
     hf:embedded` against a raw script doing the same (import, load, read the prompts, generate,
     write): wall seconds and raw / ragbench; and the share of identical outputs (the raw script
     turns cuDNN's attention kernel off as the engine does, like for like) and how many batches the
     run made (in bf16, rows batched otherwise round otherwise: with a run's batches of 64 against the
     raw script's 256, 17 of 256 random-weight outputs were equal on an H100).

The issue's targets (>= 0.8x raw on generation time, >= 0.5x a raw script end to end, on a GPU with
256 prompts) need a GPU; on a CPU both sides are bound by the same matrix products.

Run: python benchmarks/hf_engine.py [--model embedded|DIR] [--prompts 32] [--tokens 32] [--batch-size 16|auto]
                                   [--raw-batches 16,32] [--repeat 1] [--quick]
     (--raw PROMPTS OUT MODEL_DIR BATCH is the raw script, run by part 2 in its own process; --quick runs
     part 2's two sides in this process: the script runs end to end, the fresh processes' seconds are not taken)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "river city film album director capital population band novel team league station county "
    "province mountain language species company university series"
).split()
PROPS = ("occupation", "place of birth", "genre", "director", "capital", "author", "country")


def write_popqa(path: Path, count: int) -> list[str]:
    rng = random.Random(0)
    questions = []
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            subject = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))).title()
            question = f"What is {subject}'s {rng.choice(PROPS)}?"
            questions.append(question)
            handle.write(
                json.dumps({"id": i, "question": question, "answers": ["x"], "prop": "genre", "ctxs": []}) + "\n"
            )
    return questions


def raw_generate(torch, model, tokenizer, prompts: list[str], batch: int, tokens: int) -> tuple[list[str], int]:
    """What a user's own script does: length-sorted, left-padded batches of greedy `generate`."""
    order = sorted(range(len(prompts)), key=lambda i: -len(tokenizer(prompts[i])["input_ids"]))
    texts: list[str] = [""] * len(prompts)
    generated = 0
    for start in range(0, len(order), batch):
        rows = order[start : start + batch]
        inputs = tokenizer([prompts[i] for i in rows], return_tensors="pt", padding=True).to(model.device)
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=tokens, do_sample=False)
        new = out[:, inputs["input_ids"].shape[1] :]
        for row, ids in zip(rows, new.tolist()):
            kept = [t for t in ids if t != tokenizer.pad_token_id]
            generated += len(kept)
            texts[row] = tokenizer.decode(kept, skip_special_tokens=True)
    return texts, generated


def load_raw(model_dir: str):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging

    logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda":  # the attention kernels the hf engine uses (cuDNN's off): like for like, equal outputs
        torch.backends.cuda.enable_cudnn_sdp(False)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype="auto" if device == "cuda" else torch.float32)
    model.to(device).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return torch, model, tokenizer


def raw_script(prompts_file: str, out_file: str, model_dir: str, batch: int) -> None:
    """Part 2's raw side, in a fresh process: import, load, read, generate, write."""
    torch, model, tokenizer = load_raw(model_dir)
    torch.set_num_threads(max(1, (os.cpu_count() or 1) - 1))  # as the hf engine does: like for like
    calls = [json.loads(line) for line in Path(prompts_file).read_text(encoding="utf-8").splitlines()]
    texts, _ = raw_generate(torch, model, tokenizer, [c["prompt"] for c in calls], batch, calls[0]["max_tokens"])
    Path(out_file).write_text("".join(json.dumps({"output": t}) + "\n" for t in texts), encoding="utf-8")


def model_dir(model: str) -> str:
    from ragbench._engines.local.embedded import embedded_safetensors_dir

    return str(embedded_safetensors_dir()) if model == "embedded" else model


def load_engine(model: str, batch: int | str):
    """The engine and the seconds its load took (with batch_size=auto: the search or the cache read)."""
    from ragbench._engines.hf.engine import HFEngine

    started = time.perf_counter()
    engine = HFEngine(model, batch_size=batch)
    return engine, time.perf_counter() - started


def generation(
    model: str, prompts: list[str], batch: int | str, raw_batches: list[int], tokens: int, repeat: int
) -> int:
    """Part 1; returns the raw loop's best batch size."""
    from ragbench._values.llm_request import Request
    from ragbench._values.sampling import Sampling

    engine, load = load_engine(model, batch)
    if batch == "auto":
        engine.close()  # frees the GPU memory before the second load
        engine, again = load_engine(model, batch)
        if engine.device.startswith("cuda"):
            from ragbench._engines.hf.batching import CACHE_FILE
            from ragbench._engines.local.embedded import default_cache_dir

            print(
                f"batch_size=auto: {engine.max_batch_size} rows (engine load {load:.1f} s, the search included; "
                f"a second load {again:.1f} s, the size read from {default_cache_dir() / CACHE_FILE})"
            )
        else:
            print(
                f"batch_size=auto on the CPU: {engine.max_batch_size} rows, no search (engine loads {load:.1f} "
                f"and {again:.1f} s)"
            )
    torch, raw_model, tokenizer = load_raw(model_dir(model))
    requests = [Request(prompt=p, sampling=Sampling(max_tokens=tokens)) for p in prompts]
    started = time.perf_counter()
    engine.generate(requests[:1])
    first = {"ragbench": time.perf_counter() - started}
    started = time.perf_counter()
    raw_generate(torch, raw_model, tokenizer, prompts[:1], 1, tokens)
    first["raw"] = time.perf_counter() - started
    ours, raw_runs = math.inf, {}
    for _ in range(repeat):  # ragbench and the raw loop in turn, the least time of each kept
        started = time.perf_counter()
        responses = engine.generate(requests)
        ours = min(ours, time.perf_counter() - started)
        for size in raw_batches:
            started = time.perf_counter()
            texts, raw_tokens = raw_generate(torch, raw_model, tokenizer, prompts, size, tokens)
            seconds = time.perf_counter() - started
            if size not in raw_runs or seconds < raw_runs[size][0]:
                raw_runs[size] = (seconds, raw_tokens, texts)
    our_tokens = sum(r.completion_tokens for r in responses)
    best = min(raw_runs, key=lambda size: raw_runs[size][0] / raw_runs[size][1])
    raw, raw_tokens, texts = raw_runs[best]
    same = sum(r.text.strip() == t.strip() for r, t in zip(responses, texts))
    print(
        f"1. generation, {len(prompts)} prompts x <= {tokens} new tokens, ragbench batch {engine.max_batch_size}, "
        f"{engine.device}, {engine.dtype}, least of {repeat} (first call: ragbench {first['ragbench']:.2f} s, "
        f"raw {first['raw']:.2f} s)"
    )
    print(f"   ragbench HFEngine.generate  {ours:7.2f} s  {our_tokens / ours:8.1f} tokens/s")
    for size, (seconds, generated, _) in raw_runs.items():
        print(f"   raw model.generate, batch {size:<4} {seconds:7.2f} s  {generated / seconds:8.1f} tokens/s")
    print(
        f"   ragbench / raw at its best batch ({best}), tokens/s: {(our_tokens / ours) / (raw_tokens / raw):.2f}x; "
        f"identical outputs {same}/{len(prompts)}"
    )
    return best


def ragbench_fresh(args: list[str]) -> tuple[int, str]:
    """`ragbench ARGS` in a fresh process: its exit status and stderr."""
    done = subprocess.run([sys.executable, "-m", "ragbench._cli.main", *args], capture_output=True, text=True)
    return done.returncode, done.stderr


def ragbench_here(args: list[str]) -> tuple[int, str]:
    """`ragbench ARGS` in this process (the quick mode)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))  # a folder, not a package
    from command_here import ragbench_here

    return ragbench_here(args, os.environ)


def end_to_end(
    model: str, work: Path, count: int, batch: int | str, raw_batch: int, tokens: int, quick: bool = False
) -> None:
    """Part 2; `quick`: both sides in this process (support/command_here.py), the script's run checked, not a
    fresh process's time."""
    from ragbench._reports.results.file import read_results

    data = work / "popqa.jsonl"
    write_popqa(data, count)
    out = work / "run"
    started = time.perf_counter()
    status, error = (ragbench_here if quick else ragbench_fresh)(
        [
            "--tasks",
            "popqa",
            "--system",
            "closed_book",
            "--system-arg",
            f"max_tokens={tokens}",
            "--model",
            f"hf:{model}",
            "--model-arg",
            f"batch_size={batch}",
            "--data",
            f"popqa={data}",
            "--output",
            str(out),
            "--no-progress",
            "--bootstrap-iters",
            "0",
        ]
    )
    ours = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"ragbench run failed:\n{error[-2000:]}")
    samples = [json.loads(line) for line in (out / "samples" / "popqa.jsonl").read_text().splitlines()]
    calls = [{"prompt": s["trace"][0]["request"]["prompt"], "max_tokens": tokens} for s in samples]
    prompts_file, raw_out = work / "prompts.jsonl", work / "raw.jsonl"
    prompts_file.write_text("".join(json.dumps(c) + "\n" for c in calls), encoding="utf-8")
    started = time.perf_counter()
    if quick:
        raw_script(str(prompts_file), str(raw_out), model_dir(model), raw_batch)
    else:
        subprocess.run(
            [sys.executable, __file__, "--raw", str(prompts_file), str(raw_out), model_dir(model), str(raw_batch)],
            check=True,
        )
    raw = time.perf_counter() - started
    raw_texts = [json.loads(line)["output"] for line in raw_out.read_text().splitlines()]
    same = sum(s["trace"][0]["response"]["texts"][0].strip() == t.strip() for s, t in zip(samples, raw_texts))
    print(
        f"2. end to end {'in this process (quick)' if quick else 'from a fresh process'}, {count} closed-book "
        f"PopQA questions x <= {tokens} tokens, batch {batch} (raw script: {raw_batch})"
    )
    cost = read_results(out / "results.json", "benchmarks/hf_engine.py").cost
    print(
        f"   ragbench run  {ours:7.2f} s   raw script  {raw:7.2f} s   raw / ragbench: {raw / ours:.2f}x; "
        f"identical outputs {same}/{count}; the run: {cost['batches']} batch(es), wall_seconds "
        f"{cost['wall_seconds']:.2f} in results.json"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="embedded", help="embedded (SmolLM2-135M) or a model folder")
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--batch-size", default="16", help="rows per batch for ragbench, or auto")
    parser.add_argument(
        "--raw-batches",
        default=None,
        help="the raw loop's batch sizes to try (default: --batch-size, or 32,64,128,256 with auto)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="part 1's timings taken this many times, the least kept")
    parser.add_argument("--quick", action="store_true", help="2 prompts x 2 tokens, batches of 2")
    parser.add_argument("--raw", nargs=4, metavar=("PROMPTS", "OUT", "MODEL_DIR", "BATCH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.raw:
        raw_script(*args.raw[:3], int(args.raw[3]))
        return
    if args.quick:
        args.prompts, args.tokens, args.batch_size = 2, 2, "2"
    batch = args.batch_size if args.batch_size == "auto" else int(args.batch_size)
    raw_batches = [
        int(size) for size in (args.raw_batches or ("32,64,128,256" if batch == "auto" else str(batch))).split(",")
    ]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory() as scratch:
        prompts = [
            f"### Instruction:\n{q}\n\n### Response:\n" for q in write_popqa(Path(scratch) / "q.jsonl", args.prompts)
        ]
        best = generation(args.model, prompts, batch, raw_batches, args.tokens, args.repeat)
        end_to_end(args.model, Path(scratch), args.prompts, batch, best, args.tokens, args.quick)


if __name__ == "__main__":
    main()
