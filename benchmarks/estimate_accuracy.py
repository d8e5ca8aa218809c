"""How close `ragbench estimate` comes to what a run then costs: for a single-step system (vanilla), two multi-step
ones (ircot, self_ask), an agent (search_agent) and a judged metric (vanilla with llm_judge), the estimate after a
pilot (5% by default) against the whole run's actual cost once `--resume` ran the rest, figure by figure: LLM calls,
prompt and output tokens and dollars of the system's model, and of the judge. LLM calls are those sent, as the
estimate counts them (a response-cache hit costs nothing: 8 of the 1,200 questions repeat one another's prompt).

The models are scripted (tests/support/estimate_fake.py): replies of log-normal length, a varying number of steps for the
multi-step systems and 0-4 searches for the agent, each drawn from the request's own text, so the pilot and the run
that resumes it get the same replies as one run would. The task is fictional_multihop's 300 questions, repeated
`--copies` times (each copy's questions marked, so their prompts differ), searched with BM25. Prices from a price
table (the system's model at gpt-4o's list price, the judge at gpt-4o-mini's). `vanilla+long` counts the examples'
lengths by the embedded SmolLM2's tokenizer (the scripted model's `tokenizer=embedded`; ragbench._cost.estimate_tokens)
on questions 30% of which, all outside the run's pilot, carry a background of 300-600 words of no corpus word (so the
searches are those of the short question): the pilot meets none of them, the re-drawn pilots (below) some; the
pilot's mean alone is printed beside each figure.

    python benchmarks/estimate_accuracy.py [--copies 4 | --examples 400] [--pilot 5%] [--precision 10%]
        [--draws 200] [--sizes 5% 20 60 ...] [--systems vanilla ircot ...] [--quick]

Prints, per system and figure: the estimate's point and 95% interval, the actual total, the error of the point,
and whether the actual is inside the interval and within 10% of the point (exit 1 where one is not); and the wall
time the estimate gave the rest of the run beside the resumed attempt's, printed only (a shared machine's timing).
One pilot is one draw: then `--draws` more pilots are drawn from the finished run's samples and estimated by the
same code, and each figure's share of them whose interval held the actual total and whose point was within 10% is
printed (what a researcher can expect of one pilot), for each of `--sizes` (shares or counts; `--pilot` alone by
default). `--precision 10%` passes that option on (and grows the re-drawn pilots as it grows the real one);
`--examples N` runs the first N of the copies (`--limit`).
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "tasks" / "fictional_multihop" / "data" / "questions.jsonl"
TASK = "fictional_multihop"
MODEL = "scripted:support.estimate_fake:reply"
AGENT = "scripted:support.estimate_fake:agent"
JUDGE = "scripted:support.estimate_fake:judge"
PRICES = f"{MODEL}: {{prompt: 2.5, completion: 10}}\n{AGENT}: {{prompt: 2.5, completion: 10}}\n"
PRICES += f"{JUDGE}: {{prompt: 0.15, completion: 0.6}}\n"
SETUPS: dict[str, list[str]] = {
    "vanilla": ["--system", "vanilla", "--model", MODEL],
    "ircot": ["--system", "ircot", "--model", MODEL],
    "self_ask": ["--system", "self_ask", "--model", MODEL],
    "search_agent": ["--system", "search_agent", "--model", AGENT, "--system-arg", "snippet_max_tokens=0"],
    "vanilla+judge": ["--system", "vanilla", "--model", MODEL, "--metrics", "+llm_judge", "--judge", JUDGE],
    # the examples' lengths counted by the embedded SmolLM2's tokenizer (the scripted model's `tokenizer=`), on
    # questions a share of which, all outside the pilot, carry a long background (`LONG`)
    "vanilla+long": ["--system", "vanilla", "--model", MODEL, "--model-arg", "tokenizer=embedded"],
}
LONG = {"vanilla+long": 0.3}  # setup: the share of the examples outside the pilot given a long background
BACKGROUND = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split()  # no corpus word
TOLERANCE = 0.10
CHECKED = ("llm_calls", "prompt_tokens", "completion_tokens", "searches")


def ragbench(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}  # support.estimate_fake
    done = subprocess.run(
        [sys.executable, "-m", "ragbench", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"ragbench {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return done.stdout


def copied_questions(folder: Path, copies: int, long: float = 0.0, pilot: str = "5%", limit: int | None = None) -> Path:
    """fictional_multihop's questions `copies` times, each copy's ids and questions marked; with `long`, that share
    of the questions outside the run's `pilot` (drawn as `ragbench estimate` draws it, --seed 0) prefixed with a
    background of 300 to 600 words: the task's long examples, none of which the pilot meets."""
    from ragbench._cost.pilot import PilotSize

    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines()]
    drawn = PilotSize.parse(pilot).positions(min(len(rows) * copies, limit or len(rows) * copies), f"0:{TASK}")
    stream = random.Random(7)
    path = folder / f"questions-{long}.jsonl"
    with path.open("w") as out:
        for copy in range(copies):
            for i, row in enumerate(rows):
                marked = {**row, "id": f"{row['id']}-{copy}"}
                if copy:
                    marked["question"] = f"{row['question']} (asked {copy} times before)"
                if copy * len(rows) + i not in drawn and stream.random() < long:
                    words = " ".join(stream.choice(BACKGROUND) for _ in range(stream.randint(300, 600)))
                    marked["question"] = f"Background: {words}. {marked['question']}"
                out.write(json.dumps(marked) + "\n")
    return path


