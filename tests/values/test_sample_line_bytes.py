"""The bytes of samples/<task>.jsonl as a fixed run writes them: a scored example (its documents, citations,
extras, a step of the system's own and an LLM call), an example whose system raised, one whose metric raised and
a bad record, compared with tests/data/samples/fixed_run.jsonl byte for byte but for what a run times (`seconds`,
`started`, the attempt's cost), so that the writer's layout of a line never changes unnoticed; a line read as a
`SampleRecord` is written back (`sample_line`) as the same line."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import write_jsonl
from ragbench._records import SampleRecord, sample_line
from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench._storage.jsonl import dumps
from ragbench._storage.rundir import _STAMP, RunDir
from ragbench._storage.sample_files import ATTEMPT_COST
from ragbench.api import Prediction, System
from support import paths, scoring_plugin
from support.scoring_plugin import plugin_state  # noqa: F401 (an autouse fixture: nothing failing, no calls counted)

FIXED = paths.DATA / "samples" / "fixed_run.jsonl"
TIMED = re.compile(rb'"(seconds|started|latency_s|wall_seconds)": [0-9.eE+-]+|"attempt_cost": \{[^}]*\}')
TRACEBACK = re.compile(rb'"Traceback \(most recent call last\):(?:[^"\\]|\\.)*"')  # paths and line numbers


class CitingSystem(System):
    """Asks the model, keeps the first document with a step of its own, cites it; fails on example 103."""

    name = "citing_system"

    async def run(self, example, ctx):
        if example.id == "103":
            raise KeyError("answer")
        reply = await ctx.llm.generate(f"Q: {example.question}\nA:")
        ctx.record_step("keep", inputs={"candidates": len(example.docs)}, outputs={"kept": 1}, docs=example.docs[:1])
        return Prediction(
            example_id=example.id,
            answer=reply.text.lower(),
            raw_output=reply.text,
            citations=[[1]],
            docs=example.docs[:1],
            extras={"asked": 1},
        )


def untimed(text: bytes, folder: Path) -> bytes:
    """`text` with what a run times set to 0, tracebacks to "TRACEBACK" and the test's folder to "TMP"."""
    text = TRACEBACK.sub(b'"TRACEBACK"', text.replace(str(folder).encode(), b"TMP"))
    return TIMED.sub(lambda found: found.group(0).split(b":")[0] + b": 0", text)


def test_a_fixed_runs_sample_lines_are_the_recorded_bytes(tmp_path, popqa_records):
    registry = scoring_plugin.registry()
    registry.add_catalog({"systems": {"citing_system": {"target": "test_sample_line_bytes:CitingSystem"}}}, "tests")
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records[:4])
    with data.open("a") as handle:
        handle.write('{"question": "cut short\n')
    scoring_plugin.FAILING.add("102")
    Evaluator(
        RunConfig.of(
            tasks=["popqa"],
            system="citing_system",
            data={"popqa": str(data)},
            model="scripted:echo",
            metrics=["match", "scored:raise"],
            output=str(tmp_path / "run"),
            progress=False,
            bootstrap_iters=10,
        ),
        registry=registry,
    ).run()
    written = (tmp_path / "run" / "samples" / "popqa.jsonl").read_bytes()
    assert untimed(written, tmp_path) == FIXED.read_bytes()


def test_each_line_reads_as_a_record_whose_line_is_the_same_key_for_key():
    lines = [json.loads(text) for text in FIXED.read_text().splitlines()]
    rescored = {
        **{k: v for k, v in lines[0].items() if k not in ("seconds", "attempt_cost")},
        "counted": {"m": {"n": 1}},
        "judge_trace": lines[0]["trace"][:1],
        "infrastructure_failures": ["generate: down"],
        "seconds": 0.5,
        "rescored": True,
    }
    for line in [*lines, rescored]:
        written = {k: v for k, v in line.items() if k != "attempt_cost"}  # the attempt's, stamped when saved
        assert list(sample_line(SampleRecord.from_dict(line)).items()) == list(written.items())


def test_a_saved_sample_holds_no_attempt_cost_which_is_written_beside_it_last_on_its_line(
    tmp_path, popqa_records, monkeypatch
):
    """The run hands the checkpoint a sample's line (`sample_line`, nothing added) and the attempt's cost beside it;
    the checkpoint line is the two at once, the cost last (what `finalize_samples` takes off)."""
    appended = []
    real_append = RunDir.append_sample

    def append(self, task, text, attempt_cost=None):
        real_append(self, task, text, attempt_cost)
        appended.append((json.loads(text), attempt_cost, self.sample_path(task).read_bytes().splitlines()[-1]))

    monkeypatch.setattr(RunDir, "append_sample", append)
    Evaluator(
        RunConfig.of(
            tasks=["popqa"],
            system="vanilla",
            data={"popqa": str(write_jsonl(tmp_path / "popqa.jsonl", popqa_records[:3]))},
            model="scripted:echo",
            metrics=["match"],
            output=str(tmp_path / "run"),
            progress=False,
            bootstrap_iters=10,
        ),
        registry=scoring_plugin.registry(),
    ).run()
    assert [cost["examples"] for _, cost, _ in appended] == [1, 2, 3]
    for line, cost, written in appended:
        assert ATTEMPT_COST not in line
        assert json.loads(written) == {**line, ATTEMPT_COST: cost}
        assert written.decode() == dumps({**line, ATTEMPT_COST: cost})  # the writer's text of the two, byte for byte
        assert list(json.loads(written))[-1] == ATTEMPT_COST and _STAMP.search(written)
