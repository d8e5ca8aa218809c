"""Where a run's models send their requests: run.json's config `model_urls`, place (model, role NAME, judge N) ->
the base URLs (user info and query left out) each engine resolved (--base-url, else the vendor's base-URL variable
such as $OPENAI_BASE_URL, else the vendor's API: `Engine.sends_to`). Prices are decided from this record, never
from the environment of a later command (`ragbench rescore`, a rebuilt results.json): a vendor's list price applies
to a model sent to the vendor's own host only (ragbench._cost.prices). A model that runs here records none."""

from __future__ import annotations

from collections.abc import Container

from ..._cost.prices import recorded_urls
from ..._registry import Registry
from ..._types import JsonObject
from ..._values.run_groups import RunJudging, RunModels


def model_urls(
    models: RunModels,
    judging: RunJudging,
    registry: Registry,
    loaded: Container[str] | None = None,
    earlier: JsonObject | None = None,
) -> dict[str, list[str]]:
    """Each place's base URLs as its engine resolves them now; with `loaded`, only the places whose engines this
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
