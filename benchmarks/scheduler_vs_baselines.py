"""Scheduler vs. one-call-at-a-time vs. stage-by-stage batching (docs/performance.md, "The scheduler").

A multi-step RAG-like workload (LLatrieval-style verify loop): every example runs 1..4
iterations of two dependent calls, "select" then "verify" (the verify answer decides whether to
loop again), then one "answer" call. The engine is ScriptedEngine with the cost model
`overhead + per_request * n` per batch (batch limit B); its answers are derived from the prompt,
so every loop decision is deterministic and the final answers of all modes must be identical.

  (a) one call at a time: the per-example code, examples one after another, engine.generate([req])
  (b) stage by stage (FlashRAG): all active examples do step k together, chunked at B
  (c) ragbench: the same per-example async code, all examples in flight through Scheduler
  (c') the same with the largest group always served first (no ageing): what fairness costs or saves
  (d) lower bound: ceil(calls / B) * overhead + calls * per_request
  (d') the lower bound for requests that share a batch only with their own sampling settings:
      sum over settings g of ceil(calls_g / B) * overhead + calls * per_request
  (d'') (d') aware of the examples' dependent calls: sum over settings g of
      max(ceil(calls_g / B), chain_g) * overhead + calls * per_request, chain_g the most calls of
      setting g any one example makes

(d'') is a lower bound for any scheduler that batches only requests of one sampling setting and runs
one batch at a time on the engine, as ScriptedEngine does. Every batch belongs to one setting, so the
batches are the sum over settings of the batches of each. Setting g needs ceil(calls_g / B) batches to
hold its calls, and also chain_g of them: an example's calls are sequential (call k+1 is sent only
after call k has returned, so after call k's batch has ended), so no two calls of one example can share
a batch, and the example with the most calls of setting g needs that many batches of g. Batches run
one after another, each costing overhead + per_request * n, so the time is at least the batches times
the overhead plus every call's per_request. (d') drops the chains; on the default workload they never
bind (every setting has hundreds of calls), but a setting only a few examples use needs as many
batches as the longest chain among them, however few its calls.

--minority F gives a fraction F of the examples other sampling settings (top_p 0.95) for every call,
so their requests can share batches only with each other: the workload where serving the largest
group alone starves them. Next to the time, (c) and (c') show the worst wait of any request in
batches (batches dispatched before its own; ragbench._scheduler.AGE_LIMIT bounds it).

Mode (a) costs ~calls * (overhead + per_request) (about 2 minutes at the defaults), so by
default it runs on the first --sequential-examples examples and is extrapolated to all of them
by its measured time per call; pass --sequential-examples 0 to run it on every example.

Run: python benchmarks/scheduler_vs_baselines.py [--examples 512 --overhead 0.05 ...]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import math
import random
import statistics
import time
from dataclasses import dataclass

from ragbench._engines.scripted import ScriptedEngine
from ragbench._in_flight import ExamplesInFlight
from ragbench._llm import LLM
from ragbench._scheduler import AGE_LIMIT, Scheduler
from ragbench._values.engine_errors import EngineError
from ragbench._values.llm_request import Request
from ragbench._values.llm_responses import Response
from ragbench._values.sampling import Sampling

MAX_ITERATIONS = 4
WORDS = (
    "who what river city born film album director capital population year wrote sang "
    "played married founded located occupation country genre author team"
).split()


# --- workload ---------------------------------------------------------------------------------
@dataclass
class Item:
    index: int
    plan: int  # iterations the verify step will ask for (1..4), encoded in the prompt
    question: str
    top_p: float = 1.0  # the minority's other sampling setting: its calls batch only with each other


MINORITY_TOP_P = 0.95


def make_workload(n: int, seed: int, weights: list[float], minority: float = 0.0) -> list[Item]:
    rng, minority_rng = random.Random(seed), random.Random(f"{seed}:minority")  # the same plans either way
    items = []
    for i in range(n):
        plan = rng.choices(range(1, MAX_ITERATIONS + 1), weights=weights)[0]
        question = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 60))) + "?"
        items.append(Item(i, plan, question, MINORITY_TOP_P if minority_rng.random() < minority else 1.0))
    return items


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def select_prompt(item: Item, iteration: int, evidence: list[str]) -> str:
    return (
        f"step: select\nexample: {item.index}\nplan: {item.plan}\niteration: {iteration}\n"
        f"evidence so far: {' | '.join(evidence) or '-'}\nquestion: {item.question}\n"
        "Select the passages that support an answer."
    )


def verify_prompt(item: Item, iteration: int, selected: str) -> str:
    return (
        f"step: verify\nexample: {item.index}\nplan: {item.plan}\niteration: {iteration}\n"
        f"selected: {selected}\nquestion: {item.question}\n"
        "Do the selected passages suffice? Answer STOP or CONTINUE."
    )


def answer_prompt(item: Item, evidence: list[str]) -> str:
    return (
        f"step: answer\nexample: {item.index}\nevidence: {' | '.join(evidence)}\n"
        f"question: {item.question}\nAnswer the question."
    )


def script(request: Request) -> str:
    """The simulated model: deterministic text derived from the prompt."""
    prompt = request.prompt or ""
    fields = dict(line.split(": ", 1) for line in prompt.split("\n") if ": " in line)
    step = fields["step"]
    if step == "select":
        return f"sel{fields['example']}.{fields['iteration']}:{_digest(prompt)}"
    if step == "verify":
        more = int(fields["iteration"]) < int(fields["plan"])
        return ("CONTINUE" if more else "STOP") + f" ({_digest(prompt)})"
    if step == "answer":
        return f"ans{fields['example']}:{_digest(prompt)}"
    raise EngineError(f"unknown step {step!r}")


@dataclass
class Tokens:
    select: int
    verify: int
    answer: int


# --- (a) and (c): the per-example code, written once -------------------------------------------
async def run_example(item: Item, llm, tokens: Tokens) -> str:
    """One example, as a ragbench system is written: a verify loop, then the answer."""
    evidence: list[str] = []
    for iteration in range(1, MAX_ITERATIONS + 1):
        selected = (
            await llm.generate(
                select_prompt(item, iteration, evidence), step="select", max_tokens=tokens.select, top_p=item.top_p
            )
        ).text
        evidence.append(selected)
        verdict = (
            await llm.generate(
                verify_prompt(item, iteration, selected), step="verify", max_tokens=tokens.verify, top_p=item.top_p
            )
        ).text
        if verdict.startswith("STOP"):
            break
    return (
        await llm.generate(answer_prompt(item, evidence), step="answer", max_tokens=tokens.answer, top_p=item.top_p)
    ).text


class OneCallLLM:
    """Same interface as ragbench's LLM handle; every call is its own engine batch, synchronously."""

    def __init__(self, engine: ScriptedEngine) -> None:
        self.engine = engine

    async def generate(self, prompt: str, *, step: str = "generate", **sampling) -> Response:
        result = self.engine.generate([Request(prompt=prompt, sampling=Sampling.make(**sampling))])[0]
        if isinstance(result, Exception):
            raise result
        return result


