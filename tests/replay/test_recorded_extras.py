"""A system's reporting hooks from its declared `RecordedExtras`: the methods that declare theirs (ircot,
self_ask, sure, rearag, rqrag, replug, corag, flare, the reasoning-search family, selfrag, smart, skr,
adaptive_rag) report, over any recorded extras, the same `statistics` and `format_adherence` as the hooks each
wrote out before it declared them, to the byte and key order (results.json is written from them); a declaration
gives the examples, then its means, counts, tallies and other figures in that order, and one format count."""

from __future__ import annotations

import json
from collections import Counter
from statistics import mean
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api import (
    OutputFormat,
    Prediction,
    RecordedExtras,
    SampleRecord,
    System,
    SystemDeclaration,
    adherence,
    recorded_extras,
)
from ragbench.testing import installed_registry, run_eval


def ircot(runs: list[Any]) -> tuple[Any, Any]:
    statistics = {
        "examples": len(runs),
        "mean_thoughts": round(mean(r["thoughts"] for r in runs), 3),
        "mean_passages": round(mean(r["passages"] for r in runs), 3),
    }
    checks = adherence(
        'a thought starting "So the answer is:" within max_iter thoughts',
        sum(r["answered"] for r in runs),
        len(runs),
        "raise max_iter, or use a model that follows the worked example",
    )
    return statistics, checks


def self_ask(runs: list[Any]) -> tuple[Any, Any]:
    statistics = {"examples": len(runs), "mean_follow_up_searches": round(mean(r["searches"] for r in runs), 3)}
    checks = adherence(
        '"So the final answer is:" within max_iter calls',
        sum(r["answered"] for r in runs),
        len(runs),
        "raise max_iter, or use a model that follows Self-Ask's exemplars",
    )
    return statistics, checks


def selfrag_checks(recorded: list[Any]) -> Any:
    checked = [
        p["relevance_token_first"]
        for extras in recorded
        for p in (extras or {}).get("passages", [])
        if "relevance_token_first" in p
    ]
    return adherence(
        "passage generations opening with a relevance token ([Relevant]/[Irrelevant])",
        sum(checked),
        len(checked),
        "use a Self-RAG checkpoint (e.g. selfrag/selfrag_llama2_7b) whose vocabulary and training "
        "carry the reflection tokens",
    )


def smart_checks(traces: list[Any]) -> Any:
    checked = [t["intents_in_format"] for t in traces if "intents_in_format" in t]
    return adherence(
        "Reconstructor intents as Search(intent; ...)",
        sum(checked),
        len(checked),
        "use a SMART-trained model (--model, or --role-model "
        "reconstructor=ENGINE:MODEL), or --system-arg mode=prompted for an instruction-tuned model",
    )


def sure(runs: list[Any]) -> tuple[Any, Any]:
    statistics = {
        "examples": len(runs),
        "mean_candidates": round(mean(len(r["candidates"]) for r in runs), 3),
        "no_candidates": sum(1 for r in runs if not r["candidates"]),
        "validated_rate": round(mean(v for r in runs for v in r.get("validation", [])), 4)
        if any(r.get("validation") for r in runs)
        else None,
    }
    checks = adherence(
        "answer candidates as (a) xx, (b) yy",
        sum(1 for r in runs if r["candidates"]),
        len(runs),
        'use an instruction-following model; an example without candidates answers "" as FlashRAG\'s SuRe does',
    )
    return statistics, checks


def rate(flags: list[Any]) -> float:
    return round(mean(1.0 if flag else 0.0 for flag in flags), 4)


def selfrag(traces: list[Any]) -> tuple[Any, Any]:
    ratios = [t["retrieval_ratio"] for t in traces if "retrieval_ratio" in t]
    depths = [t["depth"] for t in traces if "depth" in t]
    statistics = {
        "examples": len(traces),
        "retrieval_rate": rate([t["retrieved"] for t in traces]),
        **({"mean_retrieval_ratio": round(mean(ratios), 4)} if ratios else {}),
        **({"mean_segments": round(mean(depths), 2)} if depths else {}),
    }
    return statistics, selfrag_checks(traces)


def smart(traces: list[Any]) -> tuple[Any, Any]:
    parsed = [t["intents_parsed"] for t in traces if "intents_parsed" in t]
    located = [t for t in traces if "located" in t]
    facts = located and {
        "mean_relevant_passages": round(mean(sum(f["relevant"] for f in t["located"]) for t in located), 3),
        "no_facts_rate": rate([t.get("no_facts") for t in located]),
    }
    statistics = {
        "examples": len(traces),
        "mean_intents": round(mean(len(t.get("intents", [])) for t in traces), 3),
        **({"unparsed_intents": parsed.count(False)} if parsed else {}),
        **(facts or {}),
        "cited_rate": rate([t.get("cited") for t in traces]),
    }
    return statistics, smart_checks(traces)


def skr(judged: list[Any]) -> tuple[Any, Any]:
    return {
        "examples": len(judged),
        "retrieval_rate": rate([j["retrieve"] for j in judged]),
    }, None


