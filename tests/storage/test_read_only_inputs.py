"""What a run hands its plugins is read-only: the example (its gold, meta, extras, documents) a system runs on
and every metric scores against, the prediction (its docs, trace, extras, citations) every metric reads in
turn, the run's tools, and the sample records the reporting hooks read one after another. No plugin can
change another plugin's input or what ragbench scores and writes; one that tries gets a ReadOnlyError, which
is its example's (or its metric's) counted, named failure. Search results are copies a system may annotate."""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench.api import Document, Example, Metric, MetricDeclaration, Prediction, SampleRecord, System
from ragbench.testing import Registry, installed_registry, run_eval
from support.helpers import samples

DICT_CHANGES = ("setitem", "delitem", "update", "setdefault", "pop", "clear", "ior")
LIST_CHANGES = ("setitem", "delitem", "append", "extend", "iadd", "insert", "pop", "clear", "reverse")


def children(value):
    """The containers and records inside `value`, in a fixed order (the places a plugin could reach)."""
    if is_dataclass(value) and not isinstance(value, type):
        items = [getattr(value, f.name) for f in fields(value)]
    elif isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = []
    return [item for item in items if isinstance(item, (dict, list)) or is_dataclass(item)]


def mutate(root, path: list[int], operation: int) -> None:
    """Walk from `root` along `path` (each number picks one of the containers or records inside), then change
    what was reached in place: a record's field set, or a dict or list changed by one of its methods."""
    target = root
    for step in path:
        inside = children(target)
        if not inside:
            break
        target = inside[step % len(inside)]
    if is_dataclass(target):
        setattr(target, fields(target)[operation % len(fields(target))].name, "mutated")
        return
    changes = DICT_CHANGES if isinstance(target, dict) else LIST_CHANGES
    change = changes[operation % len(changes)]
    first = next(iter(target), "new") if isinstance(target, dict) else 0
    if change == "setitem":
        target[first if isinstance(target, dict) else slice(0, 1)] = ["mutated"]
    elif change in ("delitem", "pop") and target:
        target.pop(first) if change == "pop" else target.__delitem__(first)
    elif change in ("update", "ior", "setdefault"):
        getattr(target, {"ior": "__ior__"}.get(change, change))(
            *([{"mutated": 1}] if change != "setdefault" else ["mutated", 1])
        )
    elif change in ("clear", "reverse"):
        getattr(target, change)()
    elif change in ("append", "extend", "iadd"):
        getattr(target, {"iadd": "__iadd__"}.get(change, change))("mutated" if change == "append" else ["mutated"])
    elif change == "insert":
        target.insert(0, "mutated")


def snapshot(example: Example, prediction: Prediction | None = None) -> str:
    """Everything of the example (and the prediction) a plugin reads, as text to compare."""
    seen = {"example": {**example.summary(), "docs": [doc.to_dict() for doc in example.docs], "extras": example.extras}}
    if prediction is not None:
        seen["prediction"] = {**prediction.to_dict(), "trace": [step.to_dict() for step in prediction.trace]}
    return json.dumps(seen, sort_keys=True, default=repr)


def write(folder: str, kind: str, example_id: str, text: str) -> None:
    (Path(folder) / f"{kind}-{example_id}.json").write_text(text)


class AnsweringSystem(System):
    """Searches, asks the LLM and answers with its reply, citations, the documents shown and nested extras;
    with `mutation` ([path, operation]), first changes the example in place, swallowing what that raises."""

    name = "answering"

    def __init__(self, mutation: str = "", shown: str = "") -> None:
        self.mutation, self.shown = json.loads(mutation) if mutation else None, shown

    async def run(self, example, ctx):
        if self.mutation is not None:
            try:
                mutate(example, *self.mutation)
            except TypeError:  # a plugin that swallows the refusal
                pass
        if self.shown:  # what the system itself saw, after its change
            write(self.shown, "system", example.id, snapshot(example))
        docs = await ctx.retriever.search(example.question, 2)
        reply = await ctx.llm.generate(example.question)
        return Prediction(
            example_id=example.id,
            answer=reply.text,
            citations=[[0], [1]],
            docs=docs,
            extras={"nested": {"list": [1, [2]], "kind": "x"}},
        )


