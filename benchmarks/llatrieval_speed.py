"""LLatrieval on ASQA-shaped data: ragbench vs one call at a time vs stage-by-stage batching vs the
lower bound.

The workload is the real system (`ragbench.plugins.llatrieval.system.LLatrieval`, code defaults: retrieve 100,
summarise 50, selection windows of 20 keeping 5, verification, missing-info query, up to 4 iterations,
final ALCE answer) on 948 synthetic ASQA questions. The engine is ScriptedEngine with the cost model
`overhead + per_request * n` per batch (limit B); the retriever is simulated with the same kind of
cost model. The scripted model answers every step from the prompt (so every mode must produce the
same selections and answers; the script checks it) and its verifier passes an example at the
iteration its plan says, which reproduces the paper's Table 5 (passage style, ASQA): 948 -> 169 ->
105 -> 84 examples active in iterations 1..4.

  (a) one call at a time: the system's per-example code, examples one after another, every chat call
      one engine batch and every search one retriever call
  (b) stage by stage (FlashRAG-style): all active examples do each step together - retrieval, all
      summaries, each selection window round, verification, query updates - chunked at B
  (c) ragbench: the same per-example code as (a), `max_inflight` examples in flight through the
      Scheduler (LLM) and the pooled retrieval handle, as the Evaluator runs them
  (d) lower bound: ceil(calls / B) * overhead + calls * per_request (LLM; the retriever's bound is
      smaller and runs on its own thread, so it is not added)

(a) runs on the first --sequential-examples examples and is scaled to all by its measured time per
LLM call (its cost is about calls * (overhead + per_request)).

Run: python benchmarks/llatrieval_speed.py [--examples 948 --overhead 0.02 --per-request 0.0005 -B 64]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import math
import random
import re
import time

from ragbench._context import Context
from ragbench._engines.scripted import ScriptedEngine
from ragbench._llm import LLM
from ragbench._retrieval.base import Retriever
from ragbench._retrieval.handle import Retrieval
from ragbench._run.evaluator import sample_record
from ragbench._scheduler import Scheduler
from ragbench._types import Document, Example
from ragbench._values.llm_request import Request
from ragbench._values.llm_responses import Response
from ragbench._values.sampling import Sampling
from ragbench.plugins.llatrieval.prompts import (
    JUDGE_SYSTEM,
    SELECT_SYSTEM,
    SUMMARY_KEY,
    UPDATE_SYSTEM,
    asqa_demonstration,
    candidates_message,
    chat,
    collapse_whitespace,
    parse_selection,
    summary_messages,
    update_message,
)
from ragbench.plugins.llatrieval.system import LLatrieval
from ragbench.tasks.alce.tasks import AlceAsqa

TABLE5_ASQA = (948, 169, 105, 84)  # examples in iterations 1..4 (paper Table 5, passage style)
WORDS = (
    "rain record monsoon village district india album song film director released season "
    "team league award river mountain capital island election party century war treaty"
).split()


def digest(text: str, n: int = 8) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:n]


def words(seed: str, n: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(n))


# --- workload -----------------------------------------------------------------------------------------
def make_examples(n: int, seed: int) -> tuple[list[Example], dict[int, int]]:
    """ASQA-shaped questions (2-4 gold sub-questions) and each one's plan: the iteration whose
    documents pass verification (4 = never verified), in the shares of Table 5."""
    active = [round(count * n / TABLE5_ASQA[0]) for count in TABLE5_ASQA]
    plans = (
        [1] * (active[0] - active[1]) + [2] * (active[1] - active[2]) + [3] * (active[2] - active[3]) + [4] * active[3]
    )
    random.Random(seed).shuffle(plans)
    examples = []
    for i in range(n):
        rng = random.Random(f"{seed}-{i}")
        question = f"[ex{i}] Who {words(f'q{i}', rng.randint(5, 14))}?"
        pairs = [
            {"question": f"{question} (sense {j + 1})", "short_answers": [f"answer {i}.{j}"]}
            for j in range(rng.randint(2, 4))
        ]
        examples.append(Example(id=str(i), question=question, gold={"qa_pairs": pairs, "answer": ""}, index=i))
    return examples, dict(enumerate(plans))


class SimulatedRetriever(Retriever):
    """100 documents per query, made from it; documents found by a query of round r say "round r"."""

    name = "simulated"
    max_batch_size = 64

    def __init__(self, overhead: float, per_query: float) -> None:
        self.overhead, self.per_query = overhead, per_query
        self.batch_sizes: list[int] = []

    def search(self, queries: list[str], k: int) -> list[list[Document]]:
        self.batch_sizes.append(len(queries))
        time.sleep(self.overhead + self.per_query * len(queries))
        out = []
        for query in queries:
            found = re.search(r"round (\d+)", query)
            tag, key = (found.group(1) if found else "0"), digest(query)
            out.append(
                [
                    Document(
                        id=f"{key}-{j}",
                        title=f"Page {key} {j}",
                        score=float(k - j),
                        text=f"Passage {key}-{j} round {tag}: {words(key + str(j), 70)}.",
                    )
                    for j in range(k)
                ]
            )
        return out


class Script:
    """The simulated model; every answer is a function of the prompt."""

    def __init__(self, plans: dict[int, int]) -> None:
        self.plans = plans

    def __call__(self, request: Request) -> str:
        system, user = request.messages[0][1], request.messages[-1][1]
        rounds = [int(r) for r in re.findall(r"round (\d+)", user)]
        if "DocSelectorGPT" in system:
            shown = user.count("\nContent:\n")
            picks = [shown] + [1 + int(digest(user + str(j)), 16) % shown for j in range(4)]
            return "Selected Documents: " + " ".join(map(str, picks))  # always keeps the newest document
        if "JudgeGPT" in system:
            example = int(re.search(r"\[ex(\d+)\]", user).group(1))
            return "[YES]" if max(rounds) + 1 >= self.plans[example] else "[NO]"
        if "missing content" in system:
            example = int(re.search(r"\[ex(\d+)\]", user).group(1))
            return f"[ex{example}] missing information, round {max(rounds) + 1}: {words(user[-200:], 12)}"
        if "proper citations" in system:
            return f"Answer {digest(user)} [1][2]."
        title = re.search(r"Title: (.*)", user).group(1)
        return f"  Summary of {title}, round {rounds[-1]}: {words(title, 35)}. "


# --- (a) and (c): the system's own per-example code ----------------------------------------------------
class OneCallLLM:
    """ctx.llm for (a): every call is its own engine batch, synchronously."""

    def __init__(self, engine: ScriptedEngine) -> None:
        self.engine = engine

    async def chat(self, messages, *, step: str = "chat", **sampling) -> Response:
        result = self.engine.generate([Request.chat(messages, Sampling.make(**sampling))])[0]
        if isinstance(result, Exception):
            raise result
        return result


class OneCallRetrieval:
    """ctx.retriever for (a): every search is its own retriever call."""

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever

    async def search(self, query: str, k: int, *, step: str = "retrieve") -> list[Document]:
        return self.retriever.search([query], k)[0]


def run_one_at_a_time(system, examples, task, engine, retriever):
    async def sequential():
        out = []
        for example in examples:
            ctx = Context(llm=OneCallLLM(engine), task=task)
            ctx.retriever = OneCallRetrieval(retriever)
            out.append(await system.run(example, ctx))
        return out

    return asyncio.run(sequential())


def run_ragbench(system, examples, task, engine, retriever, max_inflight: int):
    """As Evaluator._execute: `max_inflight` workers take the next example when theirs is done."""

    async def everything():
        scheduler, retrieval = Scheduler(cache=None), Retrieval(retriever)
        pending, out = iter(examples), {}

        async def worker():
            for example in pending:
                ctx = Context(llm=LLM(scheduler, engine), task=task)
                ctx.llm = ctx.llm.traced(ctx.trace)
                ctx.retriever = retrieval.bind(ctx, example)
                prediction = await system.run(example, ctx)
                prediction.trace = ctx.trace
                out[example.index] = prediction

        try:
            await asyncio.gather(*(worker() for _ in range(max_inflight)))
        finally:
            await scheduler.close()
            await retrieval.close()
        return [out[e.index] for e in examples]

    return asyncio.run(everything())


# --- (b) stage by stage --------------------------------------------------------------------------------
def generate(engine, requests: list[Request], batch: int) -> list[str]:
    texts = []
    for start in range(0, len(requests), batch):
        for result in engine.generate(requests[start : start + batch]):
            if isinstance(result, Exception):
                raise result
            texts.append(result.text)
    return texts


def run_stage_by_stage(system: LLatrieval, examples, task, engine, retriever, batch: int):
    """The same algorithm, reorganised so that every active example does each step together."""
    sampling = {
        name: Sampling.make(max_tokens=tokens, temperature=0.0)
        for name, tokens in (
            ("summarize", system.summary_max_tokens),
            ("select", system.select_max_tokens),
            ("verify", system.verify_max_tokens),
            ("update", system.update_max_tokens),
        )
    }
    questions = {e.index: system.questions(e) for e in examples}
    text = {i: "\n".join(q) for i, q in questions.items()}
    selected: dict[int, list[Document]] = {e.index: [] for e in examples}
    judge = JUDGE_SYSTEM.replace("{Demo}", asqa_demonstration())
    active = [e.index for e in examples]
    for t in range(system.max_iterations):
        if t == 0:
            queries = [text[i] for i in active]
        else:
            queries = generate(
                engine,
                [
                    Request.chat(
                        chat(UPDATE_SYSTEM[system.query_style], update_message(text[i], selected[i])),
                        sampling["update"],
                    )
                    for i in active
                ],
                batch,
            )
        retrieved = []
        for start in range(0, len(queries), retriever.max_batch_size):
            retrieved += retriever.search(queries[start : start + retriever.max_batch_size], system.retrieve_top)
        pairs = [(i, doc) for i, docs in zip(active, retrieved) for doc in docs[: system.summarize_top]]
        summaries = generate(
            engine,
            [
                Request.chat(summary_messages(text[i], doc, system.summary_style), sampling["summarize"])
                for i, doc in pairs
            ],
            batch,
        )
        for (_, doc), summary in zip(pairs, summaries):
            doc.metadata[SUMMARY_KEY] = collapse_whitespace(summary)
        to_browse = {i: (selected[i] if t else []) + docs[: system.doc_num] for i, docs in zip(active, retrieved)}
        kept: dict[int, list[Document]] = {i: [] for i in active}
        while any(to_browse.values()):  # one selection window of every example that has documents left
            round_ids, shown_lists, requests = [], [], []
            for i in active:
                if not to_browse[i]:
                    continue
                take = system.window_size - len(kept[i])
                shown, deferred = system.fit(questions[i], kept[i], to_browse[i][:take])
                to_browse[i] = deferred + to_browse[i][take:]
                round_ids.append(i)
                shown_lists.append(shown)
                requests.append(
                    Request.chat(
                        chat(SELECT_SYSTEM, candidates_message(questions[i], shown, system.k, system.use_title)),
                        sampling["select"],
                    )
                )
            for i, shown, reply in zip(round_ids, shown_lists, generate(engine, requests, batch)):
                kept[i] = [shown[j] for j in parse_selection(reply, len(shown), system.k)]
        for i in active:
            selected[i] = kept[i]
        if t == system.max_iterations - 1:
            break
        verdicts = generate(
            engine,
            [
                Request.chat(
                    chat(judge, candidates_message(questions[i], selected[i][: system.k], system.k, system.use_title)),
                    sampling["verify"],
                )
                for i in active
            ],
            batch,
        )
        active = [i for i, verdict in zip(active, verdicts) if "[YES]" not in verdict]
        if not active:
            break
    answer_sampling = Sampling.make(
        max_tokens=system.answer_max_tokens, temperature=system.answer_temperature, top_p=1.0
    )
    prompting = task.prompting
    prompts = [
        prompting.chat_messages(prompting.build_prompt(e, selected[e.index], shot=system.answer_shot)) for e in examples
    ]
    answers = generate(engine, [Request.chat(m, answer_sampling) for m in prompts], batch)
    return [(prompting.postprocess(a), [d.id for d in selected[e.index]]) for e, a in zip(examples, answers)]


# --- reporting -----------------------------------------------------------------------------------------
def outcome(predictions) -> list[tuple[str, list[str]]]:
    return [(p.answer, [d.id for d in p.docs]) for p in predictions]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--examples", type=int, default=948)
    parser.add_argument("--overhead", type=float, default=0.02, help="seconds per engine batch")
    parser.add_argument("--per-request", type=float, default=0.0005, help="seconds per request in a batch")
    parser.add_argument("--batch-size", "-B", type=int, default=64, help="engine batch limit B")
    parser.add_argument("--retrieval-overhead", type=float, default=0.005, help="seconds per search call")
    parser.add_argument("--retrieval-per-query", type=float, default=0.0005, help="seconds per query in a search")
    parser.add_argument("--max-inflight", type=int, default=64, help="examples in flight in (c) (the CLI default)")
    parser.add_argument("--sequential-examples", type=int, default=24, help="examples (a) runs, then scales")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a small run for CI (12 examples, (a) on 2)")
    args = parser.parse_args()
    if args.quick:
        args.examples, args.sequential_examples = 12, 2

    examples, plans = make_examples(args.examples, args.seed)
    task, system, script = AlceAsqa(data_path="(benchmark)"), LLatrieval(), Script(plans)
    B = args.batch_size

    def engine():
        return ScriptedEngine(
            "llatrieval-bench", script=script, overhead=args.overhead, per_request=args.per_request, batch_size=B
        )

    def retriever():
        return SimulatedRetriever(args.retrieval_overhead, args.retrieval_per_query)

    # (c) first: its records give the workload's shape
    engine_c, retriever_c = engine(), retriever()
    started = time.perf_counter()
    predictions = run_ragbench(system, examples, task, engine_c, retriever_c, args.max_inflight)
    seconds_c = time.perf_counter() - started
    stats = system.statistics([sample_record(e, p) for e, p in zip(examples, predictions)])
    calls, queries = sum(engine_c.batch_sizes), sum(retriever_c.batch_sizes)
    print(
        f"workload: {len(examples)} ASQA-shaped examples; examples per iteration {stats['examples_per_iteration']}; "
        f"document candidates per example {stats['document_candidates_per_example']}; LLM calls per example "
        f"{stats['llm_calls_per_example']}"
    )
    print(
        f"{calls} LLM calls, {queries} search queries; engine {args.overhead}s + {args.per_request}s*n per batch, "
        f"B={B}; retriever {args.retrieval_overhead}s + {args.retrieval_per_query}s*n per search (<= 64 queries)"
    )

    engine_b, retriever_b = engine(), retriever()
    started = time.perf_counter()
    staged = run_stage_by_stage(system, examples, task, engine_b, retriever_b, B)
    seconds_b = time.perf_counter() - started

    subset = examples[: args.sequential_examples] if args.sequential_examples > 0 else examples
    engine_a, retriever_a = engine(), retriever()
    started = time.perf_counter()
    sequential = run_one_at_a_time(system, subset, task, engine_a, retriever_a)
    seconds_a = time.perf_counter() - started
    calls_a = sum(engine_a.batch_sizes)
    scaled_a = seconds_a * calls / calls_a

    assert staged == outcome(predictions), "stage-by-stage and ragbench selections/answers differ"
    assert outcome(sequential) == outcome(predictions)[: len(subset)], "one-at-a-time and ragbench differ"
    assert sum(engine_b.batch_sizes) == calls, (sum(engine_b.batch_sizes), calls)
    print(f"identical selections and answers: (b) == (c) for {len(examples)} examples, (a) == (c) for {len(subset)}")

    bound_batches = math.ceil(calls / B)
    bound = bound_batches * args.overhead + calls * args.per_request
    rows = [
        (
            "(a) one call at a time*",
            scaled_a,
            calls,
            calls,
            f"* measured {seconds_a:.2f}s for {len(subset)} examples / {calls_a} calls, scaled to {calls} calls",
        ),
        ("(b) stage by stage", seconds_b, len(engine_b.batch_sizes), calls, f"{len(retriever_b.batch_sizes)} searches"),
        ("(c) ragbench", seconds_c, len(engine_c.batch_sizes), calls, f"{len(retriever_c.batch_sizes)} searches"),
        ("(d) lower bound", bound, bound_batches, calls, "ceil(calls/B)*overhead + calls*per_request"),
    ]
    print()
    print(f"{'mode':<26} {'wall s':>8} {'batches':>8} {'mean batch':>11}   notes")
    for name, seconds, batches, n, note in rows:
        print(f"{name:<26} {seconds:8.2f} {batches:8d} {n / batches:11.2f}   {note}")
    print()
    print(
        f"(a)/(c) = {scaled_a / seconds_c:.1f}   (b)/(c) = {seconds_b / seconds_c:.2f}   "
        f"(c)/(d) = {seconds_c / bound:.2f}   (b)/(d) = {seconds_b / bound:.2f}"
    )


if __name__ == "__main__":
    main()
