"""`ragbench estimate`: a pilot of a random sample of the run's examples, run in the run's own folder (which the run
then resumes, paying nothing twice), and the run's totals estimated from it, each with an interval that holds the
actual total (ragbench._run.estimate.pilot_run, ragbench._cost.estimate_figures)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._config.judging import RunJudging
from ragbench._config.models import RunModels
from ragbench._config.run_config import RunConfig
from ragbench._cost.estimate_figures import EstimatedTotal, extrapolated, pilot_for, regressed
from ragbench._cost.pilot import MIN_PILOT, PilotSize
from ragbench._cost.prices import ModelPrices
from ragbench._run.estimate.pilot_run import unknowns
from ragbench.api import ConfigError
from support.helpers import cli_here

PRICES = (
    "scripted:support.estimate_fake:reply: {prompt: 2.5, completion: 10}\n"
    "scripted:support.estimate_fake:judge: {prompt: 0.15, completion: 0.6}\n"
)


def options(tmp_path: Path, *more: str) -> list[str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "prices.yaml").write_text(PRICES)
    return [
        "--tasks",
        "demo",
        "--system",
        "vanilla",
        "--model",
        "scripted:support.estimate_fake:reply",
        "--price-table",
        str(tmp_path / "prices.yaml"),
        "--output",
        str(tmp_path / "run"),
        "--no-progress",
        *more,
    ]


def estimated(tmp_path: Path, *more: str, pilot: str | None = "25%", precision: str | None = None) -> dict:
    sized = [*(["--pilot", pilot] if pilot is not None else []), *(["--precision", precision] if precision else [])]
    done = cli_here("estimate", *sized, "--json", *options(tmp_path, *more))
    assert done.returncode == 0, done.stderr
    result: dict = json.loads(done.stdout)
    return result


def test_the_pilot_is_part_of_the_run_and_the_resumed_run_pays_only_the_rest(tmp_path: Path) -> None:
    estimate = estimated(tmp_path, pilot="50%")
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    assert not run_json["finished"] and estimate["pilot_examples"] == 12 == run_json["attempts"][0]["examples"]
    assert estimate["records"] == 24 and estimate["paid"]["llm_calls"] == 12
    done = cli_here(*options(tmp_path, "--resume"))
    assert done.returncode == 0, done.stderr
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    assert [attempt["llm_calls"] for attempt in run_json["attempts"]] == [12, 12]  # the pilot's not sent again
    actual = json.loads((tmp_path / "run" / "results.json").read_text())["model_cost"]["demo"]
    assert EstimatedTotal(**estimate["totals"]["llm_calls"]).holds(actual["calls"])
    # the pilot's tokens are in the run's total once (paid), the rest estimated at the pilot's mean: 12 more
    paid = estimate["paid"]["completion_tokens"]
    assert estimate["totals"]["completion_tokens"]["point"] == pytest.approx(paid + 12 * paid / 12)
    assert run_json["attempts"][0]["completion_tokens"] == paid < actual["completion_tokens"]


def test_a_judged_metric_is_estimated_and_priced_at_the_judges_price(tmp_path: Path) -> None:
    judged = ("--metrics", "+llm_judge", "--judge", "scripted:support.estimate_fake:judge")
    estimate = estimated(tmp_path, *judged)
    assert estimate["paid"]["judge:llm_judge llm_calls"] == 6
    assert cli_here(*options(tmp_path, *judged, "--resume")).returncode == 0
    judge = json.loads((tmp_path / "run" / "results.json").read_text())["judge_cost"]["demo"]["llm_judge"]
    assert EstimatedTotal(**estimate["totals"]["usd:judge:llm_judge"]).holds(judge["usd"])
    assert EstimatedTotal(**estimate["totals"]["judge:llm_judge completion_tokens"]).holds(judge["completion_tokens"])


def test_a_finished_run_is_estimated_from_its_samples_and_runs_nothing(tmp_path: Path) -> None:
    assert cli_here(*options(tmp_path)).returncode == 0
    before = (tmp_path / "run" / "run.json").read_text()
    estimate = estimated(tmp_path)
    assert (tmp_path / "run" / "run.json").read_text() == before
    calls = estimate["totals"]["llm_calls"]
    assert estimate["pilot_examples"] == 0 and calls["low"] == calls["point"] == calls["high"] == 24
    assert estimate["paid_before"]["llm_calls"] == 24


def test_an_unpriced_model_and_an_unbudgeted_varying_system_are_named_as_unknowns(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("{}\n")
    estimate = estimated(tmp_path, "--price-table", str(tmp_path / "empty.yaml"))
    assert "usd:model" not in estimate["totals"]
    assert any("scripted:support.estimate_fake:reply has no price" in line for line in estimate["unknowns"])
    assert not any("search budget" in line for line in estimate["unknowns"])  # vanilla: one call per example


def test_the_text_report_names_each_figure_and_the_command_that_reuses_the_pilot(tmp_path: Path) -> None:
    done = cli_here("estimate", "--pilot", "4", *options(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "examples: 24 in the run, 4 done (4 by this pilot), 20 left" in done.stdout
    assert "dollars, system model: $" in done.stdout and "wall time left, seconds:" in done.stdout
    assert "--resume" in done.stdout.splitlines()[-1] and "--pilot" not in done.stdout.splitlines()[-1]


def test_a_count_fixed_by_design_is_given_without_an_interval(tmp_path: Path) -> None:
    """vanilla makes one LLM call an example: every example of the pilot made one, and the estimate says so, the
    calls' total without an interval (its tokens, which vary, keep theirs)."""
    done = cli_here("estimate", "--pilot", "4", *options(tmp_path))
    assert done.returncode == 0, done.stderr
    calls = next(line for line in done.stdout.splitlines() if line.startswith("LLM calls (system):"))
    assert calls.startswith("LLM calls (system): 24  (1 an example in every example that ran);") and "95%" not in calls
    tokens = next(line for line in done.stdout.splitlines() if line.startswith("output tokens (system):"))
    assert "[95%: " in tokens
    estimate = estimated(tmp_path / "json")
    assert estimate["totals"]["llm_calls"]["each"] == 1.0 and "each" not in estimate["totals"]["completion_tokens"]


