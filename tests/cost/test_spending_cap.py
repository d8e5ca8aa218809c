"""`--max-cost DOLLARS`: the run stops before its calls would cost more than the cap,
each batch checked first at its worst (prompt characters, max_tokens), says in one line what it spent and how to
continue, and leaves a run `--resume` completes without paying a call twice."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write_jsonl
from ragbench.api import Prediction, System
from ragbench.api.engines import Engine, Request, Response
from ragbench.testing import Registry, run_eval
from support.helpers import cli_here

MODEL = "scripted:support.estimate_fake:within_limit"  # no reply longer than its max_tokens, as a model's
PRICE = {"prompt": 2.5, "completion": 10.0}


def usd_of(price: dict[str, float], prompt: int, completion: int) -> float:
    """One call's dollars at `price` (per million tokens), as results.json prices them: to the micro-dollar."""
    return round((prompt * price["prompt"] + completion * price["completion"]) / 1e6, 6)


def options(tmp_path: Path, *more: str) -> list[str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    if not (tmp_path / "prices.yaml").exists():
        (tmp_path / "prices.yaml").write_text(f"{MODEL}: {{prompt: 2.5, completion: 10}}\n")
    return [
        "--tasks",
        "demo",
        "--system",
        "vanilla",
        "--model",
        MODEL,
        "--price-table",
        str(tmp_path / "prices.yaml"),
        "--output",
        str(tmp_path / "run"),
        "--no-progress",
        *more,
    ]


def attempts_tokens(run: Path) -> list[tuple[int, int]]:
    """Each attempt's prompt and output tokens, from run.json."""
    attempts = json.loads((run / "run.json").read_text())["attempts"]
    return [(a["prompt_tokens"], a["completion_tokens"]) for a in attempts]


def attempts_usd(run: Path) -> list[float]:
    """Each attempt's dollars, from run.json's token counts (one model, one price)."""
    attempts = json.loads((run / "run.json").read_text())["attempts"]
    return [usd_of(PRICE, a["prompt_tokens"], a["completion_tokens"]) for a in attempts]


def test_a_run_stops_short_of_its_cap_says_so_in_one_line_and_resume_completes_it(tmp_path: Path) -> None:
    whole = cli_here(*options(tmp_path / "whole"))  # the same run without a cap: $0.0072 over 24 calls
    assert whole.returncode == 0, whole.stderr
    [total] = attempts_usd(tmp_path / "whole" / "run")
    done = cli_here(*options(tmp_path, "--max-cost", "0.005", "--max-inflight", "2"))
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    line = done.stderr.strip()
    assert line.startswith("ragbench: stopped before the run's calls would cost more than --max-cost $0.005: $0.00")
    assert " of 24 examples saved in " in line
    assert "; continue with: ragbench " in line and line.endswith(" --resume")  # the command as it was given
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    [spent] = attempts_usd(tmp_path / "run")
    assert not run_json["finished"] and 0 < spent <= 0.005 < total
    assert f"${spent:,.4f} spent by this command" in line
    assert cli_here(*options(tmp_path, "--resume")).returncode == 0
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run_json["finished"] and sum(a["llm_calls"] for a in run_json["attempts"]) == 24  # none paid twice
    tokens = attempts_tokens(tmp_path / "run")  # what the whole run cost, in parts
    assert tuple(sum(each) for each in zip(*tokens)) == attempts_tokens(tmp_path / "whole" / "run")[0]
    assert sum(attempts_usd(tmp_path / "run")) == pytest.approx(total, abs=1e-6 * len(tokens))  # each rounded


@pytest.fixture(scope="module")
def uncapped(tmp_path_factory: pytest.TempPathFactory) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """The demo run without a cap: its prompt and output tokens, and each of its calls at its worst (prompt
    characters and 8 a turn, max_tokens times n of output), read from its samples' traces."""
    folder = tmp_path_factory.mktemp("uncapped")
    assert cli_here(*options(folder)).returncode == 0
    worst = []
    for line in (folder / "run" / "samples" / "demo.jsonl").read_text().splitlines():
        for step in json.loads(line)["trace"]:
            if step["kind"] == "llm":
                turns, sampling = step["request"]["messages"], step["request"]["sampling"]
                chars = sum(len(turn["content"]) for turn in turns) + 8 * len(turns)
                worst.append((chars, sampling["max_tokens"] * sampling["n"]))
    [tokens] = attempts_tokens(folder / "run")
    return tokens, worst


@settings(max_examples=6, deadline=None)
@given(st.floats(0.1, 20.0), st.floats(0.1, 80.0), st.floats(0.05, 1.2))
def test_a_capped_run_spends_up_to_its_cap_less_than_one_call_short(
    uncapped: tuple[tuple[int, int], list[tuple[int, int]]], prompt: float, completion: float, share: float
) -> None:
    """Over prices and caps (a share of what the whole run costs at those prices): what the attempt spent is never
    over the cap, and where it stopped short of the run, less than one call's worst cost short of the cap (its last
    batch sized to the budget left, not refused whole), and its line says why it stopped."""
    import tempfile

    (whole_prompt, whole_output), calls = uncapped
    price = {"prompt": prompt, "completion": completion}
    cap = share * usd_of(price, whole_prompt, whole_output)
    one_call = max(usd_of(price, *each) for each in calls)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "prices.yaml").write_text(f"{MODEL}: {{prompt: {prompt}, completion: {completion}}}\n")
        done = cli_here(*options(folder, "--max-cost", f"{cap!r}"))
        assert done.returncode in (0, 1), done.stderr
        [spent] = [usd_of(price, *each) for each in attempts_tokens(folder / "run")]
        assert spent <= cap * (1 + 1e-9)
        if done.returncode == 1:
            assert cap - spent < one_call, (cap, spent, one_call)
            assert f"${max(0.0, cap - spent):,.4f} left, less than the next call may cost at its worst" in done.stderr
            assert "(--resume runs the rest, spending up to its own --max-cost); continue with: " in done.stderr


