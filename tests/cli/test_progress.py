"""The run's progress bar (ragbench._run.progress) counts examples done of every example the run's tasks hold, a
total known at the start that does not grow; its ETA comes from the examples finished (before one has, a least
one where examples wait, else the pace of the calls answered, else "estimating"), timed on the bar's clock (a fake
one here: nothing waits); under --resume the examples saved before count as done, so a finished run's bar ends at
its total (20/20), through the command line too."""

from __future__ import annotations

import io
import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._run import progress as progress_module
from ragbench._run.progress import Progress
from ragbench._scheduler import CallStats
from ragbench.testing import installed_registry
from support import paths
from support.helpers import cli_here, cli_run_args, samples


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def quiet(monkeypatch) -> io.StringIO:
    out = io.StringIO()
    monkeypatch.setattr(progress_module.sys, "stderr", out)
    return out


def bar_lines(text: str) -> list[str]:
    """The bar as drawn, each state of it (tqdm redraws over a carriage return)."""
    return [part.strip() for part in re.split(r"[\r\n]", text) if re.match(r"ragbench: .* examples \[", part.strip())]


def test_the_total_is_the_examples_and_it_does_not_grow_as_calls_are_answered(monkeypatch):
    out = quiet(monkeypatch)
    stats = CallStats()
    bar = Progress(stats, total=20, clock=Clock())
    assert bar.bar is not None and (bar.bar.n, bar.bar.total) == (0, 20)
    stats.calls, stats.cache_hits = 60, 2  # a multi-step system: three calls each so far, none ended
    bar.refresh()
    assert (bar.bar.n, bar.bar.total) == (0, 20)
    assert "0/20 examples" in bar_lines(out.getvalue())[-1] and "calls 62" in bar_lines(out.getvalue())[-1]
    bar.advance()
    stats.calls += 40
    bar.refresh()
    assert (bar.bar.n, bar.bar.total) == (1, 20)
    bar.close()


def test_before_an_example_finishes_the_eta_says_the_calls_pace_then_comes_from_finished_examples(monkeypatch):
    out = quiet(monkeypatch)
    clock = Clock()
    bar = Progress(CallStats(calls=5), total=4, clock=clock)
    clock.now += 30
    bar.refresh()
    assert bar.eta() is None and "ETA once an example ends (a call every 6.0 s)" in bar_lines(out.getvalue())[-1]
    bar.advance()  # 1 of 4 after 30 s: 3 left at 30 s each
    clock.now += 10
    assert bar.eta() == 3 * 30 - 10  # counted down from the finish
    clock.now += 200  # past the estimate, none finished since: the same, at the mean time per example now
    assert bar.eta() == 3 * 240
    bar.advance(failed=True), bar.advance(), bar.advance()
    assert bar.eta() == 0.0
    bar.close()
    last = bar_lines(out.getvalue())[-1]
    assert "100%" in last and "4/4 examples" in last and "failed 1" in last


def test_while_examples_wait_to_begin_the_eta_is_a_least_one_before_any_finishes(monkeypatch):
    out = quiet(monkeypatch)
    clock = Clock()
    bar = Progress(CallStats(calls=8), total=20, clock=clock)
    for _ in range(4):
        bar.begin()  # 4 running (a multi-step system's first examples), 16 waiting
    clock.now += 30
    bar.refresh()
    assert bar.eta() is None and bar.least() == 16 / 4 * 30  # 4 batches of the 4 running, each >= 30 s
    assert "ETA at least 02:00" in bar_lines(out.getvalue())[-1]
    bar.advance()  # one finished: the ETA from finished examples, as before
    assert bar.least() is None and bar.eta() == 19 * 30
    bar.close()