def test_a_bad_pilot_size_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    done = cli_here("estimate", "--pilot", "150%", *options(tmp_path))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "--pilot" in done.stderr
    assert not (tmp_path / "run").exists()


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=8))
def test_a_pilot_size_is_a_share_a_count_or_refused(text: str) -> None:
    try:
        size = PilotSize.parse(text)
    except ConfigError as exc:
        assert "\n" not in str(exc) and "--pilot" in str(exc)
        return
    assert (size.fraction is not None and 0 < size.fraction <= 1) or (size.count is not None and size.count >= 1)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 5000), st.sampled_from([PilotSize(fraction=0.05), PilotSize(count=7)]), st.text(max_size=5))
def test_the_pilot_draws_distinct_positions_of_the_task_the_same_each_time(
    records: int, size: PilotSize, seed: str
) -> None:
    drawn = size.positions(records, seed)
    assert drawn == size.positions(records, seed) and all(0 <= p < records for p in drawn)
    assert len(drawn) == min(records, max(MIN_PILOT, 7 if size.count else -(-records // 20)))


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.floats(0, 1e6, allow_nan=False), min_size=0, max_size=40),
    st.floats(0, 1e6, allow_nan=False),
    st.integers(0, 10_000),
)
def test_an_interval_holds_its_point_and_never_falls_below_what_was_paid(
    observed: list[float], paid: float, remaining: int
) -> None:
    interval = extrapolated(paid, observed, remaining)
    assert interval.low <= interval.point * (1 + 1e-9) + 1e-6 and interval.low >= paid - 1e-6
    assert interval.high is None or interval.point <= interval.high * (1 + 1e-9) + 1e-6
    if remaining == 0:
        assert interval == EstimatedTotal(paid, paid, paid)
    if len(observed) >= 2 and len(set(observed)) == 1 and remaining:  # no spread seen: the rule of three below
        assert interval.high == interval.point
        expected_low = max(paid, interval.point - remaining * observed[0] * min(1.0, 3 / len(observed)))
        assert interval.low == pytest.approx(expected_low, rel=1e-9, abs=1e-6)


@pytest.mark.parametrize("sigma", [0.0, 0.05])
def test_a_rare_free_example_the_pilot_did_not_meet_is_inside_the_interval(sigma: float) -> None:
    """One call an example (sigma 0: a constant), or prompts of a narrow spread (sigma 0.05), but 8 of 1,200
    examples answered by the response cache (a repeated prompt: 0 sent, as in benchmarks/estimate_accuracy.py): a
    pilot of 60 mostly meets none of them, and the bootstrap interval alone held the total in 73 (constant) and 171
    (narrow) of 200 pilots. The rule of three's low end holds it in 190 or more."""
    stream, held = random.Random(3), 0
    population = [0.0] * 8 + [stream.lognormvariate(4, sigma) for _ in range(1192)]
    for _ in range(200):
        observed = stream.sample(population, 60)
        held += extrapolated(sum(observed), observed, 1140).holds(sum(population))
    assert held >= 190


@pytest.mark.parametrize("sigma", [0.5, 1.0])
def test_the_interval_holds_the_total_of_a_5_percent_pilot_in_most_draws(sigma: float) -> None:
    """Log-normal per-example costs (a long tail, as real replies have): over 200 pilots of 5% of 2,000 examples,
    the interval holds the population's total in at least 85% (95% nominal: 94.5% measured at sigma 0.5, 92% at
    sigma 1; the percentile interval gave 92% and 88.5%), and the point is within 10% of it in 95% of pilots at
    sigma 0.5 (a coefficient of variation of 0.53) but only about half at sigma 1 (1.31): a tail that long needs a
    larger pilot for +-10%."""
    stream = random.Random(7)
    population = [stream.lognormvariate(3, sigma) for _ in range(2000)]
    total, held, close = sum(population), 0, 0
    for _ in range(200):
        drawn = set(stream.sample(range(2000), 100))
        observed = [population[i] for i in drawn]
        interval = extrapolated(sum(observed), observed, 2000 - 100)
        held += interval.holds(total)
        close += abs(interval.point - total) <= 0.10 * total
    assert held >= 170 and close >= (190 if sigma == 0.5 else 90)


@pytest.mark.parametrize("system,model", [("search_agent", "agent"), ("self_ask", "reply"), ("ircot", "reply")])
def test_multi_step_systems_and_an_agent_are_estimated_and_their_declared_budgets_bound_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, system: str, model: str
) -> None:
    """Their calls vary from example to example (the interval is wide, never a point), and each declares a search
    budget (max_turns, max_iter), so none is named as bounded only by the run's ceiling."""
    pytest.importorskip("bm25s")
    monkeypatch.setenv("RAGBENCH_INDEX_CACHE", str(tmp_path / "indexes"))
    agent = ["--system-arg", "snippet_max_tokens=0"] if system == "search_agent" else []
    args = ["--tasks", "fictional_multihop", "--system", system, "--model", f"scripted:support.estimate_fake:{model}"]
    output = ["--limit", "24", "--output", str(tmp_path / "r")]
    done = cli_here("estimate", "--pilot", "12", "--json", *args, *agent, *output)
    assert done.returncode == 0, done.stderr
    estimate = json.loads(done.stdout)
    calls = estimate["totals"]["llm_calls"]
    assert estimate["pilot_examples"] == 12 and calls["low"] < calls["point"] < calls["high"]
    assert not any("search budget" in line for line in estimate["unknowns"])