class GoldEditingSystem(AnsweringSystem):
    """The issue's system: edits the gold in place."""

    async def run(self, example, ctx):
        example.gold["answers"] = ["edited"]
        return await super().run(example, ctx)


class AnnotatingSystem(AnsweringSystem):
    """Annotates and changes the documents its search returned, then checks the example's own are as they were."""

    async def run(self, example, ctx):
        docs = await ctx.retriever.search(example.question, 2)
        for doc in docs:
            doc.metadata["note"] = "annotated"
            doc.text = "changed"
        assert all(doc.text != "changed" and "note" not in doc.metadata for doc in example.docs)
        return Prediction(example_id=example.id, answer="x", docs=docs)


class SnapshotMetric(Metric):
    """Writes what it was given into `folder` (kind `before` or `after`); scores 1."""

    name = "snapshot"

    def __init__(self, folder: str = "", kind: str = "before") -> None:
        self.folder, self.kind = folder, kind

    def score(self, example, prediction, ctx=None):
        write(self.folder, self.kind, example.id, snapshot(example, prediction))
        return 1.0


class AfterMetric(SnapshotMetric):
    name = "after"


class MeddlingMetric(Metric):
    """Changes its inputs in place by `mutation` ([root, path, operation]); with `swallow`, ignores a refusal."""

    name = "meddler"

    def __init__(self, mutation: str = '["prediction", [], 0]', swallow: bool = True) -> None:
        self.root, *self.mutation = json.loads(mutation)
        self.swallow = swallow

    def score(self, example, prediction, ctx=None):
        try:
            mutate(example if self.root == "example" else prediction, *self.mutation)
        except TypeError:
            if not self.swallow:
                raise
        return 0.0


class AnswerRewriter(Metric):
    """The issue's metric: sets the prediction's answer to the gold, scoring 0."""

    name = "rewriter"

    def score(self, example, prediction, ctx=None):
        prediction.answer = example.gold["answers"][0]
        return 0.0


class JudgingMetric(Metric):
    """Asks its judge once; scores 1."""

    name = "judging"
    declares = MetricDeclaration(needs=("judge",))

    async def score(self, example, prediction, ctx=None):
        await ctx.judges[0].chat([{"role": "user", "content": example.question}])
        return 1.0


class ContextMeddler(Metric):
    """Clears the judge calls it can reach, swaps the NLI judge and counts an event: in its own context only."""

    name = "context_meddler"
    declares = MetricDeclaration(counters={"meddled": "the meddler ran"})

    def score(self, example, prediction, ctx=None):
        ctx.trace.clear()
        ctx.nli = "swapped"
        ctx.count("meddled")
        return 1.0


class ContextProbe(Metric):
    """Scores 1 when its context is as the run made it: no NLI judge, nothing counted, no judge call."""

    name = "context_probe"

    def score(self, example, prediction, ctx=None):
        return float(ctx.nli is None and not ctx.counts and not ctx.trace)


class CorpusMeddler(Metric):
    """A corpus-level metric that rewrites a score of the first sample."""

    name = "corpus_meddler"
    declares = MetricDeclaration(corpus_keys=("meddled",))

    def corpus(self, samples, seed):
        samples[0].scores["em"] = 1.0
        return {"meddled": 1.0}


class TaskArgsEditor(AnsweringSystem):
    """Changes the task's options, which results.json records."""

    async def run(self, example, ctx):
        ctx.task.args["max_tokens"] = 1
        return await super().run(example, ctx)


@functools.cache
def registry() -> Registry:
    """The installed plugins and this file's systems and metrics, read once for all the runs here (a run loads the
    entries it uses and changes nothing else; reading them again for every example was ~0.2 s of each)."""
    made = installed_registry()
    made.add_catalog(
        {
            "systems": {
                name: {"target": f"{__name__}:{cls.__name__}"}
                for name, cls in (
                    ("answering", AnsweringSystem),
                    ("gold_editor", GoldEditingSystem),
                    ("annotating", AnnotatingSystem),
                    ("task_args_editor", TaskArgsEditor),
                )
            },
            "metrics": {
                name: {"target": f"{__name__}:{cls.__name__}"}
                for name, cls in (
                    ("snapshot", SnapshotMetric),
                    ("after", AfterMetric),
                    ("meddler", MeddlingMetric),
                    ("rewriter", AnswerRewriter),
                    ("judging", JudgingMetric),
                    ("context_meddler", ContextMeddler),
                    ("context_probe", ContextProbe),
                    ("corpus_meddler", CorpusMeddler),
                )
            },
        },
        "tests",
    )
    return made


