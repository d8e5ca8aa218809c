"""The `python` system: a user's own function run on a task as a system, its passages the prediction's documents, its
spans captured in process (its own and those of OpenInference's instrumentors) and joined to their example, and every
way it can go wrong one clear line with nothing lost (tests/support/rag_apps.py holds the applications)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ragbench.api import ConfigError, Example, Metric, MetricDeclaration, SampleRecord
from ragbench.api.apps import Span, from_readable
from ragbench.plugins.python_app.system import PythonApp
from ragbench.testing import run_eval
from support.framework_runs import run_one
from support.helpers import cli_here, samples
from support.rag_apps import CALLS_FILE, CORPUS, JUDGE_FLAG, OPENAI_URL, QUESTIONS, fake_openai, varn_task
from support.viewer_pages import viewer_page

TESTS = Path(__file__).resolve().parents[2]


def run_app(tmp_path: Path, function: str, **options):
    system_args = {"callable": f"support.rag_apps:{function}", **options.pop("system_args", {})}
    return run_eval(
        [varn_task(tmp_path / "task")],
        system="python",
        system_args=system_args,
        progress=False,
        output=str(tmp_path / "run"),
        **options,
    ).results


def app_lines(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "calls" / "app.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("function", ["answer_sync", "answer_async"])
def test_a_function_answers_with_its_passages_as_the_documents_and_its_spans_as_the_trace(tmp_path, function):
    results = run_app(tmp_path, function)
    assert results["complete"], results.get("failures")
    assert results["details"]["varn_qa"]["em"]["value"] == 0.25  # "Olm" for q1 only: the top passage's first word
    for record in samples(tmp_path / "run", "varn_qa"):
        question = record["question"]
        shown = [doc["id"] for doc in record["prediction"]["docs"]]
        assert shown and set(shown) <= {p["id"] for p in CORPUS}
        kinds = [step["kind"] for step in record["trace"]]
        assert kinds[:3] == ["custom", "custom", "retrieval"]  # the call, its chain, its search
        call, chain, search = record["trace"][:3]
        assert call["name"] == "application" and call["response"]["answer"] == record["prediction"]["answer"]
        assert chain["span"]["parent"] == call["span"]["id"] and search["span"]["parent"] == chain["span"]["id"]
        assert search["request"]["query"] == question and search["response"]["ids"] == shown
        assert [doc["text"] for doc in search["docs"]] == [doc["text"] for doc in record["prediction"]["docs"]]
    if function == "answer_sync":  # run in a thread of its own, never on the event loop's
        threads = {
            span["attributes"]["app.thread"]
            for line in app_lines(tmp_path / "run")
            for span in line["spans"]
            if span["name"] == "rag"
        }
        assert threads and "MainThread" not in threads and all(name.startswith("ragbench-app") for name in threads)


def test_concurrent_examples_never_mix_their_spans(tmp_path):
    results = run_app(tmp_path, "answer_async", max_inflight=4)
    assert results["complete"]
    traces = set()
    for record in samples(tmp_path / "run", "varn_qa"):
        spans = [step["span"] for step in record["trace"]]
        ids = {span["id"] for span in spans}
        assert all(span["parent"] in ids for span in spans[1:])  # one tree, rooted at the call
        (search,) = [step for step in record["trace"] if step["kind"] == "retrieval"]
        (model,) = [step for step in record["trace"] if step["kind"] == "llm"]
        assert search["request"]["query"] == record["question"]
        assert model["request"]["messages"][0]["content"] == record["question"]
        assert model["prompt_tokens"] == len(record["question"]) and model["role"] == "app:toy-model"
        traces |= {
            span["trace_id"]
            for line in app_lines(tmp_path / "run")
            if line["id"] == record["id"]
            for span in line["spans"]
        }
    assert len(traces) == len(QUESTIONS)  # a trace each
    assert results["system_reports"]["varn_qa"]["app_spans"] == {
        "joined": 12,  # rag, search, generate: 3 an example
        "unjoined": 0,
        "late": 0,
        "rejected": 0,
        "malformed_exports": 0,
    }


def test_the_spans_recorded_are_those_the_sdk_exports_with_openais_instrumentor_and_priced(tmp_path, monkeypatch):
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # the process's first: as an application that traces sets it
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    exported = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    prices = tmp_path / "prices.yaml"
    prices.write_text("gpt-4o-mini: {prompt: 1.0, completion: 2.0}\n")
    with fake_openai() as url:
        monkeypatch.setenv(OPENAI_URL, url)
        results = run_app(tmp_path, "answer_openai", system_args={"instrument": "openai"}, price_table=str(prices))
    assert results["complete"], results.get("failures")
    assert results["details"]["varn_qa"]["em"]["value"] == 0.5  # the fake model: Olm for capital questions, Trask else
    lines = app_lines(tmp_path / "run")
    by_trace = {}
    for span in exported.get_finished_spans():
        by_trace.setdefault(f"{span.context.trace_id:032x}", []).append(span)
    prompt_tokens = 0
    for line in lines:
        recorded = [Span.from_dict(span) for span in line["spans"]]
        (trace_id,) = {span.trace_id for span in recorded}
        sdk = [from_readable(span) for span in by_trace[trace_id] if span.name != "ragbench example"]
        assert sorted(recorded, key=lambda s: s.span_id) == sorted(sdk, key=lambda s: s.span_id)
        (llm,) = [span for span in recorded if span.attributes.get("openinference.span.kind") == "LLM"]
        prompt_tokens += llm.attributes["llm.token_count.prompt"]
    record = samples(tmp_path / "run", "varn_qa")[0]
    (model,) = [step for step in record["trace"] if step["kind"] == "llm"]
    assert model["role"] == "app:gpt-4o-mini" and model["completion_tokens"] == 1
    cost = results["model_cost"]["varn_qa"]
    assert cost["calls"] == 4 and cost["prompt_tokens"] == prompt_tokens and cost["completion_tokens"] == 4
    assert cost["usd"] == pytest.approx((prompt_tokens * 1.0 + 4 * 2.0) / 1e6)


def test_an_application_that_raises_fails_its_example_keeping_its_spans(tmp_path):
    results = run_app(tmp_path, "raises")
    assert not results["complete"]
    for record in samples(tmp_path / "run", "varn_qa"):
        assert record["error"] == "ValueError: the index is not loaded"
        assert "rag_apps.py" in record["traceback"]
        assert [step["kind"] for step in record["trace"]] == ["custom", "custom", "retrieval"]
    assert not (tmp_path / "run" / "calls" / "app.jsonl").exists()  # nothing answered: --resume asks again


def test_an_answer_of_another_shape_is_one_line(tmp_path):
    results = run_app(tmp_path, "wrong_shape")
    errors = {record["error"] for record in samples(tmp_path / "run", "varn_qa")}
    assert errors == {
        "AppReplyError: python callable support.rag_apps:wrong_shape returned list: ['Olm'], expected a string or "
        "a mapping with 'answer' (and optionally 'passages')"
    }
    assert results["counts"]["varn_qa"]["failed"] == 4


def test_an_application_that_changes_what_it_is_given_changes_only_its_copy(tmp_path):
    results = run_app(tmp_path, "mutates")
    assert results["complete"] and results["details"]["varn_qa"]["em"]["value"] == 0.25
    for record, (qid, question, answer) in zip(samples(tmp_path / "run", "varn_qa"), QUESTIONS):
        assert (record["id"], record["question"], record["gold"]["answers"]) == (qid, question, [answer])


def test_an_application_that_blocks_the_event_loop_is_reported(tmp_path):
    results = run_app(tmp_path, "blocks_loop")
    assert results["complete"]
    (note,) = results["system_reports"]["varn_qa"]["notes"]
    assert note.startswith("4 example(s)' application held the event loop for over 0.1 s at once (longest 0.")
    assert results["system_stats"]["varn_qa"]["held_the_loop"] == 4


def test_a_blocking_call_in_a_task_the_application_starts_is_reported(tmp_path):
    results = run_app(tmp_path, "blocks_in_a_task")
    assert results["complete"]
    (note,) = results["system_reports"]["varn_qa"]["notes"]
    assert note.startswith("4 example(s)' application held the event loop for over 0.1 s at once (longest 0.")


class CountedReadings(list):
    """A task's samples as the reporting hooks get them, counting the passes made over them."""

    passes = 0

    def __iter__(self):
        self.passes += 1
        return super().__iter__()


