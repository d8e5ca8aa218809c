"""The dense index build's encoder on a GPU: ragbench's `index build --retriever dense` in passages/s against
sentence-transformers' own `encode` at its best batch size, on the same passages and model (issue 69).

ragbench's rate is the marginal one of two real builds through the CLI (a small and a large corpus: the
difference takes out the process start and the model load), so it counts reading the JSONL, the chunking and the
.npy writes; sentence-transformers' is `encode` on texts already in memory (`title + "\\n" + text`, as ragbench
encodes passages) in one warm process, swept over batch sizes. float16 (FlagModel's `use_fp16`) is shown beside;
ragbench's builder encodes in `--encoder-dtype` (its `--build-arg encoder_dtype=`, float32 by default).

Passages are wiki-18-like: a title of 1-4 words and 100 words drawn with Zipf's law from the tokenizer's
whole-word vocabulary (seeded). A model folder on a machine that reaches no hub: `benchmarks/random_init.py LIKE
OUT --preset e5-base` (e5-base-v2's shapes, random weights: the speed of a forward pass depends on shapes only).

Run: python benchmarks/dense_gpu.py --model DIR [--passages 50000] [--sweep-passages 10000]
     [--batch-sizes 32,64,128,256,512] [--ragbench-batch 64] [--device cuda] [--encoder-dtype float16]
     python benchmarks/dense_gpu.py --quick      (the embedded all-MiniLM-L6-v2 on the CPU, 4 passages, one build in this
     process: tests)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SMALL = 1_000  # the small build whose time (process start, model load) is taken off the large one's


def words_of(model: Path) -> list[str]:
    """The whole words of the model's WordPiece vocabulary (no ## pieces, no [SPECIAL] tokens), in vocabulary
    order: BERT vocabularies list frequent words first, which Zipf's law then favours."""
    vocab = (model / "vocab.txt").read_text(encoding="utf-8").split("\n")
    return [word for word in vocab if word.isalpha() and word.isascii() and len(word) > 1]


def write_corpus(path: Path, count: int, words: list[str], seed: int = 0) -> list[str]:
    """`count` passages as ragbench's JSONL {id, title, text}; returns the texts the encoder sees."""
    rng = np.random.default_rng(seed)
    ranks = np.minimum(rng.zipf(1.2, size=(count, 104)) - 1, len(words) - 1)
    title_lengths = rng.integers(1, 5, size=count)
    texts = []
    with path.open("w", encoding="utf-8") as handle:
        for row, (line, title_length) in enumerate(zip(ranks, title_lengths, strict=True)):
            title = " ".join(words[rank] for rank in line[:title_length]).title()
            text = " ".join(words[rank] for rank in line[4:])
            handle.write(json.dumps({"id": str(row), "title": title, "text": text}) + "\n")
            texts.append(title + "\n" + text)
    return texts