def adaptive_rag(runs: list[Any]) -> tuple[Any, Any]:
    labels = Counter(extras["label"] for extras in runs)
    return {"examples": sum(labels.values()), **{f"route_{label}": labels[label] for label in "ABC"}}, None


def rearag(runs: list[Any]) -> tuple[Any, Any]:
    means = {f"mean_{key}": round(mean(r[key] for r in runs), 3) for key in ("rounds", "searches", "restarts")}
    rounds = sum(r["rounds"] for r in runs)
    checks = adherence(
        "Thought N: ... Action N: ```{'function': 'search'|'finish', 'parameters': {...}}```",
        rounds - sum(r["restarts"] for r in runs),
        rounds,
        "use a ReaRAG-trained model (THU-KEG/ReaRAG-9B)",
    )
    return {"examples": len(runs), **means, "finished": sum(r["finished"] for r in runs)}, checks


def rqrag(runs: list[Any]) -> tuple[Any, Any]:
    checks = adherence(
        "answers ending with [EOS]",
        sum(r["parsed"] for r in runs),
        sum(r["paths"] for r in runs),
        "use RQ-RAG's model (zorowin123/rq_rag_llama2_7B); "
        "an answer without it is FlashRAG's 'Unable to detect valid answer'",
    )
    return {"examples": len(runs), "mean_paths": round(mean(r["paths"] for r in runs), 3)}, checks


def replug(runs: list[Any]) -> tuple[Any, Any]:
    return {"examples": len(runs), "mean_passages": round(mean(r["passages"] for r in runs), 3)}, None


def corag(chains: list[Any]) -> tuple[Any, Any]:
    statistics = {
        "examples": len(chains),
        "mean_sub_queries": round(mean(len(c["sub_queries"]) for c in chains), 3),
        "mean_distinct_sub_queries": round(mean(len(set(c["sub_queries"])) for c in chains), 3),
        "empty_sub_queries": sum(c["empty_sub_queries"] for c in chains),
    }
    return statistics, None


def flare(recorded: list[Any]) -> tuple[Any, Any]:
    runs = [r["rounds"] for r in recorded]
    statistics = {
        "examples": len(runs),
        "mean_rounds": round(mean(len(r) for r in runs), 3),
        "mean_searches": round(mean(sum(x["searched"] for x in r) for r in runs), 3),
    }
    return statistics, None


def reasoning(query: tuple[str, str], answer: str, name: str) -> Any:
    def written_out(runs: list[Any]) -> tuple[Any, Any]:
        statistics = {
            "examples": len(runs),
            "mean_rounds": round(mean(r["rounds"] for r in runs), 3),
            "mean_searches": round(mean(r["searches"] for r in runs), 3),
            "finish": dict(sorted(Counter(r["finish"] for r in runs).items())),
        }
        checks = adherence(
            f"searches as {query[0]} ... {query[1]}, the answer as {answer}",
            sum(r["finish"] == "answer" for r in runs),
            len(runs),
            f"use a model trained for {name}'s format, or give it more rounds (max_retrieval_num)",
        )
        return statistics, checks

    return written_out


TAGS = "<answer> ... </answer>"
FINISHES = ("answer", "search", "bad_query", "unformatted", "rounds_out")
# system -> (its extras key, what it recorded of an example, its hooks as written out over the recorded runs)
WRITTEN_OUT = {
    **{
        name: (
            "ircot",
            {"thoughts": st.integers(1, 9), "answered": st.booleans(), "passages": st.integers(0, 50)},
            ircot,
        )
        for name in ("ircot", "ircot_fixed")
    },
    **{
        name: ("self_ask", {"searches": st.integers(0, 9), "answered": st.booleans()}, self_ask)
        for name in ("self_ask", "self_ask_fixed")
    },
    **{
        name: (
            "sure",
            st.fixed_dictionaries(
                {"candidates": st.lists(st.text(max_size=3), max_size=3)},
                optional={"validation": st.lists(st.integers(0, 1), max_size=3)},
            ),
            sure,
        )
        for name in ("sure", "sure_fixed")
    },
    "skr": ("skr", {"retrieve": st.booleans()}, skr),
    "adaptive_rag": ("adaptive_rag", {"label": st.sampled_from("ABC")}, adaptive_rag),
    "rearag": (
        "rearag",
        {
            "rounds": st.integers(1, 15),
            "searches": st.integers(0, 15),
            "restarts": st.integers(0, 1),
            "finished": st.booleans(),
        },
        rearag,
    ),
    "selfrag": (
        "selfrag",
        st.fixed_dictionaries(
            {
                "passages": st.lists(
                    st.one_of(st.just({}), st.fixed_dictionaries({"relevance_token_first": st.booleans()}))
                ),
                "retrieved": st.booleans(),
            },
            optional={"retrieval_ratio": st.floats(0, 1), "depth": st.integers(0, 6)},
        ),
        selfrag,
    ),
    "smart": (
        "smart",
        st.fixed_dictionaries(
            {},
            optional={
                "intents_in_format": st.booleans(),
                "intents": st.lists(st.just("x"), max_size=3),
                "intents_parsed": st.booleans(),
                "located": st.lists(st.fixed_dictionaries({"relevant": st.integers(0, 3)}), max_size=3),
                "no_facts": st.booleans(),
                "cited": st.booleans(),
            },
        ),
        smart,
    ),
    "corag": (
        "corag",
        {"sub_queries": st.lists(st.sampled_from(["a", "b", ""]), max_size=4), "empty_sub_queries": st.integers(0, 3)},
        corag,
    ),
    "flare": ("flare", {"rounds": st.lists(st.fixed_dictionaries({"searched": st.booleans()}), max_size=4)}, flare),
    "replug": ("replug", {"passages": st.integers(0, 20)}, replug),
    "rqrag": ("rqrag", {"paths": st.integers(1, 9), "parsed": st.integers(0, 1)}, rqrag),
    **{
        name: (
            "reasoning_search",
            {"rounds": st.integers(1, 9), "searches": st.integers(0, 9), "finish": st.sampled_from(FINISHES)},
            reasoning(query, answer, name),
        )
        for name, query, answer in [
            ("r1_searcher", ("<|begin_of_query|>", "<|end_of_query|>"), TAGS),
            ("search_r1", ("<search>", "</search>"), TAGS),
            ("search_r1_own", ("<search>", "</search>"), TAGS),
            ("autorefine", ("<search>", "</search>"), TAGS),
            ("o2_searcher", ("<query>", "</query>"), TAGS),
            ("simple_deep_searcher", ("<|begin_search_query|>", "<|end_search_query|>"), "\\boxed{...}"),
        ]
    },
}


