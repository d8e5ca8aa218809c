"""The declarations and reporting helpers the built-in systems share say what each system said on its own:
`flashrag_retrieving` and `flashrag_searching` declare the same facts the FlashRAG methods wrote out,
`adherence` builds the `format_adherence` entry the run reads (a `FormatCheck`), and System and Metric still
refuse a fact set by its own name."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api import FormatCheck, Metric, System, SystemDeclaration, adherence
from ragbench.api.flashrag import flashrag_retrieving, flashrag_searching
from ragbench.testing import installed_registry

# what each method declared, written out, before it used flashrag_searching
SEARCHING = {
    "corag": "max_iter_num",
    "rearag": "max_iter_num",
    "rqrag": "max_depth",
    "flare": "max_iter_num",
    "iter_retgen": "iter_num",
    "ircot": "max_iter",
    "self_ask": "max_iter",
    "search_r1": "max_retrieval_num",
}


def written_out(searches: str, **fields: object) -> SystemDeclaration:
    return SystemDeclaration(
        retrieves=True,
        budget_options={"passages": "topk", "searches": searches},
        searches_own_queries=True,
        prompt_style="flashrag",
        **fields,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("system", sorted(SEARCHING))
def test_each_flashrag_method_declares_what_it_wrote_out(system: str) -> None:
    fields = {"own_defaults": ("max_tokens",), "calls_at_most": "max_iter"} if system == "self_ask" else {}
    declared = installed_registry().load("systems", system).declares  # its `recorded`: test_recorded_extras.py
    assert declared == written_out(SEARCHING[system], **fields, recorded=declared.recorded)


def test_flashrag_searching_passes_other_facts_through() -> None:
    assert flashrag_searching("n", roles=("a",)) == written_out("n", roles=("a",))


# what each method that searches with the question declared, written out, before it used flashrag_retrieving
RETRIEVING = {"replug": {}, "sure": {}, "sure_fixed": {}, "skr": {}, "adaptive_rag": {"searches_own_queries": True}}


@pytest.mark.parametrize("system", sorted(RETRIEVING))
def test_each_flashrag_method_that_searches_the_question_declares_what_it_wrote_out(system: str) -> None:
    written = SystemDeclaration(
        retrieves=True,
        budget_options={"passages": "topk"},
        prompt_style="flashrag",
        **RETRIEVING[system],  # type: ignore[arg-type]
    )
    declared = installed_registry().load("systems", system).declares
    assert declared == dataclasses.replace(written, recorded=declared.recorded)
    assert flashrag_retrieving(**RETRIEVING[system]) == written  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(st.text(), st.integers(0, 10**6), st.integers(0, 10**6), st.text())
def test_adherence_is_the_one_entry_or_none_when_nothing_was_checked(what: str, a: int, b: int, fix: str) -> None:
    followed, of = min(a, b), max(a, b)
    made = adherence(what, followed, of, fix)
    if of == 0:
        assert made is None
    else:
        assert made == [{"format": what, "followed": followed, "of": of, "fix": fix}]
        assert list(made[0]) == list(FormatCheck.__annotations__)  # the typed entry, its keys in order


def test_system_and_metric_refuse_a_fact_set_by_its_own_name() -> None:
    with pytest.raises(TypeError, match="sets retrieves by name"):
        type("Named", (System,), {"retrieves": True})
    with pytest.raises(TypeError, match="sets higher_is_better by name"):
        type("Named", (Metric,), {"higher_is_better": False})
    metric = type("Fine", (Metric,), {"name": "fine"})()
    with pytest.raises(TypeError, match=r"sets keys by name.*dataclasses.replace"):
        metric.keys = ("x",)
    system = type("Fine", (System,), {"name": "fine"})()
    with pytest.raises(TypeError, match="sets uses_llm by name"):
        system.uses_llm = False
