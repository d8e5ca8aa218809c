"""What a run's model calls cost in money: each model's price, and the tokens of the traced calls priced by the
model that answered each one (results.json `model_cost` and `judge_cost`).

Prices are US dollars per million tokens, prompt and completion. The built-in prices are each vendor's list
prices, read from the price lists shipped with ragbench (ragbench/_cost/price_lists/<vendor>.yaml, each price with
the vendor's page it was read from and when: ragbench._cost.vendor_prices): OpenAI's apply to `openai:` models,
Anthropic's to `anthropic:` models, each sent to the vendor's own host (`VENDOR_HOSTS`). Where a model was sent is
what the run recorded (run.json's config `model_urls`: `model_urls`), never the environment of the command pricing
it (`ragbench rescore`, a rebuilt results.json): a model sent elsewhere (a vLLM server, a gateway of other prices,
whether by --base-url or by $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL) has no list price, and its `usd_note` names where it went and the fix. A
run.json of before that record is priced as then: the list price unless the model has a base_url option. `--price-table
FILE` (YAML or JSON: `MODEL: {prompt: USD, completion: USD}`, MODEL as `engine:model` or the model's name alone)
adds prices or replaces these, for any engine. `gemini:` models have no built-in price yet (none was read from
Google's own page). A model without a price has no money figure (null, with why): a local model (hf, vllm) says
so rather than cost 0 (a run with --max-cost refuses a remote one before it starts: `check_cap`). A model sent
through its vendor's batch API (`--model-arg batch=true`) is priced at the entry's `batch_prompt` and
`batch_completion` where it gives them, else at half its prices (OpenAI's and Anthropic's batch discount).

Prompt-cache tokens are priced at the entry's `cached_prompt`, `cache_write` and `cache_write_1h` (Anthropic's
multipliers of `prompt` where its entry lacks them): ragbench._cost.token_usage says how.

A traced LLM call names the model that answered it by its role (`Step.role`): none, the run's --model; a system
role's name, its --role-model; `judge:N`, the N-th --judge; `app:[PROVIDER:]MODEL`, a call an application made itself
(read from its spans: ragbench._apps.conventions), priced by the --price-table entry of PROVIDER:MODEL or MODEL, else,
where its spans say the call went to PROVIDER's own API (openai, anthropic), by that vendor's list price. Judge calls saved before the role was recorded name
none of the judges: they are priced where every judge of the run has one and the same price.
"""

from __future__ import annotations

import json
import logging
import math
import reprlib
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._config.judging import RunJudging
from .._config.models import RunModels
from .._engines import EMBEDDED_MODEL
from .._errors import ConfigError
from .._registry import Registry
from .._storage.given_files import given_text
from .._storage.jsonl import parse_json
from .._values.json_values import JsonObject
from .._yaml_tasks.located import PlainLoader, read_yaml_text
from .vendor_prices import CACHE_KEYS, DamagedPriceList, Price, price_entry, vendor_prices

log = logging.getLogger(__name__)

PER = 1_000_000  # prices are per million tokens
LOCAL_ENGINES = ("hf", "vllm")  # models run on this machine: no list price
SOME_JUDGE = "judge"  # the role of a judge call saved before calls named their judge
APP = "app:"  # the role of an application's own model call: app:[PROVIDER:]MODEL (ragbench._apps.conventions)
NO_PRICE = "{model} has no price: add it with --price-table FILE"
LOCAL = "{model} is a local model, not priced (a --price-table entry prices it)"
MIXED = "the judges ({judges}) have different prices and these samples do not say which judge answered each call"

PRICE = "{prompt: USD, completion: USD}"
BATCH_DISCOUNT = 0.5  # a batch's price where the table gives none: half (OpenAI's and Anthropic's batch APIs)
# Anthropic's prompt cache prices as multiples of the prompt price, the same for every Claude model
# (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#pricing)
ANTHROPIC_CACHE = {"cached_prompt": 0.1, "cache_write": 1.25, "cache_write_1h": 2.0}
ENTRY = f"MODEL: {PRICE}"  # a price table's entry
VENDOR_HOSTS = {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}  # where a list price applies
ELSEWHERE = (
    "{model} was sent to {urls}, not to {host}: not priced at the vendor's list price (give its price with "
    "--price-table FILE)"
)


