"""The viewer's "options that differ" names a system option only where the run's value is not the one the system
records when given none: a default a system works out (r1_searcher's rounds from `max_retrieval_num=None`,
o2_searcher's top 3) is not a change."""

from __future__ import annotations

import pytest

from ragbench._values.options import option_defaults
from ragbench._view.pages import config_differences, system_class
from ragbench.testing import installed_registry

REGISTRY = installed_registry()
SYSTEMS = sorted(REGISTRY.entries["systems"])


def differences(system, options):
    shown = config_differences({"system": system, "system_config": {"task": options}}, REGISTRY)
    return shown.get("system options (task)", {})


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_systems_own_defaults_are_no_difference(system):
    cls = system_class(system, REGISTRY)
    assert cls is not None
    try:
        recorded = cls().config()
    except TypeError:  # a system made only with an option it needs (recorded's path): its stated defaults
        recorded = option_defaults(cls)
    assert differences(system, recorded) == {}


@pytest.mark.parametrize(
    ("system", "given", "shown"),
    [
        ("r1_searcher", {"max_retrieval_num": 7}, {"max_retrieval_num": 7}),
        ("o2_searcher", {"topk": 5}, {"topk": 5}),
        ("r1_searcher", {"topk": 3}, {"topk": 3}),
        ("simple_deep_searcher", {"round_tokens": 512}, {"round_tokens": 512}),
    ],
)
def test_an_option_set_away_from_the_systems_default_is_shown(system, given, shown):
    cls = system_class(system, REGISTRY)
    assert cls is not None
    assert differences(system, {**cls().config(), **given}) == shown