def run_one_at_a_time(items: list[Item], engine: ScriptedEngine, tokens: Tokens) -> list[str]:
    llm = OneCallLLM(engine)

    async def sequential() -> list[str]:
        return [await run_example(item, llm, tokens) for item in items]

    return asyncio.run(sequential())


def run_scheduler(
    items: list[Item], engine: ScriptedEngine, tokens: Tokens, age_limit: int = AGE_LIMIT
) -> tuple[list[str], Scheduler]:
    async def everything() -> tuple[list[str], Scheduler]:
        examples = ExamplesInFlight()  # as a run does: a batch waits until every example has queued its call
        scheduler = Scheduler(cache=None, age_limit=age_limit, examples=examples)
        llm = LLM(scheduler, engine)

        async def in_slot(item: Item) -> str:
            with examples.slot():
                return await run_example(item, llm, tokens)

        try:
            answers = await asyncio.gather(*(in_slot(item) for item in items))
        finally:
            await scheduler.close()
        return list(answers), scheduler

    return asyncio.run(everything())


# --- (b) stage by stage -------------------------------------------------------------------------
def generate_stage(
    engine: ScriptedEngine, prompts: list[str], top_ps: list[float], max_tokens: int, batch: int
) -> list[str]:
    """One stage: the prompts of each sampling setting chunked at `batch`, answers in prompt order."""
    texts: dict[int, str] = {}
    for top_p in sorted(set(top_ps)):
        indices = [i for i, p in enumerate(top_ps) if p == top_p]
        sampling = Sampling.make(max_tokens=max_tokens, top_p=top_p)
        for start in range(0, len(indices), batch):
            chunk = indices[start : start + batch]
            for i, result in zip(
                chunk, engine.generate([Request(prompt=prompts[i], sampling=sampling) for i in chunk])
            ):
                if isinstance(result, Exception):
                    raise result
                texts[i] = result.text
    return [texts[i] for i in range(len(prompts))]