def test_with_every_example_running_and_none_finished_it_says_the_calls_pace_not_estimating(monkeypatch):
    """--limit 3 of a multi-step system, all three running at once: no example ended, so no total time can be had
    (no system declares how many LLM calls an example makes at most: a search budget bounds searches, and the
    only ceiling, --max-steps-per-example, is 10,000 steps); the bar says when an ETA comes and how fast calls are
    answered, which moves, not 'estimating' for half an hour."""
    out = quiet(monkeypatch)
    clock = Clock()
    stats = CallStats()
    bar = Progress(stats, total=3, clock=clock)
    for _ in range(3):
        bar.begin()
    clock.now += 5
    bar.refresh()  # the first calls still in flight: nothing to tell a pace from
    assert "ETA estimating" in bar_lines(out.getvalue())[-1]
    stats.calls, stats.cache_hits, stats.errors = 400, 38, 2  # 440 answered in half an hour
    clock.now += 1795
    bar.refresh()
    assert bar.least() is None and bar.eta() is None
    last = bar_lines(out.getvalue())[-1]
    assert "ETA once an example ends (a call every 4.1 s), calls 440" in last and "estimating" not in last
    bar.advance()  # one ended: the ETA from it, as before
    assert bar.eta() == 2 * 1800 and "ETA 1:00:00" in bar.beside()
    bar.close()


def test_examples_passed_as_saved_are_done_but_not_a_measure_of_speed(monkeypatch):
    quiet(monkeypatch)
    clock = Clock()
    bar = Progress(CallStats(), total=20, clock=clock)
    for _ in range(16):
        bar.pass_saved()  # --resume: saved by the attempt before
    assert bar.done == 16 and bar.eta() is None  # none of them was run by this attempt
    clock.now += 8
    bar.advance()
    assert bar.eta() == 3 * 8.0  # 3 left, 8 s each, as this attempt ran them
    bar.close()


def test_a_run_of_unknown_size_counts_examples_without_a_total_or_eta(monkeypatch):
    out = quiet(monkeypatch)
    bar = Progress(CallStats(calls=5), total=None, clock=Clock())
    bar.advance()
    assert bar.bar is not None and bar.bar.n == 1 and bar.bar.total is None and bar.eta() is None
    bar.close()
    assert "1 examples" in bar_lines(out.getvalue())[-1] and "ETA" not in out.getvalue()


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 40),
    st.data(),
)
def test_whatever_the_order_and_resume_split_the_bar_never_passes_its_total_and_ends_there(total, data):
    saved = data.draw(st.integers(0, total), label="saved before")
    failed = data.draw(st.lists(st.booleans(), min_size=total - saved, max_size=total - saved), label="failed")
    events = data.draw(st.permutations(["pass"] * saved + [f"run {i}" for i in range(total - saved)]))
    out, clock = io.StringIO(), Clock()
    progress_module.sys.stderr, stderr = out, progress_module.sys.stderr
    try:
        bar = Progress(CallStats(), total=total, clock=clock)
        for event in events:
            clock.now += data.draw(st.floats(0, 100), label="seconds")
            if event == "pass":
                bar.pass_saved()
            else:
                bar.begin()
                least = bar.least()
                assert least is None or least >= 0
                bar.advance(failed=failed[int(event.split()[1])])
            assert bar.bar is not None and bar.done == bar.bar.n <= bar.bar.total == total
            eta = bar.eta()
            assert eta is None or eta >= 0
        bar.close()
    finally:
        progress_module.sys.stderr = stderr
    assert bar.done == total and bar.eta() == (0.0 if total > saved else None)
    last = bar_lines(out.getvalue())[-1]
    assert "100%" in last and f"{total}/{total} examples" in last and f"failed {sum(failed)}" in last