def test_the_report_and_the_statistics_read_the_samples_once_and_give_what_the_declaration_gives():
    extras = [
        {"replayed": False, "spans_missing": n == 1, "held_the_loop": n == 2, "seconds": 0.5 * n, "spans": n}
        | ({"longest_hold_seconds": 0.25} if n == 2 else {})
        for n in range(4)
    ]
    records = CountedReadings(
        SampleRecord.sealed(id=str(n), index=n, extras={"app": app}, error="failed" if n == 3 else None)
        for n, app in enumerate(extras)
    )
    system = PythonApp(callable="support.rag_apps:answer_sync")
    statistics = getattr(system, "statistics", system.declares.recorded.statistics)  # as the run finds the hook
    report = system.report(records, True)
    figures = statistics(records)
    assert records.passes == 1  # the statistics read the extras the report's pass read
    assert figures == system.declares.recorded.statistics(records.copy())  # a plain list of them
    assert figures == {"examples": 3, "seconds": 0.5, "spans": 1, "replayed": 0, "spans_missing": 1, "held_the_loop": 1}
    assert [note.split(":")[0] for note in report["notes"]] == [
        "1 example(s)' spans did not arrive within span_wait=10 s of the reply",
        "1 example(s)' application held the event loop for over 0.1 s at once (longest 0.25 s), stalling every "
        "other example",
    ]
    assert statistics(records) == figures and records.passes == 2  # asked again: read again


