"""What `ragbench.api` exported in 0.1.0 and moved (into a namespace, or out of the API) still imports from
`ragbench.api` until `REMOVED_IN`: the same object, with a DeprecationWarning naming where it is now and the
release that drops it. The repository itself uses none of these names: pytest turns the warning into an error
(pyproject.toml's filterwarnings)."""
from __future__ import annotations

import importlib
import re
import warnings

import pytest

import ragbench.api
from ragbench.api._deprecated import INTERNAL, MOVED, REMOVED_IN

MOVED_NAMES = sorted((name, namespace) for namespace, names in MOVED.items() for name in names)


@pytest.mark.parametrize(("name", "namespace"), MOVED_NAMES)
def test_a_moved_name_warns_with_its_new_home_and_is_the_same_object(name, namespace):
    home = f"ragbench.api.{namespace}"
    with pytest.warns(DeprecationWarning) as caught:
        value = getattr(ragbench.api, name)
    message = str(caught[0].message)
    assert message == (f"ragbench.api.{name} moved to {home}: import it from there; "
                       f"ragbench.api stops exporting it in ragbench {REMOVED_IN}")
    assert value is getattr(importlib.import_module(home), name)
    assert name in importlib.import_module(home).__all__


@pytest.mark.parametrize("name", sorted(INTERNAL))
def test_a_name_no_plugin_used_warns_that_it_is_internal_and_is_the_same_object(name):
    with pytest.warns(DeprecationWarning, match=re.escape(
            f"ragbench.api.{name} is internal now (no plugin used it); "
            f"ragbench.api stops exporting it in ragbench {REMOVED_IN}")):
        value = getattr(ragbench.api, name)
    assert value is getattr(importlib.import_module(INTERNAL[name]), name)


def test_no_deprecated_name_is_also_a_current_one():
    deprecated = {name for name, _ in MOVED_NAMES} | set(INTERNAL)
    assert len(deprecated) == len(MOVED_NAMES) + len(INTERNAL)
    assert deprecated.isdisjoint(ragbench.api.__all__)
    assert all(not hasattr(importlib.import_module(module), "__all__") or name not in ragbench.api.__all__
               for name, module in INTERNAL.items())


def test_the_warning_points_at_the_line_that_imports_the_name():
    code = compile("from ragbench.api import normalize_answer\n", "plugin_module.py", "exec")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(code, {})  # noqa: S102 - a fixed statement, as a plugin module would hold it
    assert {(w.filename, w.lineno, w.category) for w in caught} == {("plugin_module.py", 1, DeprecationWarning)}


def test_the_test_suite_fails_on_a_deprecated_name():
    with pytest.raises(DeprecationWarning, match="ragbench.api.iter_jsonl moved to ragbench.api.data"):
        ragbench.api.iter_jsonl  # noqa: B018


def test_a_name_ragbench_api_never_had_is_an_attribute_error():
    with pytest.raises(AttributeError, match="ragbench.api has no 'Evaluator'"):
        ragbench.api.Evaluator  # noqa: B018