@pytest.mark.parametrize(
    "budget,varying,named", [({}, ["llm_calls"], True), ({}, [], False), ({"searches": "n"}, ["llm_calls"], False)]
)
def test_a_system_whose_calls_vary_without_a_declared_budget_is_named_as_bounded_only_by_the_ceiling(
    budget: dict, varying: list[str], named: bool
) -> None:
    system = SimpleNamespace(declares=SimpleNamespace(budget_options=budget, uses_llm=True))
    run = SimpleNamespace(planned=[SimpleNamespace(system=system)], config=RunConfig.of(tasks=["demo"], system="agent"))
    prices = ModelPrices(RunModels(model="openai:gpt-4o"), RunJudging(), {})
    lines = unknowns(run, prices, varying)  # type: ignore[arg-type]
    assert (
        any("declares no search budget" in line and "--max-steps-per-example (10000)" in line for line in lines)
        == named
    )


def test_no_pilot_on_a_new_run_says_there_is_nothing_to_estimate_from(tmp_path: Path) -> None:
    estimate = estimated(tmp_path, pilot="0")
    assert estimate["pilot_examples"] == 0 and estimate["totals"] == {} and estimate["done"] == 0
    assert any("nothing to estimate from" in line for line in estimate["unknowns"])
    assert not (tmp_path / "run" / "run.json").exists()