def samples_of(key: str, fields: dict[str, Any] | st.SearchStrategy[Any]) -> Any:
    """Sample records: some ran and recorded `key` (`fields`: a record's fields, or its strategy), some failed,
    some recorded other extras."""
    record = fields if isinstance(fields, st.SearchStrategy) else st.fixed_dictionaries(fields)
    ran = st.builds(lambda run: SampleRecord("x", extras={key: run}), record)
    failed = st.builds(lambda run: SampleRecord("x", extras={key: run}, error="boom"), record)
    other = st.just(SampleRecord("x", extras={"other": 1}))
    return st.lists(st.one_of(ran, failed, other), max_size=12)


def as_written(value: Any) -> str:
    return json.dumps(value)  # key order kept, as results.json writes it


@pytest.mark.parametrize("name", sorted(WRITTEN_OUT))
def test_declared_hooks_report_what_each_method_wrote_out(name: str) -> None:
    key, fields, written_out = WRITTEN_OUT[name]
    system = installed_registry().load("systems", name)()

    @settings(max_examples=40, deadline=None)
    @given(samples_of(key, fields))
    def check(samples: list[SampleRecord]) -> None:
        runs = recorded_extras(samples, key)
        statistics, checks = written_out(runs) if runs else (None, None)
        assert as_written(declared.statistics(samples)) == as_written(statistics)
        assert as_written(declared.format_adherence(samples)) == as_written(checks)

    declared = system.declares.recorded
    assert declared is not None and not hasattr(type(system), "format_adherence")  # what the core reports
    assert not hasattr(type(system), "statistics")

    check()


RECORDED = [{"n": 1, "ok": True, "kind": "b"}, {"n": 2, "ok": False, "kind": "a"}, {"n": 2, "ok": True, "kind": "b"}]


class Declared(System):
    name = "declared"
    declares = SystemDeclaration(
        recorded=RecordedExtras(
            "mine",
            means={"mean_n": "n"},
            counts={"ok": "ok"},
            tallies={"kind": "kind"},
            output_format=OutputFormat("k=v", "ok", "fix it", of=lambda run: 2),
            figures=lambda runs: {"largest_n": max(run["n"] for run in runs)},
        )
    )

    async def run(self, example, ctx):
        return Prediction(example.id, answer="", extras={"mine": RECORDED[example.index]})


def test_a_declaration_gives_examples_then_means_counts_tallies_and_figures() -> None:
    results = run_eval("demo", Declared, limit=3, bootstrap_iters=10).results  # results.json, as a run writes it
    assert "system_reports" not in results  # the declaration writes no report of its own
    figures = {"examples": 3, "mean_n": 1.667, "ok": 2, "kind": {"a": 1, "b": 2}, "largest_n": 2}
    assert as_written(results["system_stats"]["demo"]) == as_written(figures)
    assert results["format_adherence"]["demo"] == [{"format": "k=v", "followed": 2, "of": 6, "fix": "fix it"}]
    assert not hasattr(Declared(), "statistics")  # a plugin still sees only its eight names (test_plugin_contract)
    recorded = Declared.declares.recorded
    assert recorded is not None and recorded.statistics([]) is None and recorded.format_adherence([]) is None