def demo_run(folder: Path, system: str = "answering", **config) -> dict:
    return run_eval(
        "demo",
        system,
        "scripted:echo",
        output=folder / "run",
        registry=registry(),
        limit=2,
        bootstrap_iters=0,
        **config,
    ).results


@contextlib.contextmanager
def refused_as_read_only(match: str = "read-only") -> Iterator[None]:
    """The change inside raises ragbench's `ReadOnlyError`, a `TypeError` (docs/writing-plugins.md)."""
    with pytest.raises(TypeError, match=match) as refused:
        yield
    assert type(refused.value).__name__ == "ReadOnlyError"


def pristine_examples() -> dict[str, str]:
    return {example.id: snapshot(example) for example in registry().load("tasks", "demo")().examples()}


PATHS = st.lists(st.integers(0, 40), max_size=6)
OPERATIONS = st.integers(0, 40)
FEW_RUNS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FEW_RUNS
@given(path=PATHS, operation=OPERATIONS)
def test_no_change_a_system_makes_to_its_example_reaches_what_it_is_scored_against(tmp_path_factory, path, operation):
    folder = tmp_path_factory.mktemp("system")
    demo_run(
        folder,
        system_args={"mutation": json.dumps([path, operation]), "shown": str(folder)},
        metrics=["snapshot", "em"],
        metric_args={"snapshot.folder": str(folder)},
    )
    pristine = pristine_examples()
    for sample in samples(folder / "run", "demo"):
        scored = json.loads((folder / f"before-{sample['id']}.json").read_text())
        assert json.dumps({"example": scored["example"]}, sort_keys=True) == pristine[sample["id"]]
        assert (folder / f"system-{sample['id']}.json").read_text() == pristine[sample["id"]]
        written = {key: sample[key] for key in ("question", "gold", "meta")}
        assert written == {key: json.loads(pristine[sample["id"]])["example"][key] for key in written}


@FEW_RUNS
@given(root=st.sampled_from(["example", "prediction"]), path=PATHS, operation=OPERATIONS)
def test_no_change_a_metric_makes_to_its_inputs_reaches_the_next_metric_or_the_sample(
    tmp_path_factory, root, path, operation
):
    folder = tmp_path_factory.mktemp("metric")
    demo_run(
        folder,
        metrics=["snapshot", "meddler", "after"],
        metric_args={
            "snapshot.folder": str(folder),
            "after.folder": str(folder),
            "after.kind": "after",
            "meddler.mutation": json.dumps([root, path, operation]),
        },
    )
    for sample in samples(folder / "run", "demo"):
        before = (folder / f"before-{sample['id']}.json").read_text()
        assert (folder / f"after-{sample['id']}.json").read_text() == before
        written = json.loads(before)["prediction"]
        written.pop("trace")
        assert sample["prediction"] == written


def test_a_system_that_edits_the_gold_fails_its_example_with_the_reason_and_the_run_completes(tmp_path):
    results = demo_run(tmp_path, system="gold_editor")
    assert results["counts"]["demo"]["failed"] == 2 and results["complete"] is False
    for sample in samples(tmp_path / "run", "demo"):
        assert sample["error"].startswith("ReadOnlyError: this dict is read-only: ragbench hands plugins read-only")
        assert sample["gold"]["answers"] != ["edited"]


def test_a_metric_that_rewrites_the_answer_changes_no_other_metrics_score(tmp_path):
    results = demo_run(tmp_path, metrics=["rewriter", "em"])
    assert results["results"]["demo"]["em"] == 0.0  # the echoed question is no answer, whatever ran before
    assert results["counts"]["demo"]["metric_failures"] == 2
    for sample in samples(tmp_path / "run", "demo"):
        assert sample["score_errors"]["rewriter"].startswith(
            "ReadOnlyError: this Prediction is read-only (setting 'answer')"
        )
        assert sample["scores"]["em"] == 0.0 and sample["prediction"]["answer"] == sample["question"]