def read_price_table(path: str | Path) -> dict[str, Price]:
    """A price table file's entries; a ConfigError of one line naming the file, and the line or entry, where it is
    not one: not a regular file, not YAML or JSON (a tag such as `!!python/object` is refused), or an entry that
    is not two finite prices >= 0."""
    where = f"--price-table {path}"
    text = given_text(path, f"a YAML or JSON file of {ENTRY} entries", "--price-table")
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
        price = price_entry(entry)
        if price is None:
            raise ConfigError(
                f"{where}: entry {reprlib.repr(model)} is not {PRICE} (US dollars per million tokens, finite "
                f"numbers >= 0; batch_prompt and batch_completion may be added, and {', '.join(CACHE_KEYS)}): {reprlib.repr(entry)}"
            )
        if str(model) in out:  # 1 and "1": one name
            raise ConfigError(f"{where}: {reprlib.repr(str(model))} is priced twice")
        out[str(model)] = price
    return out


def recorded_urls(config: Mapping[str, Any]) -> dict[str, list[str]] | None:
    """run.json config's `model_urls` (place -> base URLs); None where the run recorded none (an older ragbench's,
    or not of that shape)."""
    urls = config.get("model_urls")
    if not isinstance(urls, dict) or not all(
        isinstance(each, list) and all(isinstance(url, str) for url in each) for each in urls.values()
    ):
        return None
    return {str(place): list(each) for place, each in urls.items()}


def model_urls(
    models: RunModels,
    judging: RunJudging,
    registry: Registry,
    loaded: Container[str] | None = None,
    earlier: JsonObject | None = None,
) -> dict[str, list[str]]:
    """Where a run's models send their requests, as run.json's config `model_urls` records it: place (model, role
    NAME, judge N) -> the base URLs (user info and query left out) each engine resolves now (--base-url, else the
    vendor's base-URL variable such as $OPENAI_BASE_URL, else the vendor's API: `Engine.sends_to`; a model that
    runs here has none). With `loaded`, only the places whose engines this
    attempt loaded, added to those `earlier` attempts recorded (their run.json config): a model sent to two
    places over a run's attempts records both."""
    given = {
        "model": (models.model, models.model_args),
        **{f"role {role}": (spec, models.role_model_args.get(role, {})) for role, spec in models.role_models.items()},
        **{f"judge {i + 1}": (spec, judging.judge_args.get(str(i), {})) for i, spec in enumerate(judging.judges)},
    }
    out = recorded_urls(earlier or {}) or {}
    for place, (spec, options) in given.items():
        kind = (spec or "").partition(":")[0]
        if not kind or kind not in registry.names("engines") or (loaded is not None and place not in loaded):
            continue
        urls = registry.load("engines", kind).sends_to(options)
        if urls:
            out[place] = list(dict.fromkeys([*out.get(place, []), *urls]))
    return out


def model_price(
    spec: str,
    options: Mapping[str, Any],
    table: Mapping[str, Mapping[str, float]],
    sent_to: Sequence[str] | None = None,
) -> Price | None:
    """The price of one model (engine:model with its options, the base URLs its requests were `sent_to` where the
    run recorded them): the table's entry for engine:model, or for the model's name alone; the built-in price of a
    vendor's model sent to the vendor's own host. With `batch=true`, the batch prices (see the module's
    docstring)."""
    entry = _entry(spec, options, table, sent_to)
    if entry is None:
        return None
    price = {kind: entry[kind] for kind in ("prompt", "completion", *CACHE_KEYS) if kind in entry}
    if spec.startswith("anthropic:"):
        price = {key: entry["prompt"] * times for key, times in ANTHROPIC_CACHE.items()} | price
    if options.get("batch") is True:
        price = {kind: value * BATCH_DISCOUNT for kind, value in price.items()}
        price.update({kind: entry[f"batch_{kind}"] for kind in ("prompt", "completion") if f"batch_{kind}" in entry})
    return price


