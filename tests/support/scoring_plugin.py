"""A test plugin of metrics that fail or return what is not a score, and scripted engines that count
their calls, for the tests of typed scores, metric failures, --resume and `ragbench rescore`.

`scored:KIND` metrics (a metric family): `raise` raises on the example ids in FAILING; `string`, `numpy`,
`numpy_int`, `bool`, `nan`, `inf`, `list`, `none` return such a value; `range` returns 2.0 against its
declared range [0, 1]; `extra` returns a key it does not declare; `corpus` is a corpus-only metric that
raises while CORPUS_FAILS is set; `raise_corpus` raises as `raise` does and reports the mean of its values as
the corpus key `scored:raise_corpus_mean` (as ALCE's citation_f1 and rougeLsum_bootstrap_mid). `huge` returns
2**1023 - 1 (finite, no declared range: the mean of two overflows); `agg_raise`, `agg_none`, `agg_string`
and `agg_inf` score 1.0 and their `aggregate` raises or returns None, a string, an infinity; `values` returns
VALUES[example id] (no range) and `aggregates` has `aggregate` return AGGREGATE[0]. `system_answer` and `judge_answer` are `scripted:` functions."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from ragbench.api import CorpusValue, EngineError, KeySpec, Metric, MetricDeclaration, hookimpl
from ragbench.testing import Registry
from support.helpers import cli_run_args

FAILING: set[str] = set()  # example ids `scored:raise` fails on
CORPUS_FAILS = [False]
CALLS: Counter = Counter()  # engine calls by role: "system", "judge"
JUDGE_DOWN = [False]  # every judge call fails while set

VALUES: dict[str, object] = {}  # what `scored:values` returns, by example id
AGGREGATE: list[object] = [0.5]  # what `scored:aggregates`' aggregate returns
RETURNS = {
    "huge": 2**1023 - 1,
    "string": "1.0",
    "numpy": np.float32(0.5),
    "numpy_int": np.int64(1),
    "bool": True,
    "nan": float("nan"),
    "inf": float("inf"),
    "list": [1.0],
    "none": None,
    "range": 2.0,
}


def family(name: str) -> type[Metric]:
    kind = name.partition(":")[2]

    class Scored(Metric):
        declares = MetricDeclaration(
            value_range=None if kind in ("huge", "values") else (0, 1),
            keys=(name,) if kind == "raise_corpus" else (),
            corpus_keys=(name,) if kind == "corpus" else (f"{name}_mean",) if kind == "raise_corpus" else (),
            key_specs={name: KeySpec(False, (0, 1))} if kind == "lower" else {},
            needs=("judge",) if kind == "judged" else (),
        )

        def score(self, example, prediction, ctx=None):
            if kind == "judged":
                return self.judged(prediction, ctx)
            if kind in ("raise", "raise_corpus") and str(example.id) in FAILING:
                raise RuntimeError(f"flaky metric on {example.id}")
            if kind == "extra":
                return {name: 1.0, "surprise": 0.0}
            if kind == "lower":
                return float(str(example.id) in FAILING)
            if kind == "values":
                return VALUES.get(str(example.id))
            return RETURNS.get(kind, 1.0)

        async def judged(self, prediction, ctx):
            await ctx.ask_judges(
                self, [{"role": "user", "content": f"Is {prediction.answer} right?"}], temperature=1.0, max_tokens=8
            )
            return 1.0

        def corpus(self, samples, seed):
            if CORPUS_FAILS[0]:
                raise RuntimeError("the corpus metric's model is not there")
            if kind == "raise_corpus":
                values = [s.scores[name] for s in samples if s.scores.get(name) is not None]
                return {f"{name}_mean": CorpusValue(sum(values) / len(values), len(values))}
            return {name: 0.25}

    if kind.startswith("agg"):
        Scored.aggregate = aggregate_of(kind)
    Scored.name = name
    return Scored


def aggregate_of(kind: str):
    def aggregate(self, key, values):
        if kind == "agg_raise":
            raise ZeroDivisionError("the aggregate divided by zero")
        return {"agg_none": None, "agg_string": "0.5", "agg_inf": float("inf")}.get(kind, AGGREGATE[0])

    return aggregate


class Plugin:
    @hookimpl
    def ragbench_metric_families(self):
        return {"scored": {"target": f"{__name__}:family", "description": "test metrics"}}


def registry() -> Registry:
    return Registry.discover(plugins=[("scoring_plugin", "ragbench-tests", Plugin())])


SYSTEM = f"scripted:{__name__}:system_answer"  # engine strings of the scripted functions below
JUDGE = f"scripted:{__name__}:judge_answer"
COIN_JUDGE = f"scripted:{__name__}:coin_judge"


def demo_args(metrics: str, out: Path, *extra: str) -> list[str]:
    """The command line of a closed-book run of six demo examples on SYSTEM scored by `metrics` into `out`."""
    return cli_run_args(SYSTEM, "--limit", "6", "--metrics", metrics, "--no-progress", *extra, "--output", str(out))


def system_answer(request) -> str:
    """The system's model: counts its calls, answers "Paris" to everything."""
    CALLS["system"] += 1
    return "Paris"


def judge_answer(request) -> str:
    """A judge: "correct" when the prompt shows the answer Paris, failing every call while JUDGE_DOWN is set."""
    CALLS["judge"] += 1
    if JUDGE_DOWN[0]:
        raise EngineError("judge API unavailable (HTTP 503 after 6 attempts)")
    text = request.messages[-1][1] if request.messages else request.prompt
    return "correct" if "Paris" in text else "incorrect"


def coin_judge(request) -> str:
    """A sampled judge whose verdict is its request's seed: "correct" when it is even (the seed decides, as
    a sampled judge's draw does)."""
    CALLS["judge"] += 1
    return "correct" if (request.sampling.seed or 0) % 2 == 0 else "incorrect"


def reset() -> None:
    FAILING.clear()
    CALLS.clear()
    VALUES.clear()
    AGGREGATE[:] = [0.5]
    CORPUS_FAILS[0] = JUDGE_DOWN[0] = False


@pytest.fixture(autouse=True)
def plugin_state():
    """A test module that imports this fixture starts each test with nothing failing and no calls counted."""
    reset()
    yield
    reset()