def test_a_metric_that_changes_a_nested_input_is_a_counted_named_failure(tmp_path):
    mutation = json.dumps(["prediction", [3, 0], 6])  # the extras' nested dict: cleared
    results = demo_run(
        tmp_path, metrics=["meddler", "em"], metric_args={"meddler.mutation": mutation, "meddler.swallow": False}
    )
    assert results["counts"]["demo"]["metric_failures"] == 2
    for sample in samples(tmp_path / "run", "demo"):
        assert sample["score_errors"]["meddler"].startswith("ReadOnlyError: this dict is read-only")
        assert sample["prediction"]["extras"] == {"nested": {"list": [1, [2]], "kind": "x"}}


def test_search_results_are_copies_a_system_may_annotate_without_changing_the_example(tmp_path):
    results = demo_run(tmp_path, system="annotating")
    assert results["counts"]["demo"]["failed"] == 0
    assert all(doc["text"] == "changed" for doc in samples(tmp_path / "run", "demo")[0]["prediction"]["docs"])


def test_a_metric_reaches_no_other_metrics_judge_calls_nli_or_counts(tmp_path):
    results = demo_run(tmp_path, metrics=["judging", "context_meddler", "context_probe"], judges=["scripted:echo"])
    assert results["results"]["demo"]["context_probe"] == 1.0
    for sample in samples(tmp_path / "run", "demo"):
        assert [step["name"] for step in sample["judge_trace"]] == ["chat"]  # the judging metric's call, kept
        assert sample["counted"] == {"context_meddler": {"meddled": 1}}


def test_a_corpus_metric_changes_no_count_or_score_of_the_samples_it_reads(tmp_path):
    results = demo_run(tmp_path, metrics=["em", "corpus_meddler"])
    assert results["counts"]["demo"]["failed"] == 0 and results["counts"]["demo"]["metric_failures"] == 1
    assert results["results"]["demo"]["em"] == 0.0
    entry = results["details"]["demo"]["meddled"]
    assert entry["value"] is None and entry["error"].startswith("ReadOnlyError: this dict is read-only")


def test_a_system_that_changes_the_tasks_options_fails_and_the_recorded_config_stands(tmp_path):
    results = demo_run(tmp_path, system="task_args_editor")
    assert results["counts"]["demo"]["failed"] == 2
    assert "max_tokens" not in results["config"]["task_configs"]["demo"]
    assert samples(tmp_path / "run", "demo")[0]["error"].startswith("ReadOnlyError: this dict is read-only")


async def test_a_searchs_documents_are_its_callers_own_down_to_nested_metadata():
    from ragbench.testing import make_context

    ctx = make_context("demo", docs=[Document(id="d", title="", text="t", metadata={"sentences": ["s"]})])
    first = await ctx.retriever.search("q", 1)
    first[0].metadata["sentences"].append("annotated")
    again = await ctx.retriever.search("q", 1)
    assert again[0].metadata == {"sentences": ["s"]}


def test_the_runs_tools_are_read_only_to_its_examples():
    from ragbench.testing import make_context

    tools = {"kg": object()}
    ctx = make_context("demo", tools=tools)
    with refused_as_read_only():
        ctx.tools["kg"] = None
    assert ctx.tools["kg"] is tools["kg"]


def test_the_sample_records_reporting_hooks_read_are_read_only():
    record = SampleRecord.from_dict(
        {
            "id": "1",
            "gold": {"answers": ["a"]},
            "scores": {"em": 1.0},
            "prediction": {"answer": "a", "extras": {"steps": [1, 2]}},
        }
    )
    for change in (
        lambda: record.scores.update(em=0.0),
        lambda: record.extras["steps"].append(3),
        lambda: setattr(record, "answer", "b"),
        lambda: record.gold["answers"].clear(),
    ):
        with refused_as_read_only():
            change()
    assert record.scores == {"em": 1.0} and record.extras == {"steps": [1, 2]} and record.answer == "a"
