"""A trace step becomes its dict once per write: the sample's writer makes it (`Step.to_dict`), and the run's call
records (calls/llm.jsonl, which refer to the step) read the step's own fields instead of a copy of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragbench.api import Step
from support.helpers import run, samples


def test_each_step_of_a_run_is_turned_into_its_dict_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Step] = []  # the steps themselves: held, no two share an id
    to_dict = Step.to_dict
    monkeypatch.setattr(Step, "to_dict", lambda step: made.append(step) or to_dict(step))
    run(tmp_path, tasks=["demo"], system="ircot", model="scripted:echo", limit=3)
    steps = sum(
        len(sample["trace"]) + len(sample.get("judge_trace") or []) for sample in samples(tmp_path / "run", "demo")
    )
    assert steps > 3 and (tmp_path / "run" / "calls" / "llm.jsonl").is_file()
    assert len(made) == steps and len({id(step) for step in made}) == steps
