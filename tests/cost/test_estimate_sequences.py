"""The estimate of a sequenced task (a conversation's turns, ragbench._run.sequences): a pilot that draws a later turn
runs the turns before it too (its question holds their answers); those are paid and done, each turn counted once,
but the rest is estimated from the drawn turns alone (ragbench._run.estimate.pilot_run.sampled)."""

from __future__ import annotations

import statistics
from dataclasses import replace

import pytest

from ragbench._cost.pilot import PilotSize
from ragbench._records import read_samples
from ragbench._run.estimate.pilot_run import estimate
from ragbench._run.plan.planning import run_registry
from ragbench._values.run_config import RunConfig
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
        return replace(example, question=f"{example.question} after {' '.join(answers)}")


def test_a_sequenced_pilot_estimates_from_its_drawn_turns_and_counts_every_turn_once(tmp_path):
    config, registry = _run_options(Turns, "vanilla", ScriptedLLM(lambda request: "five words of an answer"))
    run_config = RunConfig.of(output=str(tmp_path / "run"), seed=SEED, **config)
    size = PilotSize(count=3)
    estimated = estimate(run_config, run_registry(run_config.what, registry), size)

    drawn = size.positions(DIALOGUES * TURNS, f"{SEED}:turns")
    ran = list(read_samples(tmp_path / "run" / "samples" / "turns.jsonl"))
    tokens = {record.index: sum(step.prompt_tokens for step in record.trace if step.kind == "llm") for record in ran}
    assert len(ran) > len(drawn) and drawn <= set(tokens)  # earlier turns ran for a drawn one's history
    measured = statistics.fmean(tokens[position] for position in drawn)
    assert measured != statistics.fmean(tokens.values())  # the earlier turns' prompts are shorter
    [task] = estimated.tasks
    assert (task.records, task.done, estimated.pilot_ran) == (DIALOGUES * TURNS, len(ran), len(ran))
    paid = sum(tokens.values())
    assert task.paid["prompt_tokens"] == paid
    assert task.totals["prompt_tokens"].point == pytest.approx(paid + (DIALOGUES * TURNS - len(ran)) * measured)