def _entry(
    spec: str, options: Mapping[str, Any], table: Mapping[str, Mapping[str, float]], sent_to: Sequence[str] | None
) -> Mapping[str, float] | None:
    engine, _, model = spec.partition(":")
    entry = next((table[name] for name in (spec, model) if name in table), None)
    if entry is None and _elsewhere(engine, options, sent_to) is None:  # the vendor's list price, sent to the vendor
        entry = vendor_prices().get(engine, {}).get(model)
    return entry


def _elsewhere(engine: str, options: Mapping[str, Any], sent_to: Sequence[str] | None) -> list[str] | None:
    """Where a model was sent other than its vendor's own host: the URLs recorded (any not on the host), else (a
    run.json of before the record) its base_url option; None where it went to the vendor."""
    if sent_to:
        host = VENDOR_HOSTS.get(engine)
        return None if all(urlsplit(url).hostname == host for url in sent_to) else list(sent_to)
    given = options.get("base_url")
    return ([str(url) for url in given] if isinstance(given, (list, tuple)) else [str(given)]) if given else None


@dataclass(frozen=True)
class Priced:
    """One model of the run: its label (how the report names it), engine:model, price or why it has none."""

    label: str
    model: str
    price: Price | None
    note: str | None
    derived: tuple[str, ...] = ()  # the cache prices taken from Anthropic's multipliers, not from its entry


def priced(
    label: str, spec: str, options: Mapping[str, Any], table: Mapping[str, Price], sent_to: Sequence[str] | None = None
) -> Priced:
    """One model's price, or why it has none: a shipped price list that does not read (`DamagedPriceList`) leaves
    the model unpriced, saying so and the fix, and the run its results; a vendor's model sent elsewhere names
    where (`ELSEWHERE`)."""
    try:
        price = model_price(spec, options, table, sent_to)
    except DamagedPriceList as exc:
        return Priced(label, spec, None, str(exc))
    if price is not None:
        entry = _entry(spec, options, table, sent_to) or {}
        derived = tuple(key for key in ANTHROPIC_CACHE if key in price and key not in entry)
        return Priced(label, spec, price, None, derived)
    engine = spec.partition(":")[0]
    elsewhere = _elsewhere(engine, options, sent_to) if engine in VENDOR_HOSTS else None
    if elsewhere:
        urls = ", ".join(elsewhere)
        return Priced(label, spec, None, ELSEWHERE.format(model=spec, urls=urls, host=VENDOR_HOSTS[engine]))
    return Priced(label, spec, None, (LOCAL if engine in LOCAL_ENGINES else NO_PRICE).format(model=spec))