@settings(max_examples=5, deadline=None)
@given(st.floats(0.0005, 0.012), st.integers(1, 6))
def test_whatever_the_cap_and_the_examples_in_flight_no_attempt_spends_more(cap: float, inflight: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        tmp_path = Path(scratch)
        done = cli_here(*options(tmp_path, "--max-cost", f"{cap}", "--max-inflight", str(inflight)))
        assert done.returncode in (0, 1), done.stderr
        [spent] = attempts_usd(tmp_path / "run")
        assert spent <= cap
        if done.returncode == 1:
            assert "--resume" in done.stderr and cli_here(*options(tmp_path, "--resume")).returncode == 0
        assert json.loads((tmp_path / "run" / "run.json").read_text())["finished"]


@pytest.mark.parametrize("cap", ["0", "-1", "nan", "inf"])
def test_a_cap_that_is_no_positive_number_is_refused_before_the_run(tmp_path: Path, cap: str) -> None:
    done = cli_here(*options(tmp_path, "--max-cost", cap))
    assert done.returncode == 2 and "--max-cost" in done.stderr and "above 0" in done.stderr
    assert not (tmp_path / "run").exists()


def test_a_cap_over_a_model_without_a_price_is_refused_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("{}\n")
    done = cli_here(*options(tmp_path, "--max-cost", "1", "--price-table", str(tmp_path / "empty.yaml")))
    assert done.returncode == 2 and f"{MODEL} has no price" in done.stderr and "--max-cost 1" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "run").exists()


class Concurrent(Engine):
    """An engine that answers each request as it comes (an HTTP server's kind), half its max_tokens each; `sent`:
    the prompt and output tokens of every call it answered, of every instance."""

    concurrent = True
    max_batch_size = max_concurrency = 4
    sent: list[tuple[int, int]] = []

    async def agenerate_one(self, request: Request) -> Response:
        tokens = (len(request.prompt or ""), request.sampling.max_tokens // 2)
        Concurrent.sent.append(tokens)
        return Response(["x"], prompt_tokens=tokens[0], completion_tokens=tokens[1])


class AskOnce(System):
    """Sends the example's question as it is, with `max_tokens`."""

    name = "ask_once"

    def __init__(self, max_tokens: int = 16) -> None:
        self.max_tokens = max_tokens

    async def run(self, example, ctx):
        reply = await ctx.llm.generate(example.question, max_tokens=self.max_tokens)
        return Prediction(example_id=example.id, answer=reply.text)


def concurrent_registry() -> Registry:
    registry = Registry.discover()
    registry.add_catalog(
        {
            "engines": {"concurrent_fake": {"target": f"{__name__}:Concurrent"}},
            "systems": {"ask_once": {"target": f"{__name__}:AskOnce"}},
        },
        "tests",
    )
    return registry


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=12, unique=True),
    st.integers(1, 64),
    st.floats(1e-5, 5e-3),
)
def test_an_engine_that_takes_requests_as_they_come_never_spends_past_the_cap(
    prompts: list[str], max_tokens: int, cap: float
) -> None:
    """Each request is checked at its worst (its prompt's characters, max_tokens) before it is sent: what was
    answered never costs more than the cap, and a cap above every request's worst sends them all."""
    import tempfile

    Concurrent.sent.clear()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "prices.yaml").write_text("concurrent_fake:x: {prompt: 2.5, completion: 10}\n")
        rows = [
            {"question": p, "answers": ["x"], "id": i, "prop": "occupation", "ctxs": []} for i, p in enumerate(prompts)
        ]
        data = write_jsonl(folder / "popqa.jsonl", rows)
        run = functools.partial(
            run_eval,
            "popqa",
            "ask_once",
            "concurrent_fake:x",
            data=data,
            system_args={"max_tokens": max_tokens},
            price_table=str(folder / "prices.yaml"),
            max_inflight=len(prompts),
            bootstrap_iters=0,
            output=folder / "run",
            registry=concurrent_registry(),
        )
        try:
            finished = run(max_cost=cap).complete
        except Exception as stopped:  # the command line's one line (exit 1): stopped by the cap
            assert str(stopped).startswith("stopped before the run's calls would cost more than --max-cost"), stopped
            finished = False
    assert sum(usd_of(PRICE, *tokens) for tokens in Concurrent.sent) <= cap * (1 + 1e-9)
    assert len(Concurrent.sent) == len(prompts) or not finished
    if sum(usd_of(PRICE, len(p), max_tokens) for p in prompts) <= cap:
        assert len(Concurrent.sent) == len(prompts) and finished


def test_the_judges_calls_count_against_the_cap(tmp_path: Path) -> None:
    """A free system model (priced 0) and a priced judge: the judge's calls alone reach the cap."""
    judge = "scripted:support.estimate_fake:judge_within_limit"
    (tmp_path / "prices.yaml").write_text(
        f"{MODEL}: {{prompt: 0, completion: 0}}\n{judge}: {{prompt: 2.5, completion: 10}}\n"
    )
    args = options(tmp_path, "--metrics", "+llm_judge", "--judge", judge, "--max-inflight", "2")
    done = cli_here(*args, "--max-cost", "0.004")
    assert done.returncode == 1 and "--max-cost $0.004" in done.stderr, done.stderr
    spent = float(done.stderr.split("--max-cost $0.004: $")[1].split(" spent")[0])
    assert 0 < spent <= 0.004
    assert cli_here(*args, "--resume").returncode == 0
