"""How a run scores: its metrics and their options, the judge and NLI models, human labels and judge prices, the
bootstrap's resamples."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import click

from ...._errors import ConfigError
from ...._values.option_bounds import MAX_JUDGE_REPEATS, too_many
from ...._values.options import parse_assignments
from ...._values.run_groups import RunJudging
from .option import Option, OptionGroup
from .what_to_run import split_names


def repeats_at_most(ctx: click.Context, _param: click.Parameter, value: int | None) -> int | None:
    """--judge-repeats over its bound, refused as the command line is read: a run makes its raters for every
    judged example (ragbench._values.option_bounds.MAX_JUDGE_REPEATS)."""
    if problem := too_many("--judge-repeats", "judge_repeats", value):
        raise click.UsageError(problem, ctx)
    return value


def judge_repeats_help(default: str) -> str:
    """--judge-repeats' help, of a run (`default`: "once") or of a rescoring ("the run's")."""
    return (
        f"judge every example K times per judge (1 to {MAX_JUDGE_REPEATS}) and report the judges' agreement "
        f"(default: {default})"
    )


def judge_args_of(items: tuple[str, ...], judges: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """--judge-arg N.KEY=VALUE: each --judge's options by its position, the values read as YAML scalars."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in parse_assignments(items, "--judge-arg").items():
        index, _, option = key.partition(".")
        if not index.isdigit() or not option or int(index) >= len(judges):
            raise ConfigError(
                f"--judge-arg {key}=...: expected N.KEY with N the position of a --judge (0 to {len(judges) - 1})"
                if judges
                else f"--judge-arg {key}: there is no --judge"
            )
        out.setdefault(index, {})[option] = value
    return out


def read_judging_files(human_labels: str | None, price_table: str | None) -> None:
    """--human-labels and --price-table, each file read once now so that a bad one fails before any work."""
    from ...._cost.prices import read_price_table
    from ...._reports.judging.human_labels import read_human_labels

    if human_labels:
        read_human_labels(human_labels)
    if price_table:
        read_price_table(price_table)


class JudgingOptions(OptionGroup):
    TITLE: ClassVar[str] = "Judging and metrics"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option(
            ("--metrics",),
            ("metrics",),
            {
                "default": None,
                "metavar": "NAME[,NAME]",
                "help": "metrics of every task: NAME,... replaces the tasks' own, +NAME adds to them, TASK:NAME / "
                "TASK:+NAME for one task (ragbench list metrics)",
            },
        ),
        Option(
            ("--metric-arg",),
            ("metric_args",),
            {"multiple": True, "metavar": "METRIC.K=V", "help": "metric option, e.g. mauve.featurizer=PATH"},
        ),
        Option(
            ("--judge",),
            ("judges",),
            {"multiple": True, "metavar": "MODEL", "help": "judge engine:model for LLM-judge metrics (repeatable)"},
        ),
        Option(
            ("--judge-arg",),
            ("judge_args",),
            {
                "multiple": True,
                "metavar": "N.K=V",
                "help": "engine option of the N-th --judge (from 0), e.g. 1.base_url=http://127.0.0.1:8001/v1",
            },
        ),
        Option(
            ("--judge-repeats",),
            ("judge_repeats",),
            {
                "default": None,
                "type": click.IntRange(min=1),
                "callback": repeats_at_most,
                "metavar": "K",
                "help": judge_repeats_help("once"),
            },
        ),
        Option(
            ("--nli",),
            ("nli",),
            {
                "default": None,
                "metavar": "MODEL",
                "help": "NLI engine:model for citation/claim metrics, e.g. hf:google/t5_xxl_true_nli_mixture or "
                "replay:nli_calls.jsonl",
            },
        ),
        Option(
            ("--nli-format",),
            ("nli_format",),
            {
                "default": "true",
                "show_default": True,
                "type": click.Choice(["true", "prompt"]),
                "help": "true: TRUE/ALCE 'premise: .. hypothesis: ..' -> '1'; prompt: LLM-as-NLI chat prompt",
            },
        ),
        Option(
            ("--nli-arg",),
            ("nli_args",),
            {"multiple": True, "metavar": "K=V", "help": "NLI engine option (batch_size, dtype ...)"},
        ),
        Option(
            ("--human-labels",),
            ("human_labels",),
            {
                "default": None,
                "metavar": "FILE",
                "help": "human labels of judged keys (JSONL or CSV: id, metric, label[, task]): results.json checks "
                "the judges against them and gives the prediction-powered interval (docs/metrics.md)",
            },
        ),
        Option(
            ("--price-table",),
            ("price_table",),
            {
                "default": None,
                "metavar": "FILE",
                "help": "judge prices, USD per million tokens (YAML/JSON: MODEL: {prompt: X, completion: Y}), over "
                "the built-in OpenAI prices (docs/metrics.md)",
            },
        ),
        Option(
            ("--bootstrap-iters",),
            ("bootstrap_iters",),
            {
                "default": 1000,
                "show_default": True,
                "type": int,
                "help": "bootstrap resamples of the 95% intervals (0: no intervals)",
            },
        ),
    )

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> RunJudging:
        judges: tuple[str, ...] = values.get("judge", ())
        human_labels, price_table = values.get("human_labels"), values.get("price_table")
        group = RunJudging(
            metrics=split_names(values.get("metrics") or ""),
            metric_args=parse_assignments(values.get("metric_arg", ()), "--metric-arg"),
            judges=list(judges),
            judge_args=judge_args_of(values.get("judge_arg", ()), judges),
            judge_repeats=values.get("judge_repeats"),
            nli=values.get("nli"),
            nli_format=values.get("nli_format", "true"),
            nli_args=parse_assignments(values.get("nli_arg", ()), "--nli-arg"),
            human_labels=human_labels,
            price_table=price_table,
            bootstrap_iters=values.get("bootstrap_iters", 1000),
        )
        read_judging_files(human_labels, price_table)
        return group
