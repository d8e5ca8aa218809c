"""What a run's model calls cost in money: each model's price, and the tokens of the traced calls priced by the
model that answered each one (results.json `model_cost` and `judge_cost`).

Prices are US dollars per million tokens, prompt and completion. `DEFAULT_PRICES` holds the OpenAI list prices
of common models (as published by OpenAI in 2025); they apply to `openai:` models sent to OpenAI itself (no
base_url of their own). `--price-table FILE` (YAML or JSON: `MODEL: {prompt: USD, completion: USD}`, MODEL as
`engine:model` or the model's name alone) adds prices or replaces these, for any engine. A model without a price
has no money figure (null, with why): a local model (hf, vllm) says so rather than cost 0. A model sent through
its vendor's batch API (`--model-arg batch=true`) is priced at the entry's `batch_prompt` and `batch_completion`
where it gives them, else at half its prices (OpenAI's and Anthropic's batch discount).

A traced LLM call names the model that answered it by its role (`Step.role`): none, the run's --model; a system
role's name, its --role-model; `judge:N`, the N-th --judge. Judge calls saved before the role was recorded name
none of the judges: they are priced where every judge of the run has one and the same price.
"""

from __future__ import annotations

import json
import math
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._engines import EMBEDDED_MODEL
from .._errors import ConfigError
from .._shared.yaml_tasks.located import PlainLoader, read_yaml_text
from .._storage.given_files import given_text
from .._storage.jsonl import parse_json
from .._types import Step
from .._values.run_config import EngineRequest

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
LOCAL_ENGINES = ("hf", "vllm")  # models run on this machine: no list price
SOME_JUDGE = "judge"  # the role of a judge call saved before calls named their judge
NO_PRICE = "{model} has no price: add it with --price-table FILE"
LOCAL = "{model} is a local model, not priced (a --price-table entry prices it)"
MIXED = "the judges ({judges}) have different prices and these samples do not say which judge answered each call"

PRICE = "{prompt: USD, completion: USD}"
BATCH_KEYS = ("batch_prompt", "batch_completion")  # an entry's batch API prices, optional (both or neither)
BATCH_DISCOUNT = 0.5  # a batch's price where the table gives none: half (OpenAI's and Anthropic's batch APIs)
ENTRY = f"MODEL: {PRICE}"  # a price table's entry

Price = dict[str, float]