def run_stage_by_stage(items: list[Item], engine: ScriptedEngine, tokens: Tokens, batch: int) -> list[str]:
    """FlashRAG-style: the whole (active) dataset moves one step at a time; finished examples drop out."""
    evidence: list[list[str]] = [[] for _ in items]
    active = list(range(len(items)))
    for iteration in range(1, MAX_ITERATIONS + 1):
        if not active:
            break
        top_ps = [items[i].top_p for i in active]
        selected = generate_stage(
            engine, [select_prompt(items[i], iteration, evidence[i]) for i in active], top_ps, tokens.select, batch
        )
        for i, text in zip(active, selected):
            evidence[i].append(text)
        verdicts = generate_stage(
            engine, [verify_prompt(items[i], iteration, evidence[i][-1]) for i in active], top_ps, tokens.verify, batch
        )
        active = [i for i, verdict in zip(active, verdicts) if not verdict.startswith("STOP")]
    return generate_stage(
        engine,
        [answer_prompt(item, evidence[item.index]) for item in items],
        [item.top_p for item in items],
        tokens.answer,
        batch,
    )


# --- reporting ----------------------------------------------------------------------------------
@dataclass
class Row:
    name: str
    seconds: float
    batches: int
    calls: int
    note: str = ""
    worst_wait: int | None = None  # batches a request waited behind others (the scheduler's rows)

    @property
    def mean_batch(self) -> float:
        return self.calls / self.batches if self.batches else 0.0


def example_calls(item: Item, tokens: Tokens) -> dict[tuple[int, float], int]:
    """One example's calls per sampling setting (max_tokens of the step, top_p of the example): what may
    share a batch."""
    out: dict[tuple[int, float], int] = {}
    for max_tokens, count in ((tokens.select, item.plan), (tokens.verify, item.plan), (tokens.answer, 1)):
        out[(max_tokens, item.top_p)] = out.get((max_tokens, item.top_p), 0) + count
    return out


def calls_by_sampling(items: list[Item], tokens: Tokens) -> dict[tuple[int, float], int]:
    """Calls per sampling setting, all examples together."""
    out: dict[tuple[int, float], int] = {}
    for item in items:
        for setting, count in example_calls(item, tokens).items():
            out[setting] = out.get(setting, 0) + count
    return out


def longest_chains(items: list[Item], tokens: Tokens) -> dict[tuple[int, float], int]:
    """Per sampling setting, the most calls of that setting one example makes: calls that must each
    have a batch of their own, one after another (see (d'') in the module docstring)."""
    out: dict[tuple[int, float], int] = {}
    for item in items:
        for setting, count in example_calls(item, tokens).items():
            out[setting] = max(out.get(setting, 0), count)
    return out


def sampling_bound_batches(items: list[Item], tokens: Tokens, batch: int) -> int:
    """(d')'s batches: sum over sampling settings g of ceil(calls_g / B)."""
    return sum(math.ceil(n / batch) for n in calls_by_sampling(items, tokens).values())


def chain_bound_batches(items: list[Item], tokens: Tokens, batch: int) -> int:
    """(d'')'s batches: sum over sampling settings g of max(ceil(calls_g / B), longest chain of g)."""
    chains = longest_chains(items, tokens)
    return sum(max(math.ceil(n / batch), chains[setting]) for setting, n in calls_by_sampling(items, tokens).items())


