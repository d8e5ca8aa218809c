"""Custom trace steps (`ctx.record_step`): a system records a step of its own - here a third-party system
that filters the retriever's documents - with its inputs, outputs and the documents it kept; the step is in
the sample's trace as recorded, in the viewer's example page, and in a replay of the run, which re-runs the
system offline and needs no recording of it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from test_record_replay import without_timings

from ragbench.api import Document, Reader, Task, hookimpl
from ragbench.testing import Registry, cli, make_context, run_eval
from support.helpers import samples, viewed


class KeywordFilter(Reader):
    """Shows the model only the retrieved documents that share a word with the question."""

    name = "keyword_filter"

    async def documents(self, example, ctx):
        retrieved = await ctx.retriever.search(example.question, 3)
        words = {w.strip("?").lower() for w in example.question.split() if len(w) > 3}
        kept = [d for d in retrieved if words & {w.strip(".,").lower() for w in d.text.split()}]
        ctx.record_step(
            "keyword filter",
            inputs={"retrieved": [d.id for d in retrieved], "words": sorted(words)},
            outputs={"kept": [d.id for d in kept]},
            docs=kept,
        )
        return kept


class CustomStepPlugin:
    @hookimpl
    def ragbench_catalog(self):
        return {"systems": {"keyword_filter": {"target": f"{__name__}:KeywordFilter"}}}


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.discover(plugins=[("custom_step_plugin", "ragbench-custom-steps", CustomStepPlugin())])


@pytest.fixture(scope="module")
def run_dir(registry, tmp_path_factory):
    folder = tmp_path_factory.mktemp("custom_steps")
    rules = folder / "rules.json"
    rules.write_text(json.dumps([{"pattern": "France", "response": "Paris"}, {"response": "I do not know"}]))
    ran = run_eval(
        "demo",
        "keyword_filter",
        f"scripted:{rules}",
        limit=3,
        bootstrap_iters=50,
        output=folder / "run",
        registry=registry,
    )
    assert ran.complete
    rules.unlink()  # a replay must need nothing but the run's own recording
    return folder / "run"


def custom_steps(trace):
    return [step for step in trace if step["kind"] == "custom"]


def test_record_step_keeps_json_values_in_the_enclosing_group():
    ctx = make_context(Task)
    kept = [Document(id="d2", title="B", text="two", score=np.float32(0.5), metadata={"vector": np.zeros(2)})]
    with ctx.group("iteration 1"):
        step = ctx.record_step(
            "rerank",
            inputs={"candidates": ("d1", "d2"), "k": np.int64(1)},
            outputs={"kept": ["d2"], "scores": {"d2": np.float64(0.5)}},
            docs=kept,
        )
    assert ctx.trace == [step]
    record = step.to_dict()
    assert record == json.loads(json.dumps(record))  # the sample file holds exactly what was recorded
    assert (record["kind"], record["name"], record["group"]) == ("custom", "rerank", ["iteration 1"])
    assert record["request"] == {"candidates": ["d1", "d2"], "k": 1}
    assert record["response"] == {"kept": ["d2"], "scores": {"d2": 0.5}}
    assert record["docs"] == [
        {"id": "d2", "title": "B", "text": "two", "score": 0.5, "metadata": {"vector": "[0. 0.]"}}
    ]
    assert "docs" not in ctx.record_step("no documents").to_dict()


@pytest.mark.parametrize(
    "inputs, message",
    [
        ({"model": object()}, r"record_step\(rerank: inputs\['model'\]\): object is not JSON"),
        ({"ranks": {1: "d1"}}, r"record_step\(rerank: inputs\['ranks'\]\): key 1 is a int, not a string"),
    ],
)
def test_record_step_refuses_values_that_are_not_json_naming_where_they_are(inputs, message):
    ctx = make_context(Task)
    with pytest.raises(TypeError, match=message):
        ctx.record_step("rerank", inputs=inputs)
    with pytest.raises(TypeError, match=r"docs\[0\]\): a Document is expected, not dict"):
        ctx.record_step("rerank", docs=[{"id": "d1"}])
    assert ctx.trace == []


def test_a_systems_custom_step_is_in_its_samples_with_the_documents_it_showed(run_dir):
    records = samples(run_dir, "demo")
    for record in records:
        [step] = custom_steps(record["trace"])
        retrieval = next(s for s in record["trace"] if s["kind"] == "retrieval")
        assert step["request"]["retrieved"] == retrieval["response"]["ids"]  # all 3 retrieved ...
        assert step["docs"] == record["prediction"].get("docs", [])  # ... the ones kept are the ones shown
        assert step["response"]["kept"] == [d["id"] for d in step["docs"]] and len(step["docs"]) < 3
        assert step["group"] == ["retrieval"]  # the Reader's group


def test_the_viewer_shows_a_custom_steps_inputs_outputs_and_documents(run_dir, tmp_path):
    pages = viewed(run_dir, out=tmp_path / "site")  # `ragbench view RUN --export SITE`
    [page] = [page for key, page in pages.items() if key.startswith("example/") and key.endswith("/demo/0")]
    [step] = [s for s in page["steps"] if s["kind"] == "custom"]
    assert step["name"] == "keyword filter" and '"retrieved"' in step["prompt"] and '"kept"' in step["reply"]
    assert [d["id"] for d in step["docs"]] == [d["id"] for d in page["docs"]] and step["docs"][0]["text"]
    group = next(item for item in page["outline"] if item.get("group") == "retrieval")
    assert {"step": step["i"]} in group["items"]


def test_a_run_with_custom_steps_replays_identically_and_its_replay_records_them_again(run_dir, registry, tmp_path):
    replayed = CliRunner().invoke(
        cli, ["--replay", str(run_dir), "--output", str(tmp_path / "replayed"), "--no-progress"], obj=registry
    )
    assert replayed.exit_code == 0, replayed.output
    assert json.loads((tmp_path / "replayed" / "results.json").read_text())["complete"]
    original, again = samples(run_dir, "demo"), samples(tmp_path / "replayed", "demo")
    assert without_timings(again) == without_timings(original)
    assert all(len(custom_steps(record["trace"])) == 1 for record in again)
    recorded = (run_dir / "calls" / "llm.jsonl").read_text()
    assert "keyword filter" not in recorded and len(recorded.splitlines()) == 3  # the model's calls only