async def test_the_loops_own_task_factory_makes_the_tasks_and_is_given_back_after_the_run():
    loop = asyncio.get_running_loop()
    made = []

    def factory(loop, coroutine, **kwargs):
        made.append(coroutine)
        return asyncio.Task(coroutine, loop=loop, **kwargs)

    loop.set_task_factory(factory)
    try:
        prediction = await run_one(PythonApp("support.rag_apps:blocks_in_a_task"), Example(id="q1", question="Olm?"))
        assert prediction.answer == "Olm" and prediction.extras["app"]["held_the_loop"]
        assert made  # the application's task (and the call's own) made by the loop's factory, timed
        assert loop.get_task_factory() is factory
    finally:
        loop.set_task_factory(None)


def test_spans_that_join_no_example_are_counted_not_dropped(tmp_path):
    results = run_app(tmp_path, "leaves_a_thread")
    report = results["system_reports"]["varn_qa"]
    assert report["app_spans"]["unjoined"] == 4 and report["app_spans"]["joined"] == 0
    assert report["notes"][0].startswith("4 span(s) joined no example (traces ")


@pytest.mark.parametrize(
    ("target", "line"),
    [
        (
            "no_such_app:answer",
            "system python: callable=no_such_app:answer: no module 'no_such_app' on the Python path",
        ),
        ("support.rag_apps:no_such", "system python: callable=support.rag_apps:no_such: support.rag_apps ("),
        ("support.rag_apps", "system python: callable=support.rag_apps: expected MODULE:ATTRIBUTE"),
        ("support.rag_apps:CORPUS", "system python: callable=support.rag_apps:CORPUS is a list, not a function"),
    ],
)
def test_a_function_that_cannot_be_loaded_is_refused_before_the_run_in_one_line(tmp_path, target, line):
    with pytest.raises(ConfigError) as refused:
        run_eval(
            [varn_task(tmp_path / "task")],
            system="python",
            system_args={"callable": target},
            progress=False,
            output=str(tmp_path / "run"),
        )
    assert line in str(refused.value) and "\n" not in str(refused.value)
    assert not (tmp_path / "run").exists()


