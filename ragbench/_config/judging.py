"""How a run scores (`RunJudging`): its metrics, judges and NLI model, human labels, judge prices and the
bootstrap."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .option_bounds import MAX_JUDGE_REPEATS, number_problem, too_many
from .run_option import SCORED, found, option, pairs

_RUN_DEFAULT: Mapping[str, Any] = {"default": None, "show_default": False, "help": "(default: the run's)"}


def _judge_repeats_help(default: str) -> str:
    return (
        f"judge every example K times per judge (1 to {MAX_JUDGE_REPEATS}) and report the judges' agreement "
        f"(default: {default})"
    )


@dataclass(frozen=True)
class RunJudging:
    """How a run scores: its metrics and their options, the judge and NLI models, human labels and judge prices,
    the bootstrap's resamples."""

    metrics: list[str] = option(  # NAME replaces the tasks' lists, +NAME adds
        None,
        factory=list,
        names=True,
        metavar="NAME[,NAME]",
        help="metrics of every task: NAME,... replaces the tasks' own, +NAME adds to them, TASK:NAME / TASK:+NAME "
        "for one task (ragbench list metrics)",
        offers={
            **SCORED,
            "rescore": {
                "help": "NAME,... replaces the run's metrics, +NAME adds to them, TASK:NAME / TASK:+NAME for one task "
                "(default: the run's)"
            },
        },
    )
    metric_args: dict[str, object] = pairs(  # "metric.key" -> value
        "--metric-arg",
        "METRIC.K=V",
        "metric option, e.g. mauve.featurizer=PATH",
        offers={
            **SCORED,
            "rescore": {"help": "metric option, added to the run's; METRIC.key_prefix=P renames a metric's keys"},
        },
    )
    judges: list[str] = option(
        None,
        factory=list,
        name="--judge",
        metavar="MODEL",
        help="judge engine:model for LLM-judge metrics (repeatable)",
        offers={**SCORED, "rescore": {"help": "judge engine:model (repeatable; default: the run's)"}},
    )
    judge_args: dict[str, dict[str, object]] = pairs(  # judge index -> engine options
        "--judge-arg",
        "N.K=V",
        "engine option of the N-th --judge (from 0), e.g. 1.base_url=http://127.0.0.1:8001/v1",
        offers={**SCORED, "rescore": {"help": "engine option of the N-th --judge (from 0)"}},
    )
    judge_repeats: int | None = option(  # each judged metric scored so often per judge (None: once)
        None,
        at_least=1,
        bounded=True,  # a run makes its raters for every judged example
        metavar="K",
        help=_judge_repeats_help("once"),
        identity="when_given",
        offers={**SCORED, "rescore": {"help": _judge_repeats_help("the run's")}},
    )
    nli: str | None = option(  # engine:model of the entailment judge for metrics that need "nli"
        None,
        metavar="MODEL",
        help="NLI engine:model for citation/claim metrics, e.g. hf:google/t5_xxl_true_nli_mixture or "
        "replay:nli_calls.jsonl",
        offers={**SCORED, "rescore": {"help": "NLI engine:model (default: the run's)"}},
    )
    nli_format: str = option(  # request format, see ragbench._nli
        "true",
        show_default=True,
        choices=("true", "prompt"),
        help="true: TRUE/ALCE 'premise: .. hypothesis: ..' -> '1'; prompt: LLM-as-NLI chat prompt",
        offers={**SCORED, "rescore": {**_RUN_DEFAULT, "after": "--nli-arg"}},
    )
    nli_args: dict[str, object] = pairs(  # engine options of the NLI engine
        "--nli-arg",
        "K=V",
        "NLI engine option (batch_size, dtype ...)",
        offers={**SCORED, "rescore": {"help": "NLI engine option"}},
    )
    human_labels: str | None = option(  # read by ragbench._reports.judging.human_labels
        None,
        metavar="FILE",
        help="human labels of judged keys (JSONL or CSV: id, metric, label[, task]): results.json checks the judges "
        "against them and gives the prediction-powered interval (docs/metrics.md)",
        # what results.json checks the judges against: the predictions and scores do not change
        identity="never",
        offers={**SCORED, "rescore": {}},
    )
    price_table: str | None = option(  # judge prices (ragbench._cost.call_cost)
        None,
        metavar="FILE",
        help="judge prices, USD per million tokens (YAML/JSON: MODEL: {prompt: X, completion: Y}), over the "
        "built-in OpenAI prices (docs/metrics.md)",
        identity="never",  # what results.json prices the judges at
        offers={**SCORED, "rescore": {}},
    )
    bootstrap_iters: int = option(
        1000,
        show_default=True,
        help="bootstrap resamples of the 95% intervals (0: no intervals)",
        offers={**SCORED, "rescore": {**_RUN_DEFAULT, "at_least": 0}},
    )

    def problems(self) -> list[str]:
        return found(
            number_problem("--bootstrap-iters", self.bootstrap_iters, 0, " (0: no intervals)"),
            too_many("--bootstrap-iters", "bootstrap_iters", self.bootstrap_iters),
            too_many("--judge-repeats", "judge_repeats", self.judge_repeats),
        )