def actual(results: dict[str, Any]) -> dict[str, float]:
    """The finished run's figures, from results.json (its cost, counted from the samples' traces)."""
    model = results["model_cost"][TASK]
    out = {
        "llm_calls": model["calls"] - model["cached"],  # sent, as the estimate counts them (a cache hit is free)
        "prompt_tokens": model["prompt_tokens"],
        "completion_tokens": model["completion_tokens"],
        "usd:model": model["usd"],
    }
    for metric, cost in (results.get("judge_cost") or {}).get(TASK, {}).items():
        out[f"judge:{metric} prompt_tokens"] = cost["prompt_tokens"]
        out[f"judge:{metric} completion_tokens"] = cost["completion_tokens"]
        out[f"usd:judge:{metric}"] = cost["usd"]
    return out


def compare(name: str, estimate: dict[str, Any], real: dict[str, float]) -> bool:
    good = True
    print(f"{name}: {estimate['records']} examples, pilot {estimate['pilot_examples']}; {estimate['prompt_lengths']}")
    for key, value in real.items():
        interval = estimate["totals"][key]
        point, low, high = interval["point"], interval["low"], interval["high"]
        error = (point - value) / value if value else 0.0
        inside = low <= value and (high is None or value <= high)
        ok = inside and abs(error) <= TOLERANCE
        good &= ok
        print(
            f"  {key:<32} estimate {point:>14,.4f} [{low:,.4f} .. {high if high is None else f'{high:,.4f}'}]"
            f"  actual {value:>14,.4f}  error {error:+.1%}  {'ok' if ok else 'MISSED'}"
        )
        if key in estimate["paid"] and estimate["done"]:  # the pilot's mean over every example, for comparison
            mean_only = estimate["paid"][key] * estimate["records"] / estimate["done"]
            print(f"  {'':<32} the pilot's mean alone {mean_only:>14,.4f}  error {(mean_only - value) / value:+.1%}")
    return good


def pilot_of(figures: list[dict[str, float]], lengths: list[int] | None, order: list[int]) -> Any:
    """The `Totals` of a pilot of the examples at `order`, with their `lengths` (and the rest's) where counted."""
    from ragbench._cost.estimate_figures import Totals

    totals = Totals()
    for i in order:
        totals.add(f"{i:06d}", figures[i], observed=True, length=None if lengths is None else lengths[i])
    if lengths is not None:
        totals.rest = float(sum(lengths) - sum(lengths[i] for i in order))
    return totals


