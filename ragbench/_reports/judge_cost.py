"""results.json's `judge_cost`: what judging cost per task and judged metric, counted from the samples' judge
calls (`judge_trace`, each step named `judge:<metric or its protocol>`): calls, calls the response cache
answered, failed calls, prompt and completion tokens of the calls sent, and for a priced API the money (USD).

Prices are US dollars per million tokens, prompt and completion. `DEFAULT_PRICES` holds the OpenAI list prices
of common judge models (as published by OpenAI in 2025); they apply to `openai:` judges sent to OpenAI itself
(no base_url of their own). `--price-table FILE` (YAML or JSON: `MODEL: {prompt: USD, completion: USD}`, MODEL
as `engine:model` or the model's name alone) adds prices or replaces these, for any engine. A judge with no
price has no money figure (null, with why); several judges of different prices share one count of tokens and
are not priced apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from .._errors import ConfigError
from .._records import SampleRecord

PER = 1_000_000  # prices are per million tokens
DEFAULT_PRICES: dict[str, dict[str, float]] = {
    "gpt-4o": {"prompt": 2.50, "completion": 10.00},
    "gpt-4o-mini": {"prompt": 0.15, "completion": 0.60},
    "gpt-4.1": {"prompt": 2.00, "completion": 8.00},
    "gpt-4.1-mini": {"prompt": 0.40, "completion": 1.60},
    "gpt-4.1-nano": {"prompt": 0.10, "completion": 0.40},
    "gpt-4-turbo": {"prompt": 10.00, "completion": 30.00},
    "gpt-3.5-turbo": {"prompt": 0.50, "completion": 1.50},
}
PRICED_ENGINE = "openai"  # the engine DEFAULT_PRICES applies to, when it talks to OpenAI itself
NO_JUDGE = "no --judge recorded for the run"
NO_PRICE = "the judge {judge} has no price: add it with --price-table FILE"
MIXED = "the judges ({judges}) have different prices and their calls are counted together"


def read_price_table(path: str | Path) -> dict[str, dict[str, float]]:
    """A price table file's entries; a ConfigError naming the file and entry where one is not a price."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        table = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"--price-table {path}: cannot be read ({exc})") from None
    if not isinstance(table, dict):
        raise ConfigError(f"--price-table {path}: expected MODEL: {{prompt: USD, completion: USD}} entries")
    out = {}
    for model, price in table.items():
        if not (
            isinstance(price, dict)
            and set(price) == {"prompt", "completion"}
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in price.values())
        ):
            raise ConfigError(
                f"--price-table {path}: entry {model!r} is not {{prompt: USD, completion: USD}} "
                "(US dollars per million tokens, >= 0)"
            )
        out[str(model)] = {key: float(value) for key, value in price.items()}
    return out


def judge_price(
    judge: str, options: Mapping[str, Any], table: Mapping[str, Mapping[str, float]]
) -> dict[str, float] | None:
    """The price of one --judge (engine:model with its options): the table's entry for engine:model, or for the
    model's name alone; the default prices for an OpenAI judge that talks to OpenAI."""
    engine, _, model = judge.partition(":")
    for name in (judge, model):
        if name in table:
            return dict(table[name])
    if engine == PRICED_ENGINE and not options.get("base_url") and model in DEFAULT_PRICES:
        return dict(DEFAULT_PRICES[model])
    return None


def prices_of(
    judges: list[str], judge_args: Mapping[str, Mapping[str, Any]], table: Mapping[str, Mapping[str, float]]
) -> tuple[dict[str, float] | None, str | None]:
    """(the one price of the run's judges, None) or (None, why there is none)."""
    if not judges:
        return None, NO_JUDGE
    prices = [judge_price(judge, judge_args.get(str(i), {}), table) for i, judge in enumerate(judges)]
    for judge, price in zip(judges, prices):
        if price is None:
            return None, NO_PRICE.format(judge=judge)
    if any(price != prices[0] for price in prices):
        return None, MIXED.format(judges=", ".join(judges))
    return prices[0], None


class JudgeCostTally:
    """A task's `judge_cost`, filled sample by sample (every record, failed ones too: their calls were paid)."""

    def __init__(self, price: dict[str, float] | None, why_unpriced: str | None) -> None:
        self.price, self.why_unpriced = price, why_unpriced
        self.by_metric: dict[str, dict[str, int]] = {}

    def add(self, record: SampleRecord) -> None:
        for step in record.judge_trace:
            name = step.name.removeprefix("judge:") or "judge"
            counts = self.by_metric.setdefault(
                name, {"calls": 0, "cached": 0, "errors": 0, "prompt_tokens": 0, "completion_tokens": 0}
            )
            counts["calls"] += 1
            counts["errors"] += step.error is not None
            if step.cached:
                counts["cached"] += 1
                continue
            counts["prompt_tokens"] += step.prompt_tokens
            counts["completion_tokens"] += step.completion_tokens

    def sections(self) -> dict[str, Any]:
        """{"judge_cost": {metric: figures}}; nothing where no judge was called."""
        out = {}
        for name, counts in sorted(self.by_metric.items()):
            entry: dict[str, Any] = dict(counts)
            if self.price is None:
                entry["usd"], entry["usd_note"] = None, self.why_unpriced
            else:
                entry["usd"] = round(
                    (
                        counts["prompt_tokens"] * self.price["prompt"]
                        + counts["completion_tokens"] * self.price["completion"]
                    )
                    / PER,
                    6,
                )
                entry["price_per_million"] = dict(self.price)
            out[name] = entry
        return {"judge_cost": out} if out else {}