def test_a_resumed_run_ends_its_bar_at_the_total(tmp_path):
    """A run of 20 examples stops at the 16th (--fail-fast: its question has no answer), then --resume runs it
    and the four after it: the bar counts the 15 saved as done and ends at 20/20."""
    source = paths.REPO / "tasks" / "selfrag" / "data" / "demo_qa.jsonl"
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()][:20]
    data = tmp_path / "demo.jsonl"
    broken = [{**r, "question": r["question"] + " BROKEN"} if i == 15 else r for i, r in enumerate(records)]
    data.write_text("".join(json.dumps(r) + "\n" for r in broken))
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"pattern": "^(?!.*BROKEN)", "response": "answer"}]))
    args = [
        *cli_run_args(f"scripted:{rules}", "--data", f"demo={data}", "--limit", "20", "--max-inflight", "1"),
        "--bootstrap-iters",
        "0",
        "--output",
        str(tmp_path / "run"),
    ]
    stopped = cli_here(*args, "--fail-fast")
    assert stopped.returncode == 1 and len(samples(tmp_path / "run", "demo")) == 16
    assert "16/20 examples" in bar_lines(stopped.stderr)[-1]
    data.write_text("".join(json.dumps(r) + "\n" for r in records))  # the cause fixed in the data
    resumed = cli_here(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    last = bar_lines(resumed.stderr)[-1]
    assert "100%" in last and "20/20 examples" in last and "failed 0" in last


def test_progress_total_comes_from_the_data_and_the_limit():
    from ragbench._run.evaluator import Evaluator, RunConfig

    assert (
        Evaluator(RunConfig.of(tasks=["demo"], model="scripted:echo"), registry=installed_registry()).plan.known_total()
        == 24
    )
    assert (
        Evaluator(
            RunConfig.of(tasks=["demo"], model="scripted:echo", limit=5), registry=installed_registry()
        ).plan.known_total()
        == 5
    )


def test_a_system_that_bounds_its_calls_has_an_eta_from_its_first_answered_call(monkeypatch):
    """self_ask on 300 questions, all running at once, none ending for ten minutes: with at most 5 calls an
    example (max_iter), the calls left at most at the pace calls are answered is an ETA from the first call."""
    out = quiet(monkeypatch)
    clock = Clock()
    stats = CallStats()
    bar = Progress(stats, total=3, clock=clock, calls_at_most=5)
    for _ in range(3):
        bar.begin()
    clock.now += 5
    bar.refresh()
    assert "ETA estimating" in bar_lines(out.getvalue())[-1]  # no call answered yet: no pace
    stats.calls = 6  # two rounds of the three examples in 60 s: 10 s a call, at most 15 - 6 = 9 calls left
    clock.now += 55
    bar.refresh()
    assert bar.eta() is None and bar.most() == 90.0
    assert "ETA at most 01:30 (5 calls an example at most), calls 6" in bar_lines(out.getvalue())[-1]
    bar.advance()  # one ended: the ETA from finished examples, as before
    assert bar.most() is None and bar.eta() == 2 * 60
    bar.close()


def test_with_examples_waiting_the_bounded_eta_stands_beside_the_least_one(monkeypatch):
    quiet(monkeypatch)
    clock = Clock()
    stats = CallStats()
    bar = Progress(stats, total=20, clock=clock, calls_at_most=5)
    for _ in range(4):
        bar.begin()
    stats.calls = 8
    clock.now += 30  # 4 running, 16 waiting: at least 4 batches of 30 s; at most 100 - 8 = 92 calls at 3.75 s
    assert bar.eta_text() == "at least 02:00, at most 05:45 (5 calls an example at most)"
    stats.calls = 95  # a pace that promises less than the least: only the least is said
    assert bar.eta_text() == "at least 02:00"
    bar.close()


def test_a_self_ask_run_gives_the_bar_its_max_iter(tmp_path, monkeypatch):
    """Through a run: self_ask's bound (max_iter, 3 here) reaches the bar, whose ETA before the first example
    ends is the bounded one (read as the first example ends, by a scripted model that answers at once)."""
    from ragbench._run.modes import attempt

    seen = []

    class Recording(Progress):
        def advance(self, failed: bool = False) -> None:
            if not self.finished:
                seen.append(self.eta_text())
            super().advance(failed)

    monkeypatch.setattr(attempt, "Progress", Recording)
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"response": "So the final answer is: Paris"}]))
    args = cli_run_args(f"scripted:{rules}", "--limit", "3", system="self_ask")
    result = cli_here(*args, "--system-arg", "max_iter=3", "--output", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert len(seen) == 1 and seen[0].startswith("at most ") and seen[0].endswith("(3 calls an example at most)")