def test_overwrite_replaces_the_run_in_the_folder_as_the_run_would(tmp_path: Path) -> None:
    assert cli_here(*options(tmp_path)).returncode == 0  # a finished run of 24
    estimate = estimated(tmp_path, "--overwrite", pilot="4")
    assert estimate["pilot_examples"] == 4 and estimate["paid_before"] == {}
    assert not json.loads((tmp_path / "run" / "run.json").read_text())["finished"]


def test_estimate_on_the_run_prints_the_estimate_command_s_and_runs_nothing_more(tmp_path: Path) -> None:
    """`ragbench ... --estimate` is `ragbench estimate` with its default pilot (one code: the same figures, the
    same pilot kept in the run folder: 5%, grown for the dollars within 10%), exits 0 and writes no results;
    --resume then runs the rest."""
    done = cli_here(*options(tmp_path), "--estimate")
    assert done.returncode == 0, done.stderr
    default = estimated(tmp_path / "default", pilot="5%", precision="10%")
    ran = default["done"]
    assert ran > 3 and f"examples: 24 in the run, {ran} done ({ran} by this pilot), {24 - ran} left" in done.stdout
    assert "dollars, system model: $" in done.stdout and not (tmp_path / "run" / "results.json").exists()
    resume = done.stdout.splitlines()[-1]
    assert resume.endswith("--resume") and "--estimate" not in resume
    again = cli_here("estimate", "--pilot", "0", *options(tmp_path))  # reads the same samples: the same figures
    figures = [line.partition("; paid")[0] for line in done.stdout.splitlines()[1:-2]]
    assert [line.partition("; paid")[0] for line in again.stdout.splitlines()[1:-2]] == figures
    assert cli_here(*options(tmp_path, "--resume")).returncode == 0
    assert json.loads((tmp_path / "run" / "run.json").read_text())["finished"]


def test_estimate_with_replay_is_refused_in_one_line(tmp_path: Path) -> None:
    done = cli_here("--replay", str(tmp_path), "--estimate", "--tasks", "demo")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "--replay" in done.stderr


