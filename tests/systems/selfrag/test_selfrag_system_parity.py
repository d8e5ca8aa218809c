"""The selfrag system against upstream Self-RAG run on the same model outputs.

tests/data/parity/selfrag_system_{short,long}.json were made by running AkariAsai/self-rag @ 1fcdc42
`call_model_rerank_w_scores_batch` (short form) and `call_model_beam_batch` / `run_step_generation_batch`
plus main()'s ASQA post-processing (long form) with a fake vLLM `LLM` (see each file's "note"); the
outputs that fake model gave are stored as replay records, which our system reads through the replay
engine here."""

from __future__ import annotations

import asyncio
import json

import pytest

from conftest import TEST_DATA
from ragbench.api import Document, Example, Task, TaskPrompting
from ragbench.plugins.selfrag.system import SelfRag
from ragbench.testing import ReplayLLM, make_context


def cases(kind: str) -> list[dict]:
    return json.loads((TEST_DATA / "parity" / f"selfrag_system_{kind}.json").read_text(encoding="utf-8"))["cases"]


class InstructionPrompting(TaskPrompting):
    """Poses `instruction` as the question, as upstream's preprocessing does."""

    def __init__(self, instruction: str, answer_format: str, cites: bool) -> None:
        self.instruction, self.answer_format, self.cites = instruction, answer_format, cites

    def query_text(self, example: Example) -> str:
        return self.instruction


class InstructionTask(Task):
    """A task that poses `instruction` as the question, as upstream's preprocessing does."""

    name = "parity"

    def __init__(self, instruction: str, answer_format: str, cites: bool = False) -> None:
        super().__init__()
        self.prompting = InstructionPrompting(instruction, answer_format, cites)


def run_case(case: dict, tmp_path, task: Task, **options) -> tuple:
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in case["records"]), encoding="utf-8")
    docs = [Document(id=d["id"], title=d["title"], text=d["text"]) for d in case["docs"]]
    example = Example(id=case["name"], question="q", docs=docs)
    system = SelfRag(**options)
    return asyncio.run(system.run(example, make_context(task, ReplayLLM(path), docs=docs)))


@pytest.mark.parametrize("case", cases("short"), ids=lambda c: c["name"])
def test_short_form_equals_call_model_rerank_w_scores_batch(case, tmp_path):
    o, expected = case["options"], case["expected"]
    task = InstructionTask(case["instruction"], "label" if case["closed"] else "short")
    prediction = run_case(
        case,
        tmp_path,
        task,
        mode=o["mode"],
        threshold=o["threshold"],
        ndocs=o["ndocs"],
        use_groundness=o["use_groundness"],
        use_utility=o["use_utility"],
        use_seqscore=o["use_seqscore"],
        w_use=o["w_use"],
        max_new_tokens=o["max_new_tokens"],
    )
    trace = prediction.extras["selfrag"]
    assert prediction.answer == expected["pred"]
    assert trace["retrieved"] == expected["do_retrieve"]
    ours = [p["final_score"] for p in trace.get("passages", [])]
    theirs = [expected["scores"][f"retrieval_{i}"] for i in range(len(expected["scores"]))]
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("case", cases("long"), ids=lambda c: c["name"])
def test_long_form_equals_call_model_beam_batch_and_asqa_postprocessing(case, tmp_path):
    o, expected = case["options"], case["expected"]
    task = InstructionTask(case["instruction"], "long", cites=True)
    prediction = run_case(
        case,
        tmp_path,
        task,
        mode=o["mode"],
        threshold=o["threshold"],
        ndocs=o["ndocs"],
        max_depth=o["max_depth"],
        beam_width=o["beam_width"],
        max_new_tokens=o["max_new_tokens"],
    )
    assert prediction.raw_output == expected["output"]
    assert [d.id for d in prediction.docs] == expected["docs"]


def test_the_parity_data_exercises_the_branches_that_move_numbers():
    short, long = cases("short"), cases("long")
    assert {c["expected"]["do_retrieve"] for c in short} == {True, False}
    assert any(c["closed"] and len(set(c["expected"]["scores"].values())) > 1 for c in short)
    assert any("[Continue to Use Evidence" in c["expected"]["output"] for c in long)
    assert any(len(c["expected"]["docs"]) > 2 for c in long)
