"""Pages as passages (issue 91): the `colpali` retriever's index build in pages/s and its query latency against
colpali-engine's own processor and model run as vidore-benchmark's ColPaliRetriever runs them (process_images,
the model, `torch.unbind`; process_queries, the model, `score_multi_vector`), on the same pages and the same loaded
model, in one process; and the bytes a page of the index takes, with and without token pooling.

Pages are drawn here (PNG, `--size` pixels square, a few lines of text and bars), written as a ViDoRe V2 corpus
(Parquet, `corpus-id` and `image`). ragbench's build counts reading the Parquet, decoding each page, the forward
passes and writing the index; colpali-engine's counts decoding and the forward passes (vidore-benchmark gets pages
decoded by `datasets`). A model folder on a machine that reaches no hub: any colpali-engine model saved locally;
`--quick` builds a tiny random-weight ColPali (the speed of a forward pass depends on shapes only).

Run: python benchmarks/vidore_pages.py --model DIR [--pages 64] [--queries 16] [--batch 4] [--pool-factor 3]
     [--size 448] [--device cpu] [--dtype bfloat16]
     python benchmarks/vidore_pages.py --quick   (a tiny ColPali, 8 pages, 4 queries; needs colpali-engine)
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any


def draw_pages(folder: Path, count: int, size: int) -> list[bytes]:
    """`count` PNG pages written as a V2 corpus under `folder` (corpus/, queries/, qrels/); returns their bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from PIL import Image, ImageDraw

    pages = []
    for number in range(count):
        image = Image.new("RGB", (size, size), (255, 255 - number % 50, 240))
        draw = ImageDraw.Draw(image)
        for line in range(8):
            draw.text((10, 10 + line * size // 10), f"page {number} line {line} tolls tides census", fill="black")
        draw.rectangle([size // 4, size // 2, size // 4 + number % 7 * 10, size - 20], fill=(30, 90, 200))
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        pages.append(buffer.getvalue())
    for config, table in {
        "corpus": {"corpus-id": list(range(count)), "image": [{"bytes": page, "path": None} for page in pages]},
        "queries": {"query-id": [0], "query": ["tolls"]},
        "qrels": {"query-id": [0], "corpus-id": [0], "score": [1]},
    }.items():
        (folder / config).mkdir(parents=True)
        pq.write_table(pa.table(table), folder / config / "test-00000-of-00001.parquet")
    return pages


def tiny_colpali(out: Path) -> Path:
    """A random-weight ColPali (PaliGemma config: 1-layer SigLIP and Gemma, 28x28 images) and its processor, offline."""
    import torch
    from colpali_engine.models import ColPali, ColPaliProcessor
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PaliGemmaConfig, PreTrainedTokenizerFast, SiglipImageProcessor

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    specials = ["<pad>", "<eos>", "<bos>", "<unk>", "<image>"]
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(["Describe the image.", "Query: tolls tides census page line"] * 5, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>", unk_token="<unk>",
        extra_special_tokens={"image_token": "<image>"},
    )  # fmt: skip
    images = SiglipImageProcessor(size={"height": 28, "width": 28}, image_mean=[0.5] * 3, image_std=[0.5] * 3)
    images.image_seq_length = 4
    layers = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2}
    config = PaliGemmaConfig(
        vision_config={"model_type": "siglip_vision_model", **layers, "image_size": 28, "patch_size": 14},
        text_config={"model_type": "gemma", **layers, "num_key_value_heads": 1, "head_dim": 8, "vocab_size": len(fast)},
        image_token_index=fast.convert_tokens_to_ids("<image>"), projection_dim=16, hidden_size=16,
        pad_token_id=fast.pad_token_id, bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
    )  # fmt: skip
    torch.manual_seed(0)
    ColPali(config).save_pretrained(out)
    ColPaliProcessor(image_processor=images, tokenizer=fast).save_pretrained(out)
    return out


def upstream_encode(encoder: Any, pages: list[bytes], batch: int) -> list[Any]:
    """vidore-benchmark's ColPaliRetriever.forward_passages on the same model: decode, process_images, forward."""
    import torch
    from PIL import Image

    vectors: list[Any] = []
    with torch.no_grad():
        for start in range(0, len(pages), batch):
            decoded = [Image.open(io.BytesIO(page)) for page in pages[start : start + batch]]
            inputs = encoder.processor.process_images(images=decoded).to(encoder.device)
            vectors.extend(torch.unbind(encoder.model(**inputs).to("cpu")))
    return vectors


def upstream_query(encoder: Any, pages: list[Any], query: str) -> Any:
    import torch

    with torch.no_grad():
        inputs = encoder.processor.process_queries(queries=[query]).to(encoder.device)
        vectors = list(torch.unbind(encoder.model(**inputs).to("cpu")))
    return encoder.processor.score_multi_vector(vectors, pages, batch_size=128, device="cpu").topk(
        min(10, len(pages)), dim=1
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path)
    parser.add_argument("--pages", type=int, default=64)
    parser.add_argument("--queries", type=int, default=16)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--pool-factor", type=int, default=3)
    parser.add_argument("--size", type=int, default=448)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if importlib.util.find_spec("colpali_engine") is None:
        print("colpali-engine is not installed (pip install 'ragbench[vision]'): nothing measured")
        return
    from ragbench._retrieval.pages.late_interaction import ColEngineEncoder, LateInteractionRetriever

    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        if args.quick:
            args.pages, args.queries, args.size, args.pool_factor = 8, 4, 64, 2
            args.model = tiny_colpali(work / "model")
        if args.model is None:
            parser.error("--model DIR (a colpali-engine model saved locally), or --quick")
        pages = draw_pages(work / "pages", args.pages, args.size)
        encoder = ColEngineEncoder(str(args.model), args.device, args.dtype)
        upstream_query(encoder, upstream_encode(encoder, pages[:1], 1), "warm-up")  # first calls off the clock
        started = time.perf_counter()
        upstream = upstream_encode(encoder, pages, args.batch)
        upstream_seconds = time.perf_counter() - started
        built: dict[int, Any] = {}
        seconds: dict[int, float] = {}
        for pool_factor in (1, args.pool_factor):
            started = time.perf_counter()
            built[pool_factor] = LateInteractionRetriever(
                pages=str(work / "pages"), index=str(work / f"index{pool_factor}"), encoder=encoder,
                batch_size=args.batch, query_batch_size=1, pool_factor=pool_factor, device=args.device,
            )  # fmt: skip
            seconds[pool_factor] = time.perf_counter() - started
        queries = [f"tolls of page {n} census" for n in range(args.queries)]
        started = time.perf_counter()
        for query in queries:
            upstream_query(encoder, upstream, query)
        upstream_latency = (time.perf_counter() - started) / len(queries)
        started = time.perf_counter()
        for query in queries:
            built[1].search([query], 10)
        latency = (time.perf_counter() - started) / len(queries)
        sizes = {
            factor: json.loads((work / f"index{factor}" / "manifest.json").read_text())["files"]["vectors.safetensors"]
            / args.pages
            for factor in built
        }
        load = " ".join(f"{value:.2f}" for value in os.getloadavg())
        print(f"{args.pages} pages of {args.size}x{args.size}, model {args.model.name}, {args.dtype}, batch {args.batch}, "
              f"device {args.device}; load average {load} on {os.cpu_count()} CPUs")  # fmt: skip
        print("| measure | ragbench colpali | colpali-engine (as vidore-benchmark) | ratio |")
        print("|---|---:|---:|---:|")
        rate, upstream_rate = args.pages / seconds[1], args.pages / upstream_seconds
        print(f"| index build, pages/s | {rate:.1f} | {upstream_rate:.1f} | {rate / upstream_rate:.2f} |")
        print(
            f"| query latency, ms | {latency * 1000:.1f} | {upstream_latency * 1000:.1f} | {latency / upstream_latency:.2f} |"
        )
        print(f"| bytes a page, no pooling | {sizes[1]:,.0f} | | |")
        print(f"| bytes a page, pool factor {args.pool_factor} | {sizes[args.pool_factor]:,.0f} | | "
              f"{sizes[args.pool_factor] / sizes[1]:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