def test_a_resumed_run_never_calls_the_application_again_for_an_example_it_answered(tmp_path):
    """A run killed (SIGKILL) after the application answered every example, while their judge had not: no sample is
    saved. Its --resume scores them from the recorded answers: the application was called once an example."""
    calls, flag, run = tmp_path / "calls.txt", tmp_path / "judge.flag", tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(TESTS), CALLS_FILE: str(calls), JUDGE_FLAG: str(flag)}
    command = [
        sys.executable,
        "-m",
        "ragbench",
        "--tasks",
        varn_task(tmp_path / "task"),
        "--system",
        "python",
        "--system-arg",
        "callable=support.rag_apps:counted",
        "--metrics",
        "+llm_judge",
        "--judge",
        "scripted:support.rag_apps:judge_when_flagged",
        "--output",
        str(run),
        "--no-progress",
    ]
    process = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    answered = run / "calls" / "app.jsonl"

    def answered_all() -> bool:
        return answered.exists() and len(answered.read_text().splitlines()) == len(QUESTIONS)

    deadline = time.monotonic() + 300  # a bound on a hung run, not a timing the outcome depends on
    while not answered_all() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert answered_all(), process.communicate(timeout=60)[0].decode()[-2000:]
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    saved = run / "samples" / "varn_qa.jsonl"
    assert not saved.exists() or not saved.read_text().strip()  # killed before any sample was saved
    flag.write_text("")
    resumed = subprocess.run([*command, "--resume"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    assert sorted(calls.read_text().split()) == sorted(qid for qid, _, _ in QUESTIONS)  # once each, over both
    records = samples(run, "varn_qa")
    assert len(records) == 4 and all(r["prediction"]["extras"]["app"]["replayed"] for r in records)
    assert all(r["scores"]["llm_judge"] == 1.0 for r in records)


def test_max_cost_counts_the_applications_own_model_calls(tmp_path):
    """The application's model calls are made before ragbench sees them: the run stops at the example that brought
    the spending over --max-cost, that example saved with its answer, the rest left to --resume."""
    prices = tmp_path / "prices.yaml"
    prices.write_text("toy-model: {prompt: 1000.0, completion: 1000.0}\n")  # $0.001 a token
    task, run = varn_task(tmp_path / "task"), tmp_path / "run"
    done = cli_here(
        "--tasks",
        task,
        "--system",
        "python",
        "--system-arg",
        "callable=support.rag_apps:answer_async",
        "--max-cost",
        "0.05",
        "--price-table",
        str(prices),
        "--max-inflight",
        "1",
        "--output",
        str(run),
        "--no-progress",
    )
    assert done.returncode != 0
    # q1 costs 28 + 1 tokens ("What is the capital of Varn?": 28 characters, its prompt tokens in rag_apps), $0.029;
    # q2 27 + 1, $0.028: over the cap at the second example
    assert "$0.0570 spent by this command; the application's own model calls went over it" in done.stderr
    assert "2 of 4 examples saved" in done.stderr
    assert len(samples(run, "varn_qa")) == 2


def test_the_viewer_shows_an_examples_spans_as_a_tree(tmp_path):
    run_app(tmp_path, "answer_async")
    page = viewer_page([tmp_path / "run"], "example/{rid}/varn_qa/0")
    names = [step["name"] for step in page["steps"]]
    assert names == ["application", "rag", "search", "generate"]
    assert page["outline"] == [
        {
            "group": "application (application)",
            "items": [{"step": 0}, {"group": "rag (chain)", "items": [{"step": 1}, {"step": 2}, {"step": 3}]}],
        }
    ]


def test_estimate_prices_the_applications_own_model_calls(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("toy-model: {prompt: 1000.0, completion: 1000.0}\n")
    done = cli_here(
        "estimate",
        "--tasks",
        varn_task(tmp_path / "task"),
        "--system",
        "python",
        "--system-arg",
        "callable=support.rag_apps:answer_async",
        "--price-table",
        str(prices),
        "--output",
        str(tmp_path / "run"),
        "--no-progress",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    total = sum(len(question) + 1 for _, question, _ in QUESTIONS) / 1000  # $0.001 a token, every example piloted
    assert f"dollars, system model: ${total:.4f}" in done.stdout
    assert "no dollars for" not in done.stdout  # the run loads no model of its own: nothing unpriced


NEXT_ASKED: list[str] = []  # the questions `answer_noting_the_next` was asked, in order


async def answer_noting_the_next(question: str, history: list) -> dict:
    NEXT_ASKED.append(question)
    return {"answer": "Olm"}


class WaitsForTheNextCall(Metric):
    """Scores the run's first example only once the application has been asked the next one (else 0 after 60 s)."""

    name = "waits_for_the_next_call"
    declares = MetricDeclaration(value_range=(0, 1))

    async def score(self, example, prediction, ctx=None):
        if example.question != QUESTIONS[0][1]:
            return 1.0
        for _ in range(6000):
            if len(NEXT_ASKED) > 1:
                return 1.0
            await asyncio.sleep(0.01)
        return 0.0


def test_the_application_is_asked_its_next_example_while_the_last_is_scored(tmp_path):
    """A slow metric or the sample's writing never holds the application's next call back: one example in flight,
    the first example's scoring waits for the application to be asked the second."""
    NEXT_ASKED.clear()
    results = run_eval(
        [varn_task(tmp_path / "task")],
        system="python",
        system_args={"callable": "test_python_app:answer_noting_the_next"},
        metrics=[WaitsForTheNextCall],
        max_inflight=1,
        progress=False,
        output=str(tmp_path / "run"),
    ).results
    assert results["complete"], results.get("failures")
    assert [question for _, question, _ in QUESTIONS] == NEXT_ASKED
    assert results["details"]["varn_qa"]["waits_for_the_next_call"]["value"] == 1.0


STEPS_MADE: list[str] = []  # the questions whose call was read as steps, in order (`calls_read_as_steps`)
ASKED_AFTER: list[tuple[str, list[str]]] = []  # each question asked, with the questions whose steps were made then


async def answer_noting_the_steps(question: str) -> dict:
    ASKED_AFTER.append((question, list(STEPS_MADE)))
    return {"answer": "Olm"}


def test_an_answered_example_is_read_as_steps_after_the_application_is_asked_the_next(tmp_path, monkeypatch):
    """Nothing reads an example's spans as steps before it is scored: the slot asks the application its next example
    first (one example in flight), and the samples' traces are whole all the same."""
    from ragbench.api.apps import call_steps

    def calls_read_as_steps(system, question, *args, **kwargs):
        STEPS_MADE.append(question)
        return call_steps(system, question, *args, **kwargs)

    monkeypatch.setattr("ragbench._apps.application.call_steps", calls_read_as_steps)  # where the system reads it
    STEPS_MADE.clear()
    ASKED_AFTER.clear()
    results = run_eval(
        [varn_task(tmp_path / "task")],
        system="python",
        system_args={"callable": "test_python_app:answer_noting_the_steps"},
        max_inflight=1,
        progress=False,
        output=str(tmp_path / "run"),
    ).results
    assert results["complete"], results.get("failures")
    questions = [question for _, question, _ in QUESTIONS]
    assert [question for question, _ in ASKED_AFTER] == questions and sorted(STEPS_MADE) == sorted(questions)
    for (_, made_then), before in zip(ASKED_AFTER[1:], questions):
        assert before not in made_then  # the example before was not read as steps when the next was asked
    for record in samples(tmp_path / "run", "varn_qa"):
        assert [step["name"] for step in record["trace"]][:1] == ["application"]


def test_a_replay_answers_from_the_recorded_run_and_never_calls_the_application(tmp_path):
    NEXT_ASKED.clear()
    task = varn_task(tmp_path / "task")
    first = run_eval(
        [task],
        system="python",
        system_args={"callable": "test_python_app:answer_noting_the_next"},
        progress=False,
        output=str(tmp_path / "run"),
    ).results
    assert first["complete"] and len(NEXT_ASKED) == len(QUESTIONS)
    done = cli_here("--replay", str(tmp_path / "run"), "--output", str(tmp_path / "again"), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert len(NEXT_ASKED) == len(QUESTIONS)  # not asked again
    again = json.loads((tmp_path / "again" / "results.json").read_text())
    assert again["details"] == first["details"] and again["config"]["replay_apps"] == str(tmp_path / "run" / "calls")
    assert [r["prediction"] for r in samples(tmp_path / "again", "varn_qa")] == [
        r["prediction"] | {"extras": {"app": r["prediction"]["extras"]["app"] | {"replayed": True}}}
        for r in samples(tmp_path / "run", "varn_qa")
    ]
    assert app_lines(tmp_path / "again") == app_lines(tmp_path / "run")  # the replay can be replayed in turn
    # an example the recorded run never answered fails in one line; the application is still not called
    data = Path(task).parent / "varn_qa.jsonl"
    data.write_text(data.read_text().replace("capital of Varn", "capital city of Varn", 1))
    done = cli_here("--replay", str(tmp_path / "run"), "--output", str(tmp_path / "changed"), "--no-progress")
    assert len(NEXT_ASKED) == len(QUESTIONS)
    (failed,) = [r for r in samples(tmp_path / "changed", "varn_qa") if r["error"]]
    assert failed["error"].startswith("NotRecorded: system python: --replay: ") and "holds no answer" in failed["error"]