def read_price_table(path: str | Path) -> dict[str, Price]:
    """A price table file's entries; a ConfigError of one line naming the file, and the line or entry, where it is
    not one: not a regular file, not YAML or JSON (a tag such as `!!python/object` is refused), or an entry that
    is not two finite prices >= 0."""
    where = f"--price-table {path}"
    text = given_text(path, "--price-table", f"a YAML or JSON file of {ENTRY} entries")
    if str(path).endswith(".json"):
        try:
            table = parse_json(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None
        except ValueError as exc:  # nested too deeply, an integer of over 4,300 digits
            raise ConfigError(f"{where}: not JSON ragbench reads ({exc})") from None
    else:
        table = read_yaml_text(text, where, PlainLoader, f"a price table is data, {ENTRY} entries")
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected {ENTRY} entries")
    out = {}
    for model, entry in table.items():
        price = _price(entry)
        if price is None:
            raise ConfigError(
                f"{where}: entry {reprlib.repr(model)} is not {PRICE} (US dollars per million tokens, finite "
                f"numbers >= 0; batch_prompt and batch_completion may be added): {reprlib.repr(entry)}"
            )
        out[str(model)] = price
    return out


def _price(entry: object) -> Price | None:
    """A table entry's prices, each a finite number >= 0 (not NaN, not an infinity, not true or false); else None."""
    if not isinstance(entry, dict) or set(entry) not in (
        {"prompt", "completion"},
        {"prompt", "completion", *BATCH_KEYS},
    ):
        return None
    price = {}
    for key, value in entry.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        try:
            number = float(value)
        except OverflowError:  # an integer past any float
            return None
        if not (math.isfinite(number) and number >= 0):
            return None
        price[str(key)] = number
    return price


def model_price(spec: str, options: Mapping[str, Any], table: Mapping[str, Mapping[str, float]]) -> Price | None:
    """The price of one model (engine:model with its options): the table's entry for engine:model, or for the
    model's name alone; the default prices for an OpenAI model that talks to OpenAI. With `batch=true`, the batch
    prices (see the module's docstring)."""
    engine, _, model = spec.partition(":")
    entry = next((table[name] for name in (spec, model) if name in table), None)
    if entry is None and engine == PRICED_ENGINE and not options.get("base_url") and model in DEFAULT_PRICES:
        entry = DEFAULT_PRICES[model]
    if entry is None:
        return None
    if options.get("batch") is True:
        return {kind: entry.get(f"batch_{kind}", entry[kind] * BATCH_DISCOUNT) for kind in ("prompt", "completion")}
    return {kind: entry[kind] for kind in ("prompt", "completion")}


@dataclass(frozen=True)
class Priced:
    """One model of the run: its label (how the report names it), engine:model, price or why it has none."""

    label: str
    model: str
    price: Price | None
    note: str | None


def priced(label: str, spec: str, options: Mapping[str, Any], table: Mapping[str, Price]) -> Priced:
    price = model_price(spec, options, table)
    if price is not None:
        return Priced(label, spec, price, None)
    local = spec.partition(":")[0] in LOCAL_ENGINES
    return Priced(label, spec, None, (LOCAL if local else NO_PRICE).format(model=spec))


class ModelPrices:
    """The price of each model of a run, by the role its calls are traced with (see the module's docstring).
    `unreadable`: why the price table could not be read (every model then unpriced, saying so)."""

    def __init__(self, models: EngineRequest, table: Mapping[str, Price], unreadable: str | None = None) -> None:
        self.unreadable = unreadable
        model = models.model or EMBEDDED_MODEL  # --model left at its default: the run loads the embedded model
        self.models: dict[str | None, Priced] = {None: priced("model", model, models.model_args, table)}
        for role, spec in models.role_models.items():
            self.models[role] = priced(role, spec, models.role_model_args.get(role, {}), table)
        judges = [
            priced(f"judge {i + 1}", spec, models.judge_args.get(str(i), {}), table)
            for i, spec in enumerate(models.judges)
        ]
        self.models.update({f"judge:{i}": judge for i, judge in enumerate(judges)})
        self.models[SOME_JUDGE] = _any_judge(judges)

    def of(self, role: str | None) -> Priced:
        found = self.models.get(role) or self.models[None]  # a role without a model of its own: the --model's
        if self.unreadable is not None:
            return Priced(found.label, found.model, None, self.unreadable)
        return found


def _any_judge(judges: list[Priced]) -> Priced:
    """The price of a judge call that does not say which judge answered: the one price all judges share."""
    if not judges:
        return Priced("judge", "?", None, "no --judge recorded for the run")
    prices = {json.dumps(judge.price, sort_keys=True) for judge in judges}
    if len(judges) == 1 or (len(prices) == 1 and judges[0].price is not None):
        return Priced("judges", ", ".join(judge.model for judge in judges), judges[0].price, judges[0].note)
    return Priced(
        "judges", ", ".join(j.model for j in judges), None, MIXED.format(judges=", ".join(j.model for j in judges))
    )


class TokenUsage:
    """Traced LLM calls added up - calls, those the response cache answered, those that failed, and the tokens
    of the calls sent by the role that answered them - and priced (`figures`)."""

    def __init__(self) -> None:
        self.calls = self.cached = self.errors = 0
        self.tokens: dict[str | None, list[int]] = {}  # role -> [calls sent, prompt, completion]

    def add(self, step: Step, role: str | None) -> None:
        self.calls += 1
        self.errors += step.error is not None
        if step.cached:
            self.cached += 1
            return
        sent = self.tokens.setdefault(role, [0, 0, 0])
        sent[0] += 1
        sent[1] += step.prompt_tokens
        sent[2] += step.completion_tokens

    def figures(self, prices: ModelPrices) -> dict[str, Any]:
        """The counts, the tokens sent and their price in US dollars (null with `usd_note` where a model that
        answered has none); with calls to several models, each one's own (`by_model`)."""
        models = {role: prices.of(role) for role in self.tokens}
        out: dict[str, Any] = {
            "calls": self.calls,
            "cached": self.cached,
            "errors": self.errors,
            "prompt_tokens": sum(sent[1] for sent in self.tokens.values()),
            "completion_tokens": sum(sent[2] for sent in self.tokens.values()),
        }
        each = {role: _priced_tokens(models[role], sent) for role, sent in self.tokens.items()}
        unpriced = [entry["usd_note"] for entry in each.values() if entry["usd"] is None]
        out["usd"] = None if unpriced else round(sum(entry["usd"] for entry in each.values()), 6)
        if unpriced:
            out["usd_note"] = "; ".join(dict.fromkeys(unpriced))
        if len(each) == 1:
            (model,) = models.values()
            out["model"] = model.model
            if model.price is not None and not unpriced:
                out["price_per_million"] = dict(model.price)
        elif each:
            out["by_model"] = {models[role].label: entry for role, entry in each.items()}
        return out


def _priced_tokens(model: Priced, sent: list[int]) -> dict[str, Any]:
    calls, prompt, completion = sent
    out: dict[str, Any] = {
        "model": model.model,
        "calls": calls,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
    }
    if model.price is None:
        out.update(usd=None, usd_note=model.note)
    else:
        out["usd"] = round((prompt * model.price["prompt"] + completion * model.price["completion"]) / PER, 6)
    return out