def test_the_pilot_the_estimate_asks_for_puts_the_point_within_10_percent() -> None:
    """Reply lengths of a log-normal tail (sigma 0.8, a coefficient of variation of 0.89, as the agent's output
    tokens in benchmarks/estimate_accuracy.py): a 5% pilot of 60 of 1,200 puts the point within 10% in 119 of 200
    pilots; the size `pilot_for` reads off such a pilot's own spread (174: a skewed pilot's spread reads low, the
    population's would ask 250) in 178 of 200."""
    stream = random.Random(11)
    population = [stream.lognormvariate(2.5, 0.8) for _ in range(1200)]
    total = sum(population)
    first = stream.sample(population, 60)
    wanted = pilot_for(first, 1200)
    assert wanted is not None and 150 <= wanted <= 400
    close = {60: 0, wanted: 0}
    for size in close:
        for _ in range(200):
            observed = stream.sample(population, size)
            close[size] += abs(extrapolated(sum(observed), observed, 1200 - size).point - total) <= 0.10 * total
    assert close[60] < 140 and close[wanted] >= 170


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=0, max_size=30), st.integers(1, 100_000))
def test_the_pilot_asked_for_is_never_more_than_the_task_and_none_without_a_spread_to_read(
    observed: list[float], records: int
) -> None:
    wanted = pilot_for(observed, records)
    if len(observed) < 2 or sum(observed) == 0:
        assert wanted is None
    else:
        assert wanted is not None and 0 <= wanted <= records
        assert (wanted == 0) == (len(set(observed)) == 1)


def test_the_text_report_says_how_large_a_pilot_the_dollars_need(tmp_path: Path) -> None:
    done = cli_here("estimate", "--pilot", "4", *options(tmp_path))
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if "within 10% of their point" in line]
    wanted = json.loads(cli_here("estimate", "--pilot", "0", "--json", *options(tmp_path)).stdout)
    assert line.startswith(
        f"demo: the dollars within 10% of their point (95%) need about {wanted['pilot_for_10_percent']['demo']} "
    )
    assert "only by chance" in line and "--precision 10% runs them" in line


@pytest.mark.parametrize(
    "low,high,pilot,said",
    [
        (95.0, 105.0, 60, None),  # within 10%, and the spread asks for no more
        (80.0, 112.0, 60, "the dollars' interval reaches 20% from their point: the point is within 10%"),
        (95.0, None, 60, "reaches unbounded from their point"),
        (95.0, 105.0, 200, "need about 200 of its examples run, 60 have: until they ran the point is within 10%"),
    ],
)
def test_a_point_whose_interval_reaches_beyond_10_percent_is_not_given_as_within_it(
    low: float, high: float | None, pilot: int, said: str | None
) -> None:
    """The estimate never leaves the dollars' point to be taken as within 10% where their interval reaches beyond
    it, or their spread asks for a larger pilot: it says so, and what runs that pilot."""
    from ragbench._cost.run_estimate import precision_line

    task = SimpleNamespace(
        name="demo",
        done=60,
        measured=None,
        pilot_for=pilot,
        totals={"usd:model": EstimatedTotal(100.0, low, high), "llm_calls": EstimatedTotal(9, 0, None)},
    )
    line = precision_line(task)
    assert (line is None) if said is None else (line is not None and said in line)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3000), st.integers(1, 400), st.integers(1, 400), st.text(max_size=5))
def test_a_larger_pilot_of_the_same_run_holds_the_smaller_one(records: int, small: int, large: int, seed: str) -> None:
    """`--precision` grows a pilot, and `--pilot N` after a smaller one, by running the rest of the larger."""
    small, large = min(small, large), max(small, large)
    assert PilotSize(count=small).positions(records, seed) <= PilotSize(count=large).positions(records, seed)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=8))
def test_a_precision_is_a_share_below_100_percent_or_refused(text: str) -> None:
    try:
        share = PilotSize.precision(text)
    except ConfigError as exc:
        assert "\n" not in str(exc) and "--precision" in str(exc)
        return
    assert 0 < share < 1


def test_precision_grows_the_pilot_to_what_its_spread_asks_for(tmp_path: Path) -> None:
    """Stein's two stages: a pilot of 4, then as many as its dollars' spread asks for +-10% (pilot_for)."""
    first = estimated(tmp_path / "first", pilot="4")
    wanted = first["pilot_for_10_percent"]["demo"]
    assert 4 < wanted <= 24
    done = cli_here("estimate", "--pilot", "4", "--precision", "10%", "--json", *options(tmp_path / "grown"))
    assert done.returncode == 0, done.stderr
    grown = json.loads(done.stdout)
    assert grown["pilot_examples"] == wanted == grown["done"]
    assert not json.loads((tmp_path / "grown" / "run" / "run.json").read_text())["finished"]


