"""Per-example retrievers (`example_bm25`, `example_dense`) against `provided`: the cost of a query on
a HotpotQA-distractor-shaped set.

Each question has 10 passages (HotpotQA's distractor setting), each a 1-3 word title and 3-5
sentences of 12-25 words (HotpotQA's paragraphs average about 4 sentences), words Zipf-drawn from
the ~20,000 English words of MiniLM's vocabulary (as retrieval_build.py). Every example sends
`--rounds` queries one after another (a multi-step system: the question, then queries with other
words), through `ctx.retriever` as in a run:

  pooled      every example in flight at once: each round's queries are pooled into batches
  one by one  one example at a time: the latency a lone query sees
  direct      each round as one `search_examples` call on all examples, no event loop or pool: the
              work itself, against which the pooled rows show what the pool adds

Round 1 includes indexing the example's passages (once per example); later rounds only rank. The
last column is the longest the event loop went without running a 1 ms heartbeat coroutine while
the searches ran (the work is in the pool's worker thread, not on the loop). Each row is the least of
`--repeat` runs (other work on the machine only adds time).

Run: python benchmarks/example_retrievers.py [--questions 200] [--dense-questions 40]   (~2 min)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

import numpy as np
from retrieval_build import english_words  # a sibling script: benchmarks/ is the script's sys.path[0]

from ragbench._context import Context
from ragbench._registry import installed_registry
from ragbench._retrieval import load_retriever
from ragbench._retrieval.handle import Retrieval
from ragbench._types import Document, Example

PASSAGES = 10


def distractor_set(questions: int, seed: int = 0) -> tuple[list[Example], list[list[str]]]:
    """Examples of 10 passages each, and per example its queries (8 words of one of its passages each)."""
    rng = np.random.default_rng(seed)
    vocab = english_words()

    def words(n: int) -> list[str]:
        return list(vocab[np.minimum(rng.zipf(1.2, size=n), len(vocab)) - 1])

    examples, queries = [], []
    for q in range(questions):
        docs = []
        for p in range(PASSAGES):
            sentences = [" ".join(words(int(rng.integers(12, 26)))) + "." for _ in range(int(rng.integers(3, 6)))]
            title = " ".join(vocab[rng.integers(0, len(vocab), size=int(rng.integers(1, 4)))])
            docs.append(Document(id=f"{q}-{p}", title=title, text=" ".join(sentences)))
        examples.append(Example(id=str(q), question=" ".join(words(10)), docs=docs))
        queries.append(
            [" ".join(rng.choice(docs[int(rng.integers(0, PASSAGES))].text.split(), size=8)) for _ in range(8)]
        )
    return examples, queries


async def measure(
    retriever, examples: list[Example], queries: list[list[str]], rounds: int, mode: str
) -> tuple[list[float], float]:
    """Seconds spent in each round (summed over examples when one by one) and the longest loop stall."""
    retrieval = Retrieval(retriever)
    bound = [retrieval.bind(Context(llm=None, task=None), example) for example in examples]  # type: ignore[arg-type]
    spent = [0.0] * rounds
    stall, stop = 0.0, asyncio.Event()

    async def heartbeat() -> None:
        nonlocal stall
        loop = asyncio.get_running_loop()
        last = loop.time()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = loop.time()
            stall, last = max(stall, now - last - 0.001), now

    beat = asyncio.create_task(heartbeat())
    for r in range(rounds):
        if mode == "one by one":
            for view, qs in zip(bound, queries):
                start = time.perf_counter()
                await view.search(qs[r], 5)
                spent[r] += time.perf_counter() - start
            continue
        start = time.perf_counter()
        if mode == "pooled":
            await asyncio.gather(*(view.search(qs[r], 5) for view, qs in zip(bound, queries)))
        else:  # direct: the retriever's own work on the whole round, in this thread
            retriever.search_examples([view.local for view in bound], [qs[r] for qs in queries], 5)
        spent[r] = time.perf_counter() - start
    stop.set()
    await beat
    await retrieval.close()
    return spent, stall


def fresh(examples: list[Example]) -> list[Example]:
    return [Example(id=e.id, question=e.question, docs=e.docs) for e in examples]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=200, help="questions for provided and example_bm25")
    parser.add_argument("--dense-questions", type=int, default=40, help="questions for example_dense (MiniLM on CPU)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--retrievers", default="provided,example_bm25,example_dense")
    parser.add_argument("--quick", action="store_true", help="40 questions, 2 rounds, once, bm25 and provided only")
    args = parser.parse_args()
    if args.quick:
        args.questions, args.rounds, args.repeat, args.retrievers = 40, 2, 1, "provided,example_bm25"
    examples, queries = distractor_set(max(args.questions, args.dense_questions))
    words = np.mean([len(d.text.split()) for e in examples for d in e.docs])
    print(
        f"{PASSAGES} passages per question ({words:.0f} words each on average), {args.rounds} queries per "
        f"question, k=5, least of {args.repeat}; load average {os.getloadavg()[0]:.1f} at the start"
    )
    print("| retriever | mode | round | queries | seconds | ms/query | max loop stall ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name in args.retrievers.split(","):
        n = args.dense_questions if name == "example_dense" else args.questions
        start = time.perf_counter()
        retriever = load_retriever(name, registry=installed_registry())
        asyncio.run(measure(retriever, fresh(examples[:4]), queries[:4], 1, "pooled"))  # warm up (first encoder call)
        print(f"<!-- {name}: loaded and warmed up in {time.perf_counter() - start:.1f} s -->")
        modes = ("pooled", "one by one") + (("direct",) if name != "provided" else ())
        for mode in modes:
            runs = [
                asyncio.run(measure(retriever, fresh(examples[:n]), queries[:n], args.rounds, mode))
                for _ in range(args.repeat)
            ]
            spent = [min(run[0][r] for run in runs) for r in range(args.rounds)]
            stall = min(run[1] for run in runs)
            for r, seconds in enumerate(spent, 1):
                print(
                    f"| {name} | {mode} | {r}{' (indexes)' if r == 1 else ''} | {n} | {seconds:.3f} | "
                    f"{1000 * seconds / n:.2f} | {1000 * stall:.1f} |"
                )
        retriever.close()
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