class ModelPrices:
    """The price of each model of a run, by the role its calls are traced with (see the module's docstring).
    `unreadable`: why the price table could not be read (every model then unpriced, saying so). `sent_to`: where
    each model's requests went by place (model, role NAME, judge N), as the run recorded it (`recorded_urls`);
    None, or a place it lacks: the model's options say (a run.json of before the record)."""

    def __init__(
        self,
        models: RunModels,
        judging: RunJudging,
        table: Mapping[str, Price],
        unreadable: str | None = None,
        sent_to: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.unreadable = unreadable
        self.table = table
        urls = sent_to or {}
        model = models.model or EMBEDDED_MODEL  # --model left at its default: the run loads the embedded model
        self.models: dict[str | None, Priced] = {
            None: priced("model", model, models.model_args, table, urls.get("model"))
        }
        for role, spec in models.role_models.items():
            options = models.role_model_args.get(role, {})
            self.models[role] = priced(role, spec, options, table, urls.get(f"role {role}"))
        judges = [
            priced(f"judge {i + 1}", spec, judging.judge_args.get(str(i), {}), table, urls.get(f"judge {i + 1}"))
            for i, spec in enumerate(judging.judges)
        ]
        self.models.update({f"judge:{i}": judge for i, judge in enumerate(judges)})
        self.models[SOME_JUDGE] = _any_judge(judges)

    def of(self, role: str | None) -> Priced:
        if role is not None and role.startswith(APP) and role not in self.models:
            self.models[role] = self._application_model(role.removeprefix(APP))
        found = self.models.get(role) or self.models[None]  # a role without a model of its own: the --model's
        if self.unreadable is not None:
            return Priced(found.label, found.model, None, self.unreadable)
        return found

    def _application_model(self, spec: str) -> Priced:
        """An application's model (PROVIDER:MODEL, sent to that vendor's API; or MODEL alone) priced by the table,
        else by the vendor's list price where the provider is named (see the module's docstring)."""
        provider, _, model = spec.rpartition(":")
        label = f"application {spec}"
        entry = next((self.table[name] for name in (spec, model) if name in self.table), None)
        if entry is None and provider in VENDOR_HOSTS:
            try:
                entry = vendor_prices().get(provider, {}).get(model)
            except DamagedPriceList as exc:
                return Priced(label, spec, None, str(exc))
        if entry is None:
            return Priced(label, spec, None, NO_PRICE.format(model=f"the application's model {spec}"))
        price = {kind: entry[kind] for kind in ("prompt", "completion", *CACHE_KEYS) if kind in entry}
        if provider == "anthropic":
            price = {key: entry["prompt"] * times for key, times in ANTHROPIC_CACHE.items()} | price
        derived = tuple(key for key in ANTHROPIC_CACHE if key in price and key not in entry)
        return Priced(label, spec, price, None, derived)


def run_prices(
    models: RunModels, judging: RunJudging, sent_to: Mapping[str, Sequence[str]] | None = None
) -> ModelPrices:
    """The price of each model and judge of the run (--price-table, else the built-in list prices of a model
    `sent_to` its vendor)."""
    table = read_price_table(judging.price_table) if judging.price_table else {}
    return ModelPrices(models, judging, table, sent_to=sent_to)


def check_cap(cap: float | None, models: RunModels, judging: RunJudging, registry: Registry) -> None:
    """A --max-cost (`cap`) of a positive, finite number of dollars, and a price for each remote model and judge
    of the run (else nothing counts its calls; each priced where its engine will send its calls: `model_urls`): a
    ConfigError of one line otherwise."""
    if cap is None:
        return
    sent_to = model_urls(models, judging, registry)
    if not (math.isfinite(cap) and cap > 0):
        raise ConfigError(f"--max-cost {cap:g}: give the dollars the run may spend, a number above 0")
    for priced in run_prices(models, judging, sent_to).models.values():
        local = priced.model.partition(":")[0] in LOCAL_ENGINES
        if priced.price is None and not local and not priced.model.startswith("?"):
            raise ConfigError(f"--max-cost {cap:g}: {priced.note} (the cap counts every model's dollars)")


def results_prices(
    models: RunModels, judging: RunJudging, sent_to: Mapping[str, Sequence[str]] | None = None
) -> ModelPrices:
    """`run_prices` as results.json's cost sections count them at a run's end: a --price-table file read when the
    command started (a bad one stopped it then) that can no longer be read (moved, edited) does not keep the run
    from its results.json: a warning names the file and the fix, and every model is unpriced with the reason."""
    try:
        table = read_price_table(judging.price_table) if judging.price_table else {}
    except ConfigError as exc:
        log.warning("%s; the model calls are not priced (fix the file, then `ragbench rescore`)", exc)
        return ModelPrices(models, judging, {}, str(exc), sent_to)
    return ModelPrices(models, judging, table, sent_to=sent_to)


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