def make_engine(args) -> ScriptedEngine:
    return ScriptedEngine(
        "scheduler-bench",
        script=script,
        overhead=args.overhead,
        per_request=args.per_request,
        batch_size=args.batch_size,
    )


def batch_histogram(sizes: list[int], limit: int) -> str:
    full = sum(1 for s in sizes if s == limit)
    partial = sorted((s for s in sizes if s < limit), reverse=True)
    return f"{full} full, {len(partial)} partial {partial[:20]}{' ...' if len(partial) > 20 else ''}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--examples", type=int, default=512)
    parser.add_argument("--overhead", type=float, default=0.05, help="seconds per batch")
    parser.add_argument("--per-request", type=float, default=0.002, help="seconds per request in a batch")
    parser.add_argument("--batch-size", "-B", type=int, default=32, help="engine batch limit B")
    parser.add_argument(
        "--weights", default="0.6,0.25,0.1,0.05", help="probabilities of 1,2,3,4 verify-loop iterations"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--max-tokens",
        default="64,8,128",
        help="max_tokens of select,verify,answer; different values = different "
        "sampling groups for the scheduler; 'same' = 64 for every step",
    )
    parser.add_argument(
        "--sequential-examples",
        type=int,
        default=128,
        help="run (a) on the first N examples and extrapolate by time per call "
        "(0 = all examples; ~2 minutes at the defaults)",
    )
    parser.add_argument(
        "--minority",
        type=float,
        default=0.0,
        help=f"fraction of examples whose calls use other sampling settings (top_p {MINORITY_TOP_P})",
    )
    parser.add_argument("--show-batches", action="store_true", help="print the scheduler's batch sizes")
    parser.add_argument("--quick", action="store_true", help="a small run for CI (16 examples, (a) on 2)")
    args = parser.parse_args()
    if args.quick:
        args.examples, args.sequential_examples = 16, 2

    weights = [float(w) for w in args.weights.split(",")]
    if len(weights) != MAX_ITERATIONS:
        parser.error(f"--weights needs {MAX_ITERATIONS} values")
    tokens = Tokens(64, 64, 64) if args.max_tokens == "same" else Tokens(*map(int, args.max_tokens.split(",")))
    items = make_workload(args.examples, args.seed, weights, args.minority)
    plans = [item.plan for item in items]
    calls = sum(2 * p + 1 for p in plans)
    minority_calls = sum(2 * item.plan + 1 for item in items if item.top_p != 1.0)
    B = args.batch_size
    print(
        f"workload: {len(items)} examples, iterations 1..4 = "
        f"{[plans.count(k) for k in range(1, MAX_ITERATIONS + 1)]} (mean {statistics.mean(plans):.2f}), "
        f"{calls} calls ({minority_calls} with top_p {MINORITY_TOP_P}); cost {args.overhead}s + "
        f"{args.per_request}s*n per batch, B={B}; max_tokens select/verify/answer = "
        f"{tokens.select}/{tokens.verify}/{tokens.answer}"
    )

    # (c) first, so a broken scheduler shows up before the slow sequential baseline
    def scheduler_row(name: str, age_limit: int) -> tuple[Row, list[str], list[int]]:
        engine = make_engine(args)
        started = time.perf_counter()
        answers, scheduler = run_scheduler(items, engine, tokens, age_limit)
        seconds = time.perf_counter() - started
        assert scheduler.stats.batches == len(engine.batch_sizes)
        sizes = list(engine.batch_sizes)
        return (
            Row(name, seconds, len(sizes), sum(sizes), batch_histogram(sizes, B), scheduler.stats.max_wait_batches),
            answers,
            sizes,
        )

    row_c, answers_c, sizes_c = scheduler_row("(c) ragbench Scheduler", AGE_LIMIT)
    row_c_largest, answers_c_largest, _ = scheduler_row("(c') largest group only", 10**9)

    engine = make_engine(args)
    started = time.perf_counter()
    answers_b = run_stage_by_stage(items, engine, tokens, B)
    row_b = Row(
        "(b) stage by stage",
        time.perf_counter() - started,
        len(engine.batch_sizes),
        sum(engine.batch_sizes),
        batch_histogram(engine.batch_sizes, B),
    )

    subset = items if args.sequential_examples <= 0 else items[: args.sequential_examples]
    engine = make_engine(args)
    started = time.perf_counter()
    answers_a = run_one_at_a_time(subset, engine, tokens)
    seconds_a = time.perf_counter() - started
    calls_a = sum(engine.batch_sizes)
    if len(subset) < len(items):
        row_a = Row(
            "(a) one call at a time*",
            seconds_a * calls / calls_a,
            calls,
            calls,
            f"* measured {seconds_a:.2f}s for {len(subset)} examples / {calls_a} calls, scaled to {calls} calls",
        )
    else:
        row_a = Row("(a) one call at a time", seconds_a, len(engine.batch_sizes), calls_a)

    bound_batches = math.ceil(calls / B)
    row_d = Row(
        "(d) lower bound",
        bound_batches * args.overhead + calls * args.per_request,
        bound_batches,
        calls,
        "ceil(calls/B)*overhead + calls*per_request",
    )
    group_batches = sampling_bound_batches(items, tokens, B)
    row_d_groups = Row(
        "(d') bound by sampling",
        group_batches * args.overhead + calls * args.per_request,
        group_batches,
        calls,
        "sum over sampling settings g of ceil(calls_g/B), same cost model",
    )
    chain_batches = chain_bound_batches(items, tokens, B)
    row_d_chains = Row(
        "(d'') bound with chains",
        chain_batches * args.overhead + calls * args.per_request,
        chain_batches,
        calls,
        "sum over settings g of max(ceil(calls_g/B), longest chain of g)",
    )
    rows = [row_a, row_b, row_c, row_c_largest, row_d, row_d_groups, row_d_chains]

    # the three ways must compute the same thing
    assert row_b.calls == row_c.calls == calls, (row_b.calls, row_c.calls, calls)
    assert answers_b == answers_c == answers_c_largest, "stage-by-stage and scheduler answers differ"
    assert answers_a == answers_c[: len(subset)], "one-at-a-time and scheduler answers differ"
    print(f"answers identical: (b) == (c) for {len(items)} examples, (a) == (c) for {len(subset)}")
    assert min(row.batches for row in (row_a, row_b, row_c, row_c_largest)) >= chain_batches, "below the bound (d'')"

    print()
    print(f"{'mode':<26} {'wall s':>8} {'batches':>8} {'mean batch':>11} {'worst wait':>11}   batches")
    for row in rows:
        wait = "-" if row.worst_wait is None else str(row.worst_wait)
        print(f"{row.name:<26} {row.seconds:8.2f} {row.batches:8d} {row.mean_batch:11.2f} {wait:>11}   {row.note}")
    print()
    print(
        f"(a)/(c) = {row_a.seconds / row_c.seconds:.2f}   (b)/(c) = {row_b.seconds / row_c.seconds:.3f}   "
        f"(c)/(d) = {row_c.seconds / row_d.seconds:.3f}   (c)/(d') = {row_c.seconds / row_d_groups.seconds:.3f}   "
        f"(c')/(d') = {row_c_largest.seconds / row_d_groups.seconds:.3f}   (b)/(d) = {row_b.seconds / row_d.seconds:.3f}"
    )
    print(
        f"against the bound with chains (d''): (c)/(d'') = {row_c.seconds / row_d_chains.seconds:.3f}   "
        f"(c')/(d'') = {row_c_largest.seconds / row_d_chains.seconds:.3f}   "
        f"(b)/(d'') = {row_b.seconds / row_d_chains.seconds:.3f}; batches (c) - (d'') = "
        f"{row_c.batches - row_d_chains.batches}"
    )
    print(
        f"worst wait of a request: {row_c.worst_wait} batches with ageing (AGE_LIMIT {AGE_LIMIT}), "
        f"{row_c_largest.worst_wait} serving the largest group only"
    )
    if args.show_batches:
        print("scheduler batch sizes:", sizes_c)


if __name__ == "__main__":
    main()