def redrawn(run: Path, setup: list[str], prices: Path, pilot: str, draws: int, precision: float | None) -> None:
    """`draws` more pilots of the finished run's examples, each a random sample of `pilot` (a share, 5%, or a count;
    grown as `--precision` grows it), estimated by the same code (`Totals`) from the samples saved: per figure, the
    share of pilots whose interval held the actual total and whose point was within 10% of it (one pilot is one
    draw: these say how often it lands)."""
    from ragbench._config.run_config import RunConfig
    from ragbench._cost.estimate_figures import example_figures
    from ragbench._cost.estimate_tokens import model_counter
    from ragbench._cost.prices import ModelPrices, read_price_table
    from ragbench._records import read_samples

    judge = [setup[setup.index("--judge") + 1]] if "--judge" in setup else []
    args = dict([setup[setup.index("--model-arg") + 1].split("=", 1)]) if "--model-arg" in setup else {}
    config = RunConfig.of(tasks=[TASK], model=setup[setup.index("--model") + 1], model_args=args, judges=judge)
    priced = ModelPrices(config.models, config.judging, read_price_table(str(prices)))
    records = [r for r in read_samples(run / "samples" / f"{TASK}.jsonl") if not r.bad_record]
    figures = [example_figures(record, priced) for record in records]
    # the question is all of an example's own text here
    counter = model_counter(config.models.model, config.models.model_args)
    lengths = None if counter is None else counter.count([record.question for record in records])
    share = float(pilot.rstrip("%")) / 100 if pilot.endswith("%") else None
    size = min(len(figures), max(3, math.ceil(share * len(figures)) if share is not None else int(pilot)))
    stream = random.Random(1)
    estimates, sizes, means = [], [], []
    for _ in range(draws):
        order = stream.sample(range(len(figures)), len(figures))
        totals = pilot_of(figures, lengths, order[:size])
        wanted = totals.pilot_for(len(figures), precision) if precision else None
        if wanted is not None and wanted > size:  # the second stage, as `--precision` runs it
            totals = pilot_of(figures, lengths, order[:wanted])
        sizes.append(len(totals.observed))
        estimates.append(totals.estimate(len(figures) - len(totals.observed)))
        if lengths is not None:  # the same pilot, the pilot's mean alone
            alone = pilot_of(figures, None, order[: len(totals.observed)])
            means.append(alone.estimate(len(figures) - len(alone.observed)))
    if precision:
        print(
            f"  pilots grown for dollars within {precision:.0%}: {min(sizes)} to {max(sizes)} examples, median "
            f"{sorted(sizes)[len(sizes) // 2]}"
        )
    shown = [k for k in estimates[0] if k in CHECKED or k.startswith(("usd:", "judge:")) and "cached" not in k]
    for key in shown:
        actual = sum(each.get(key, 0.0) for each in figures)
        held = sum(each[key].holds(actual) for each in estimates) / draws
        close = sum(abs(each[key].point - actual) <= TOLERANCE * actual for each in estimates) / draws
        pilots = f"{draws} pilots of {size} of {len(figures)}{', grown' if precision else ''}"
        print(f"  {key:<32} over {pilots}: interval held {held:.1%}, point within 10% {close:.1%}")
        if means:
            alone = sum(abs(each[key].point - actual) <= TOLERANCE * actual for each in means) / draws
            print(f"  {'':<32} the pilot's mean alone: point within 10% {alone:.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--pilot", default="5%")
    parser.add_argument("--examples", type=int, default=None, help="the run's examples (--limit; copies enough)")
    parser.add_argument(
        "--sizes",
        nargs="+",
        default=None,
        help="re-drawn pilots' sizes, each a share (5%%) or a count (default --pilot)",
    )
    parser.add_argument("--systems", nargs="+", default=list(SETUPS), choices=list(SETUPS))
    parser.add_argument(
        "--quick", action="store_true", help="vanilla on 300 examples, 20 pilots re-drawn, its misses not an error"
    )
    parser.add_argument("--draws", type=int, default=200, help="pilots re-drawn from each finished run (0: none)")
    parser.add_argument("--precision", default=None, help="ragbench estimate --precision (e.g. 10%%): grown pilots")
    args = parser.parse_args()
    if args.quick:
        args.copies, args.systems, args.draws = 1, ["vanilla"], min(args.draws, 20)
    if args.examples is not None:
        args.copies = max(1, math.ceil(args.examples / 300))  # fictional_multihop's 300 questions
    good = True
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        os.environ.setdefault("RAGBENCH_INDEX_CACHE", str(folder / "indexes"))
        (folder / "prices.yaml").write_text(PRICES)
        for name in args.systems:
            data = copied_questions(folder, args.copies, LONG.get(name, 0.0), args.pilot, args.examples)
            options = [
                "--tasks",
                TASK,
                "--data",
                f"{TASK}={data}",
                "--price-table",
                str(folder / "prices.yaml"),
                "--output",
                str(folder / name),
                "--no-progress",
                *SETUPS[name],
                *(["--limit", str(args.examples)] if args.examples is not None else []),
            ]
            grow = ["--precision", args.precision] if args.precision else []
            estimate = json.loads(ragbench("estimate", "--pilot", args.pilot, *grow, "--json", *options))
            ragbench(*options, "--resume")
            results = json.loads((folder / name / "results.json").read_text())
            good &= compare(name, estimate, actual(results))
            wall = estimate["wall_seconds_left"]
            resumed = json.loads((folder / name / "run.json").read_text())["attempts"][-1]["wall_seconds"]
            print(f"  {'wall seconds left (not checked)':<32} estimate {wall}  actual {resumed}")
            if args.draws:
                precision = float(args.precision.rstrip("%")) / 100 if args.precision else None
                for pilot in args.sizes or [args.pilot]:
                    redrawn(folder / name, SETUPS[name], folder / "prices.yaml", pilot, args.draws, precision)
    sys.exit(0 if good or args.quick else 1)


if __name__ == "__main__":
    main()
