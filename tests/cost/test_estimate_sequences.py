"""The estimate of a sequenced task (a conversation's turns, ragbench._run.sequences): a pilot that draws a later turn
runs the turns before it too (its question holds their answers); those are paid and done, each turn counted once,
but the rest is estimated from the drawn turns alone (ragbench._run.estimate.pilot_run.sampled)."""

from __future__ import annotations

import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from ragbench._config.run_config import RunConfig
from ragbench._cost.estimate_figures import pilot_for
from ragbench._cost.pilot import PilotSize
from ragbench._cost.run_estimate import RunEstimate, precision_line
from ragbench._records import read_samples
from ragbench._run.estimate.pilot_run import estimate
from ragbench._run.plan.planning import run_registry
from ragbench.api import Example, Task, TaskPrompting, TaskScoring
from ragbench.testing import ScriptedLLM
from ragbench.testing.runs import _run_options

DIALOGUES, TURNS, SEED = 3, 4, 0


class AskQuestion(TaskPrompting):
    def build_prompt(self, example, docs=None, **options):
        return example.question


class Turns(Task):
    """Dialogues of TURNS turns, each turn's question holding the answers before it: a later turn's prompt is
    longer."""

    name = "turns"
    scoring = TaskScoring(metrics=("match",))
    prompting = AskQuestion()

    def examples(self):
        for index in range(DIALOGUES * TURNS):
            dialogue, turn = divmod(index, TURNS)
            yield Example(id=f"d{dialogue}-{turn}", question=f"turn {turn}", gold={"answers": ["x"]},
                          meta={"dialogue": f"d{dialogue}"}, index=index)  # fmt: skip

    def sequence(self, example):
        return example.meta["dialogue"]

    def continued(self, example, answers):
        return replace(example, question=f"{'word ' * 60}{example.question} after {' '.join(answers)}")


def estimated(tmp_path: Path, seed: int, size: PilotSize, precision: float | None = None) -> RunEstimate:
    """The estimate of a run of Turns, its dollars those of its prompts' tokens."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "prices.yaml").write_text("scripted_llm:0: {prompt: 1000000, completion: 0}\n")
    config, registry = _run_options(Turns, "vanilla", ScriptedLLM(lambda request: "five words of an answer"))
    run_config = RunConfig.of(output=str(tmp_path / "run"), seed=seed, price_table=str(tmp_path / "prices.yaml"),
                              **config)  # fmt: skip
    return estimate(run_config, run_registry(run_config.what, registry), size, precision=precision)


def prompt_tokens(tmp_path: Path) -> dict[int, int]:
    """The prompt tokens of each turn that ran, by its position."""
    ran = read_samples(tmp_path / "run" / "samples" / "turns.jsonl")
    return {record.index: sum(step.prompt_tokens for step in record.trace if step.kind == "llm") for record in ran}


def test_a_sequenced_pilot_estimates_from_its_drawn_turns_and_counts_every_turn_once(tmp_path):
    size = PilotSize(count=3)
    estimated_run = estimated(tmp_path, SEED, size)
    drawn = size.positions(DIALOGUES * TURNS, f"{SEED}:turns")
    tokens = prompt_tokens(tmp_path)
    ran = list(tokens)
    assert len(ran) > len(drawn) and drawn <= set(tokens)  # earlier turns ran for a drawn one's history
    measured = statistics.fmean(tokens[position] for position in drawn)
    assert measured != statistics.fmean(tokens.values())  # the earlier turns' prompts are shorter
    [task] = estimated_run.tasks
    assert (task.records, task.done, estimated_run.pilot_ran) == (DIALOGUES * TURNS, len(ran), len(ran))
    paid = sum(tokens.values())
    assert task.paid["prompt_tokens"] == paid
    assert task.totals["prompt_tokens"].point == pytest.approx(paid + (DIALOGUES * TURNS - len(ran)) * measured)


def test_a_sequenced_pilot_is_grown_to_the_drawn_turns_its_spread_asks_for(tmp_path):
    """The second stage (--precision) compares the turns its dollars need with the drawn turns measured, not with
    every turn that ran: here the 3 drawn turns ask for 6, and 6 ran (3 of them for their history) before it grew;
    the line that asks for a larger pilot says so."""
    size, seed, records = PilotSize(count=3), 5, DIALOGUES * TURNS
    [task] = estimated(tmp_path / "first", seed, size).tasks
    first = prompt_tokens(tmp_path / "first")
    wanted = pilot_for([first[position] for position in size.positions(records, f"{seed}:turns")], records)
    assert wanted is not None and 3 < wanted <= len(first) == task.done
    assert f"need about {wanted} of its examples run, 3 have: " in str(precision_line(task))
    estimated(tmp_path / "grown", seed, size, precision=0.10)
    assert PilotSize(count=wanted).positions(records, f"{seed}:turns") <= set(prompt_tokens(tmp_path / "grown"))
