"""`ragbench gate` against a fixed threshold on the same pairs of runs: reruns of one system (noise only) and a system
that is really worse, each gated against the same baseline run (docs/gate.md).

The system is `closed_book` on fictional_multihop's questions, its model scripted per run (a rules file): each
question has a chance of being answered right that every run shares (40% of them easy, 0.9; 30% middling, 0.5; 30%
hard, 0.1), and each run draws its answers from those chances with its own seed, as a sampled model's reruns do; a
wrong answer is another question's answer, or the first word of a gold answer of several words (partly right, for
F1). The worse system answers right with 0.8 times those chances. `llm_judge` (correctness) scores every run with a
scripted judge that says "correct" of a right answer, of a partly right one at even odds, and flips its verdict on
FLIP of the examples, drawn per run: a sampled judge (one rules file, judge.json, written again before each run with
that run's verdicts: the same judge for the gate, other verdicts).

Every candidate is gated on em, f1 and llm_judge (and the task's failed examples) with `--threshold` of 0.02 on each,
a typical fixed threshold. Prints per candidate the differences, which keys the fixed threshold fails and what the
gate says; then how many of the reruns each failed (the gate's promise: at most alpha of them, in the long run).

    python benchmarks/gate_noise.py [--examples 300] [--reruns 10] [--out DIR] [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "tasks" / "fictional_multihop" / "data" / "questions.jsonl"
TASK = "fictional_multihop"
KEYS = ("em", "f1", "llm_judge")
THRESHOLD = 0.02
FLIP = 0.08  # the judge's verdict flipped on this share of the examples, drawn per run
WORSE = 0.8  # the worse system's chance of a right answer, as a share of the baseline system's
CHANCES = ((0.4, 0.9), (0.3, 0.5), (0.3, 0.1))  # (share of the questions, chance of a right answer)


def chances(count: int) -> list[float]:
    """Each question's chance of a right answer, the same for every run (seed 48)."""
    rng = random.Random(48)
    levels = [chance for share, chance in CHANCES for _ in range(round(share * count))]
    levels += [CHANCES[-1][1]] * (count - len(levels))
    rng.shuffle(levels)
    return levels


def run_rules(questions: list[dict], odds: list[float], seed: int, scale: float, folder: Path) -> tuple[Path, Path]:
    """The rules files of one run: the system's answers, and the judge's verdicts on them."""
    rng = random.Random(seed)
    answers, verdicts = [], []
    pool = [q["answers"][0] for q in questions]
    for question, chance in zip(questions, odds):
        gold = question["answers"][0]
        if rng.random() < chance * scale:
            answer, right = gold, 1.0
        elif len(gold.split()) > 1 and rng.random() < 0.3:
            answer, right = gold.split()[0], 0.5
        else:
            answer, right = rng.choice([a for a in pool if a != gold]), 0.0
        correct = rng.random() < right
        if rng.random() < FLIP:
            correct = not correct
        answers.append({"pattern": re.escape(question["question"]), "response": answer})
        verdicts.append(
            {
                "pattern": re.escape(f"Question: {question['question']}"),
                "response": "correct" if correct else "incorrect",
            }
        )
    system, judge = folder / f"system_{seed}.json", folder / "judge.json"  # one judge, its verdicts drawn per run
    system.write_text(json.dumps(answers))
    judge.write_text(json.dumps(verdicts))
    return system, judge


def make_run(name: str, questions: list[dict], seed: int, scale: float, folder: Path) -> Path:
    from ragbench.testing import run_eval

    system, judge = run_rules(questions, chances(len(questions)), seed, scale, folder)
    output = folder / name
    run_eval(
        TASK,
        "closed_book",
        f"scripted:{system}",
        metrics=["+llm_judge"],
        judges=[f"scripted:{judge}"],
        limit=len(questions),
        output=output,
    )
    return output


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--reruns", type=int, default=10)
    parser.add_argument("--out", default=None, help="keep the run folders here (default: a temporary folder)")
    parser.add_argument("--quick", action="store_true", help="60 examples, 2 reruns")
    args = parser.parse_args()
    if args.quick:
        args.examples, args.reruns = 60, 2
    from ragbench.testing import gate_runs

    questions = [json.loads(line) for line in QUESTIONS.read_text().splitlines()][: args.examples]
    with tempfile.TemporaryDirectory(prefix="gate-noise-") as scratch:
        folder = Path(args.out) if args.out else Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        baseline = make_run("baseline", questions, 0, 1.0, folder)
        candidates = [
            (f"rerun_{seed}", make_run(f"rerun_{seed}", questions, seed, 1.0, folder))
            for seed in range(1, args.reruns + 1)
        ]
        candidates.append(("worse", make_run("worse", questions, 1000, WORSE, folder)))
        print(
            f"{args.examples} examples; thresholds {THRESHOLD} on {', '.join(KEYS)}; judge flips {FLIP:.0%} of verdicts"
        )
        print(
            "| candidate | "
            + " | ".join(f"{key} delta" for key in KEYS)
            + " | fixed threshold | gate | gate Holm p (smallest) |"
        )
        print("|---|" + "---:|" * len(KEYS) + "---|---|---:|")
        threshold_fails = gate_fails = 0
        for name, path in candidates:
            report = gate_runs(path, baseline, metrics=KEYS, thresholds=dict.fromkeys(KEYS, THRESHOLD))
            deltas = {row.metric: row.delta for row in report.rows}
            failed_by_threshold = [row.metric for row in report.threshold_failures]
            smallest = min(row.p_holm for row in report.rows if row.p_holm is not None)
            print(
                f"| {name} | "
                + " | ".join(f"{deltas[key]:+.4f}" for key in KEYS)
                + f" | {'FAIL (' + ', '.join(failed_by_threshold) + ')' if failed_by_threshold else 'pass'}"
                + f" | {'FAIL' if report.regressions else 'pass'} | {smallest:.4g} |"
            )
            if name.startswith("rerun"):
                threshold_fails += bool(failed_by_threshold)
                gate_fails += bool(report.regressions)
        print(
            f"reruns (noise only): the fixed threshold failed {threshold_fails} of {args.reruns}, "
            f"the gate {gate_fails} of {args.reruns}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
