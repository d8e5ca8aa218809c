"""A plugin's fault never takes the run down with it (ragbench._plugin_calls): whatever a system, a metric, an
engine or a reporting hook raises (SystemExit, GeneratorExit, its own KeyboardInterrupt, an exception whose
`__str__` raises) or returns against its contract (no Prediction, an answer that is no string, extras JSON
cannot hold, a report whose errors are a string, format counts of -3) is that example's or that hook's
counted failure, named, with the fix; the run completes, its samples read back as written, and --resume
completes it. The run's own stop signals still stop it."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading

import pytest

from ragbench._plugin_calls import PluginCall, exception_line, traceback_text
from ragbench._stop_signals import raise_stop
from ragbench._storage.sample_files import iter_samples
from ragbench.api import Metric, Prediction, Step, System, SystemDeclaration
from ragbench.testing import PreflightError, ScriptedLLM, run_eval


class UnreadableMessage(Exception):
    def __str__(self):
        raise RuntimeError("no message")


class ExitingMessage(Exception):
    def __str__(self):
        sys.exit(4)


def system_that(behaviour):
    """A system whose run does `behaviour(example)` (its value returned)."""

    class Faulty(System):
        name = "faulty"
        declares = SystemDeclaration(uses_llm=False)

        async def run(self, example, ctx):
            return behaviour(example)

    return Faulty


def raising(exc):
    def behave(example):
        raise exc

    return behave


def cyclic():
    extras = {}
    extras["self"] = extras
    return extras


def folder_samples(run_dir, task="demo"):
    errors = []
    samples = list(iter_samples(run_dir / "samples" / f"{task}.jsonl", errors))
    return samples, errors


@pytest.mark.parametrize(
    "exc, line",
    [
        (
            SystemExit(3),
            "SystemExit: 3 (raised by plugin code; raise an Exception to fail one call: a SystemExit ends "
            "a whole program)",
        ),
        (
            GeneratorExit(),
            "GeneratorExit: raised by plugin code; raise an Exception to fail one call: a GeneratorExit "
            "ends a whole program",
        ),
        (
            KeyboardInterrupt(),
            "KeyboardInterrupt: raised by plugin code; raise an Exception to fail one call: a "
            "KeyboardInterrupt ends a whole program",
        ),
        (UnreadableMessage(), "UnreadableMessage: <its message could not be read: its __str__ raised>"),
        (ExitingMessage(), "ExitingMessage: <its message could not be read: its __str__ raised>"),
    ],
    ids=["SystemExit", "GeneratorExit", "KeyboardInterrupt", "str-raises", "str-exits"],
)
def test_whatever_a_system_raises_fails_its_examples_and_the_run_completes_and_resumes(tmp_path, exc, line):
    run = run_eval("demo", system_that(raising(exc)), limit=3, output=tmp_path / "run")
    assert run.results["counts"]["demo"]["failed"] == 3 and not run.complete
    assert [s.error for s in run.samples["demo"]] == [line] * 3
    [cause] = run.results["failures"]["demo"]
    assert (cause["cause"], cause["count"]) == (type(exc).__name__, 3)
    samples, unreadable = folder_samples(tmp_path / "run")
    assert not unreadable and all("Traceback (most recent call last)" in s["traceback"] for s in samples)
    assert (tmp_path / "run" / "results.json").is_file()
    resumed = run_eval("demo", system_that(raising(exc)), limit=3, output=tmp_path / "run", resume=True)
    assert resumed.results["counts"] == run.results["counts"]


@pytest.mark.parametrize(
    "returned, wrong",
    [
        (lambda e: None, "returned NoneType, not a Prediction"),
        (lambda e: "the answer", "returned str, not a Prediction"),
        (lambda e: Prediction(e.id, answer=42), "returned a Prediction whose `answer` is int"),
        (
            lambda e: Prediction(e.id, answer="a", citations=[1]),
            "`citations` is not a list of lists of document numbers",
        ),
        (lambda e: Prediction(e.id, answer="a", docs=["d1"]), "`docs` holds what is not a Document"),
        (
            lambda e: Prediction(e.id, answer="a", extras={"x": cyclic()}),
            "`prediction['extras']['x']['self']` holds itself (a cycle)",
        ),
        (
            lambda e: Prediction(e.id, answer="a", extras={"n": 10**5000}),
            "`prediction['extras']['n']` is an integer of more than 4,300 digits",
        ),
        (lambda e: Prediction(e.id, answer="a", extras={"ids": {1, 2}}), "`prediction['extras']['ids']` is set"),
    ],
    ids=["None", "str", "int-answer", "flat-citations", "str-docs", "cycle", "5000-digits", "set"],
)
def test_a_value_against_the_prediction_contract_fails_its_example_before_it_is_written(tmp_path, returned, wrong):
    run = run_eval("demo", system_that(returned), limit=2, output=tmp_path / "run")
    assert run.results["counts"]["demo"]["failed"] == 2 and run.results["counts"]["demo"]["missing"] == 0
    for sample in run.samples["demo"]:
        assert sample.error.startswith("InvalidPrediction: system faulty ") and wrong in sample.error
        assert sample.error.endswith("extras JSON values (docs/writing-plugins.md)")
    samples, unreadable = folder_samples(tmp_path / "run")
    assert len(samples) == 2 and not unreadable and "checkpoint_repairs" not in run.results


def test_a_sample_the_reader_would_refuse_is_written_as_its_examples_failure(tmp_path):
    def custom_step(example, ctx):
        ctx.trace.append(Step("custom", "loop", {"q": example.question}, {"self": cyclic()}))
        return Prediction(example.id, answer="a")

    class StepAppender(System):
        name = "step_appender"
        declares = SystemDeclaration(uses_llm=False)

        async def run(self, example, ctx):
            return custom_step(example, ctx)

    run = run_eval("demo", StepAppender, limit=2, output=tmp_path / "run")
    assert run.results["counts"]["demo"]["failed"] == 2
    # the trace is made read-only first (ragbench._read_only), which copies the cycle's first turn: it is met again
    # one level further in
    assert [s.error for s in run.samples["demo"]] == [
        "UnwritableSample: `sample['trace'][0]['response']['self']['self']['self']` holds itself (a cycle): JSON holds trees; "
        "every value a task, system or metric hands ragbench must be JSON, of bounded size (docs/writing-plugins.md)"
    ] * 2
    samples, unreadable = folder_samples(tmp_path / "run")
    assert [s["id"] for s in samples] == [s.id for s in run.samples["demo"]] and not unreadable


def test_a_numpy_number_in_extras_is_named_with_its_fix():
    import numpy

    run = run_eval(
        "demo", system_that(lambda e: Prediction(e.id, answer="a", extras={"p": numpy.float32(0.5)})), limit=1
    )
    [sample] = run.samples["demo"]
    assert (
        "`prediction['extras']['p']` is a float32, not a Python number: give it as float(...) or int(...)"
        in sample.error
    )


class ExitingMetric(Metric):
    name = "exiting"

    def score(self, example, prediction, ctx=None):
        sys.exit("metric gave up")


class ExitingAggregate(Metric):
    name = "exiting_aggregate"

    def score(self, example, prediction, ctx=None):
        return 1.0

    def aggregate(self, key, values):
        raise GeneratorExit


def test_a_metric_that_exits_fails_on_each_example_with_its_traceback_and_the_others_score():
    run = run_eval("demo", "closed_book", metrics=[ExitingMetric, "match"], limit=2)
    for sample in run.samples["demo"]:
        assert sample.score_errors == {
            "exiting": "SystemExit: metric gave up (raised by plugin code; raise an "
            "Exception to fail one call: a SystemExit ends a whole program)"
        }
        assert "match" in sample.scores
    assert run.results["counts"]["demo"]["metric_failures"] == 2


def test_an_aggregate_that_raises_generator_exit_is_the_metrics_failure():
    run = run_eval("demo", "closed_book", metrics=[ExitingAggregate], limit=2)
    entry = run.results["details"]["demo"]["exiting_aggregate"]
    assert entry["value"] is None and entry["error"].startswith("GeneratorExit: raised by plugin code")


def test_an_engine_that_exits_fails_the_calls_of_its_batch_and_the_run_completes():
    def script(request):
        raise SystemExit(9)

    run = run_eval("demo", "closed_book", ScriptedLLM(script), limit=2)
    assert run.results["counts"]["demo"]["failed"] == 2
    assert all("SystemExit: 9 (raised by plugin code" in s.error for s in run.samples["demo"])


class BadHooks(System):
    """Reporting hooks that return what their contracts do not allow."""

    name = "bad_hooks"
    declares = SystemDeclaration(uses_llm=False)
    returns: dict = {}

    async def run(self, example, ctx):
        return Prediction(example.id, answer="a")

    def report(self, samples, complete_data):
        return self.returns.get("report")

    def format_adherence(self, samples):
        return self.returns.get("format_adherence")

    def statistics(self, samples):
        return self.returns.get("statistics")


@pytest.mark.parametrize(
    "hook, value, why",
    [
        ("report", {"errors": "twenty characters!!"}, 'returned "errors" as a str, not a list of strings'),
        ("report", {"errors": [3]}, 'returned "errors" holding a int, not a list of strings'),
        ("format_adherence", "oops", "returned str, not a list of"),
        ("format_adherence", [{"format": "f", "followed": 2, "of": -3, "fix": "x"}], "item 0 with followed 2 of -3"),
        ("format_adherence", [{"format": "f", "followed": 5, "of": 3, "fix": "x"}], "item 0 with followed 5 of 3"),
        (
            "format_adherence",
            [{"format": "f", "followed": True, "of": 3, "fix": "x"}],
            "item 0 with followed a bool of 3",
        ),
        (
            "format_adherence",
            [{"format": "f", "followed": 1.5, "of": 3, "fix": "x"}],
            "item 0 with followed a float of 3",
        ),
        ("statistics", {1, 2}, "returned set, not an object (a dict) or None"),
        ("statistics", {"loop": cyclic()}, "`statistics['loop']['self']` holds itself"),
    ],
    ids=[
        "errors-str",
        "errors-int",
        "adherence-str",
        "of-negative",
        "followed-over-of",
        "bool-count",
        "float-count",
        "stats-set",
        "stats-cycle",
    ],
)
def test_a_hook_value_against_its_contract_is_one_counted_error_and_resume_says_the_same(tmp_path, hook, value, why):
    system = type("BadHooksNow", (BadHooks,), {"returns": {hook: value}})
    run = run_eval("demo", system, limit=2, output=tmp_path / "run")
    [error] = run.results["system_reports"]["demo"]["errors"]
    assert error.startswith(f"System.{hook} of BadHooksNow ") and why in error
    assert error.endswith("; its value is left out (docs/writing-plugins.md)")
    assert not run.complete and run.results["counts"]["demo"]["scored"] == 2
    assert "format_adherence" not in run.results and "system_stats" not in run.results
    resumed = run_eval("demo", system, limit=2, output=tmp_path / "run", resume=True)
    assert resumed.results["system_reports"] == run.results["system_reports"]


def test_a_hook_that_exits_is_counted_with_its_traceback_in_results_and_resume_reads_it(tmp_path):
    def statistics(self, samples):
        sys.exit(1)

    system = type("ExitingStats", (BadHooks,), {"statistics": statistics})
    run = run_eval("demo", system, limit=2, output=tmp_path / "run")
    assert (
        run_eval("demo", system, limit=2, output=tmp_path / "run", resume=True).results["system_reports"]
        == run.results["system_reports"]
    )
    report = run.results["system_reports"]["demo"]
    assert report["errors"] == [
        "System.statistics of ExitingStats failed (SystemExit: 1 (raised by plugin code; raise "
        "an Exception to fail one call: a SystemExit ends a whole program)); its records are "
        "ragbench.api.SampleRecord objects (docs/writing-plugins.md)"
    ]
    assert "in statistics\n    sys.exit(1)" in report["tracebacks"]["statistics"]


def test_good_format_counts_are_kept():
    checks = [{"format": "f", "followed": 2, "of": 3, "fix": "x"}]
    run = run_eval("demo", type("GoodHooks", (BadHooks,), {"returns": {"format_adherence": checks}}), limit=2)
    assert run.results["format_adherence"]["demo"] == checks and "system_reports" not in run.results


def test_a_stop_signal_raised_inside_a_system_still_stops_the_run():
    with pytest.raises(KeyboardInterrupt):
        run_eval("demo", system_that(lambda example: raise_stop(signal.SIGINT)), limit=2)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_thread_a_system_starts_that_exits_ends_only_that_thread():
    def in_a_thread(example):
        thread = threading.Thread(target=sys.exit, args=(2,))
        thread.start()
        thread.join()
        return Prediction(example.id, answer="a")

    run = run_eval("demo", system_that(in_a_thread), limit=2)
    assert run.results["counts"]["demo"]["scored"] == 2


def test_an_exception_whose_str_exits_still_has_a_line_and_a_traceback():
    try:
        raise ExitingMessage()
    except ExitingMessage as exc:
        assert exception_line(exc) == "ExitingMessage: <its message could not be read: its __str__ raised>"
        assert traceback_text(exc).startswith("Traceback (most recent call last):\n")


def test_the_guard_lets_the_run_stop_and_cancel_and_counts_what_a_plugin_raises_itself():
    async def sleeping():
        with PluginCall():
            await asyncio.sleep(60)

    async def cancelled_while_in_a_plugin():
        task = asyncio.ensure_future(sleeping())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    async def a_plugins_own_cancelled_error():
        with PluginCall() as call:
            raise asyncio.CancelledError
        return call.error

    asyncio.run(cancelled_while_in_a_plugin())
    assert asyncio.run(a_plugins_own_cancelled_error()).startswith("CancelledError: raised by plugin code")
    with pytest.raises(KeyboardInterrupt), PluginCall():
        raise_stop(signal.SIGINT)
    with PluginCall() as call:
        raise KeyboardInterrupt
    assert call.error.startswith("KeyboardInterrupt: raised by plugin code")


def test_a_task_whose_examples_exit_midway_runs_the_records_before_and_counts_the_stop(tmp_path):
    from ragbench.tasks.selfrag.demo import Demo

    class StoppingDemo(Demo):
        name = "stopping_demo"

        def examples(self):
            for n, item in enumerate(super().examples()):
                if n == 2:
                    sys.exit("loader gave up")
                yield item

    run = run_eval(StoppingDemo, "closed_book", output=tmp_path / "run")
    counts = run.results["counts"]["stopping_demo"]
    assert (counts["records"], counts["scored"], counts["bad_records"]) == (3, 2, 1) and not run.complete
    [bad] = [s for s in run.samples["stopping_demo"] if s.bad_record]
    assert bad.error.startswith("bad record: stopping_demo:3: the task's examples() raised SystemExit: loader gave up")
    resumed = run_eval(StoppingDemo, "closed_book", output=tmp_path / "run", resume=True)
    assert resumed.results["counts"] == run.results["counts"]


def test_a_task_whose_examples_exit_at_once_is_a_pre_flight_problem_in_one_line():
    from ragbench.api import Preflight
    from ragbench.api.run import probe_data
    from ragbench.tasks.selfrag.demo import Demo

    class ExitingDemo(Demo):
        name = "exiting_demo"

        def examples(self):
            raise SystemExit(2)
            yield

    check = Preflight()
    probe_data(ExitingDemo(), check)
    [problem] = check.problems
    assert problem == (
        "task exiting_demo: cannot read its data (SystemExit: 2); fix the file or pass --data exiting_demo=PATH"
    )


@pytest.mark.parametrize("exc", [ValueError("no such field"), SystemExit("gave up")], ids=["ValueError", "SystemExit"])
def test_a_plugins_check_that_raises_is_one_pre_flight_line(exc):
    class CheckingSystem(System):
        name = "checking"
        declares = SystemDeclaration(uses_llm=False)

        def check(self, task):
            raise exc

        async def run(self, example, ctx):
            return Prediction(example.id, answer="a")

    with pytest.raises(PreflightError) as raised:
        run_eval("demo", CheckingSystem, limit=1)
    assert raised.value.problems == [
        f"system checking on task demo: the check raised {type(exc).__name__}: {exc} "
        "(a bug of the plugin checked: tell its author; `ragbench check` shows every "
        "problem)"
    ]