def ragbench_build(
    corpus: Path, out: Path, model: Path, device: str, batch: int, dtype: str, here: bool = False
) -> float:
    """Seconds of one `ragbench index build --retriever dense` process, start to end (`here`: the quick mode, the
    command run in this process, support/command_here.py: the script runs end to end, no process start counted)."""
    command = [
        "index", "build", "--corpus", str(corpus), "--retriever", "dense",
        "--out", str(out), "--model", str(model), "--build-arg", f"device={device}",
        "--build-arg", f"batch_size={batch}", "--build-arg", f"encoder_dtype={dtype}", "--no-progress",
    ]  # fmt: skip
    start = time.perf_counter()
    if here:
        sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))  # a folder, not a package
        from command_here import ragbench_here

        status, error = ragbench_here(command, os.environ)
        if status != 0:
            raise SystemExit(f"ragbench index build failed:\n{error[-2000:]}")
    else:
        subprocess.run([sys.executable, "-m", "ragbench", *command], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def encode_rate(model: object, texts: list[str], batch: int) -> float:
    """Passages/s of sentence-transformers' `encode` (normalised, to numpy, as ragbench calls it)."""
    import torch

    start = time.perf_counter()
    model.encode(texts, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)  # type: ignore[attr-defined]
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return len(texts) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="a sentence-transformers folder, or 'embedded'")
    parser.add_argument("--passages", type=int, default=50_000)
    parser.add_argument("--sweep-passages", type=int, default=10_000)
    parser.add_argument("--batch-sizes", default="32,64,128,256,512")
    parser.add_argument("--ragbench-batch", type=int, default=64, help="the builder's batch_size (its default: 64)")
    parser.add_argument("--device", default="cuda")
    parser.add_argument(
        "--encoder-dtype", default="float32", help="ragbench's encoder_dtype: float32, float16, bfloat16"
    )
    parser.add_argument(
        "--quick", action="store_true", help="the embedded model on the CPU, 4 passages, one build (in this process)"
    )
    args = parser.parse_args()
    if args.quick:  # batches of 2: each encode (and the build) makes more than one batch
        args.model, args.device, args.passages, args.sweep_passages, args.batch_sizes = "embedded", "cpu", 4, 4, "2"
        args.ragbench_batch = 2
    if args.model is None:
        parser.error("--model is needed (or --quick)")
    small = 0 if args.quick else min(SMALL, args.passages // 3)  # quick: one build, its start counted in

    import torch
    from sentence_transformers import SentenceTransformer

    from ragbench.api.retrieval import model_location

    model_dir = Path(model_location(args.model))
    gpu = torch.cuda.get_device_name() if args.device.startswith("cuda") else "none (CPU)"
    print(f"device: {gpu}; torch {torch.__version__}; model {model_dir}")
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        words = words_of(model_dir)
        texts = write_corpus(scratch / "large.jsonl", args.passages, words)
        write_corpus(scratch / "small.jsonl", small, words, seed=1)
        print(f"{args.passages:,} passages, {np.mean([len(text.split()) for text in texts]):.0f} words each")

        model = SentenceTransformer(str(model_dir), device=args.device)
        lengths = [len(ids) for ids in model.tokenizer(texts[:2000])["input_ids"]]
        print(
            f"tokens a passage: mean {np.mean(lengths):.0f}, max {max(lengths)} (max_seq_length {model.max_seq_length})"
        )
        sweep = texts[: args.sweep_passages]
        encode_rate(model, sweep[:512], 64)  # warm-up: kernels, allocator
        rates = {batch: encode_rate(model, sweep, batch) for batch in map(int, args.batch_sizes.split(","))}
        for batch, rate in rates.items():
            print(f"  sentence-transformers encode, float32, batch {batch:>4}: {rate:>9,.0f} passages/s")
        best = max(rates, key=rates.__getitem__)
        st_best = encode_rate(model, texts, best)
        st_same = encode_rate(model, texts, args.ragbench_batch)
        st_half = None
        if args.device.startswith("cuda"):  # float16 is a GPU setting (FlagModel's use_fp16)
            model.half()
            encode_rate(model, sweep[:512], best)
            st_half = encode_rate(model, texts, best)
        del model
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

        t_small = small and ragbench_build(
            scratch / "small.jsonl",
            scratch / "small-index",
            model_dir,
            args.device,
            args.ragbench_batch,
            args.encoder_dtype,
        )
        t_large = ragbench_build(
            scratch / "large.jsonl",
            scratch / "large-index",
            model_dir,
            args.device,
            args.ragbench_batch,
            args.encoder_dtype,
            here=args.quick,
        )
        rate = (args.passages - small) / (t_large - t_small)
        print(f"\n{'':<58}{'passages/s':>12}{'vs ST best':>12}")
        rows = [
            (f"ragbench index build --retriever dense (batch {args.ragbench_batch}, {args.encoder_dtype})", rate),
            (f"sentence-transformers encode, batch {args.ragbench_batch}, float32", st_same),
            (f"sentence-transformers encode, best batch {best}, float32", st_best),
        ]
        if st_half is not None:
            rows.append((f"sentence-transformers encode, batch {best}, float16", st_half))
        for name, value in rows:
            print(f"{name:<58}{value:>12,.0f}{value / st_best:>11.2f}x")
        print(
            f"(ragbench: {args.passages:,} passages in {t_large:.1f} s, {small:,} in {t_small:.1f} s: the "
            "difference is the marginal rate, process start and model load taken out)"
            if small
            else f"(ragbench: {args.passages:,} passages in {t_large:.1f} s, process start and model load included)"
        )
        hours = 21_015_324 / rate / 3600
        print(f"wiki-18 (21,015,324 passages) at ragbench's rate: {hours:.1f} GPU-hours on this device")


if __name__ == "__main__":
    main()