def test_asked_for_dollars_the_estimate_grows_its_pilot_unless_its_size_is_given(tmp_path: Path) -> None:
    """`ragbench estimate` without --pilot runs the pilot that puts the dollars' point within 10% (a 5% pilot, then
    as many as its spread asks for: --pilot 5% --precision 10%); a --pilot given is run as given."""
    default = estimated(tmp_path / "default", pilot=None)
    precise = estimated(tmp_path / "precise", pilot="5%", precision="10%")
    assert default["done"] == precise["done"] > 3  # grown
    assert default["totals"]["usd:model"] == precise["totals"]["usd:model"]
    assert estimated(tmp_path / "given", pilot="5%")["done"] == 3  # 5% of 24, at least 3


def pilots_held(estimator: str, sigma: float, draws: int, ran: int = 60) -> int:
    """Of `draws` pilots of `ran` of 1,200 examples (60: a 5% pilot) of log-normal per-example costs (`sigma` 0.8: a
    coefficient of variation of 0.89, as a reply's output tokens), each of its own population (a tail a pilot of one
    population misses is a chance of that population's), how many intervals held the population's total: of the
    mean (`extrapolated`), or of a line on the examples' lengths whose residual is the skewed part (`regressed`)."""
    stream, held = random.Random(int(sigma * 100) + ran), 0
    for _ in range(draws):
        lengths = [stream.uniform(50, 500) for _ in range(1200)]
        costs = [stream.lognormvariate(2.5, sigma) * (1 if estimator == "mean" else 5) for _ in range(1200)]
        if estimator == "line":
            costs = [100 + 2 * x + cost for x, cost in zip(lengths, costs, strict=True)]
        drawn = stream.sample(range(1200), ran)
        observed, paid = [costs[i] for i in drawn], sum(costs[i] for i in drawn)
        if estimator == "mean":
            interval = extrapolated(paid, observed, 1200 - ran)
        else:
            rest = sum(lengths) - sum(lengths[i] for i in drawn)
            line = regressed(paid, observed, [lengths[i] for i in drawn], rest, 1200 - ran)
            assert line is not None
            interval = line
        held += interval.holds(sum(costs))
    return held


def within_band(held: int, draws: int) -> bool:
    """Whether `held` of `draws` is within the binomial band of 95% (3 standard errors either side)."""
    spread = 3 * math.sqrt(0.95 * 0.05 / draws)
    return 0.95 - spread <= held / draws <= 0.95 + spread


def test_the_interval_holds_a_skewed_total_at_its_nominal_95_percent() -> None:
    """A small pilot (20 of 1,200) of a long tail (sigma 1.0, a coefficient of variation of 1.31): a pilot whose mean
    reads low reads its spread low too. Of 400 pilots for the mean and 200 for a line on the lengths, the percentile
    interval widened by Student's t held the total in 352 and 181 (88.8%, below the band of 92.3-97.7%); the
    bootstrap-t interval in 372 and 192 (94.0%). (At 60 of 1,200 and sigma 0.8, the issue's reply lengths: 94.8%
    and 97.5% of 400 and 200, where the percentile interval gave 93.8% and 94.5%.)"""
    held = pilots_held("mean", 1.0, 400, ran=20) + pilots_held("line", 1.0, 200, ran=20)
    assert within_band(held, 600)


def test_the_examples_left_vary_about_the_run_s_mean_as_the_pilot_does() -> None:
    """The interval predicts the mean of the M examples still to run, which varies about the run's as the pilot's
    does (variance s^2 (1/n + 1/M)): an estimate late in a run (1,000 of 1,200 ran) held the total in 57 of 60
    draws, where narrowed by the finite-population correction sqrt(M/(n+M)) (as if the run's own mean were
    predicted) in 14."""
    assert within_band(pilots_held("mean", 0.8, 60, ran=1000), 60)
