"""A run's budget per example, measured from its traces (results.json `budget`), and the work that bought nothing
(`repeated_work`): in results.json (read back through the results schema), the console summary, report.md, the
viewer's run page and `ragbench compare`, where a delta between runs of other budgets or prompt styles is marked
"not like for like" in words."""

from __future__ import annotations

import json

import pytest

from ragbench._cost.budget import NO_TOKENS, NO_TRACE, BudgetTally, budget_line, repeated_work_lines
from ragbench._reports.compare.comparison import compare_runs, load_run
from ragbench._reports.compare.full_report import markdown
from ragbench._reports.results.file import read_results
from ragbench._reports.results.schema import Results
from ragbench._reports.run_summary import budget_lines, failure_lines
from ragbench._view.catalog import RunCatalog
from ragbench._view.site import Site
from ragbench.api import SampleRecord
from ragbench.testing import installed_registry
from support.helpers import cli_here, run


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Four demo examples run by iter_retgen (3 rounds over the example's 3 provided passages: every round
    searches and prompts alike) and by vanilla (1 passage, the task's prompt), and vanilla again with 3."""
    folder = tmp_path_factory.mktemp("budget")
    for name, system, extra in (
        ("iter_retgen", "iter_retgen", {}),
        ("vanilla", "vanilla", {}),
        ("vanilla_3", "vanilla", {"system_args": {"top_n": 3}}),
        ("ircot", "ircot", {}),
    ):
        run(folder, name, tasks=["demo"], system=system, model="scripted:echo", limit=4, **extra)
    return folder


def record(line: dict) -> SampleRecord:
    """A samples line as the budget reads it (`read_samples`)."""
    return SampleRecord.from_dict({"index": 0, **line})


def test_the_budget_per_example_is_measured_from_the_traces(runs):
    results = read_results(runs / "iter_retgen" / "results.json", "test")  # through the results schema
    budget = results.budget["demo"]
    samples = [json.loads(line) for line in (runs / "iter_retgen" / "samples" / "demo.jsonl").read_text().splitlines()]
    prompt_tokens = sum(s["prompt_tokens"] for r in samples for s in r["trace"] if s["kind"] == "llm")
    assert budget == {
        "examples": 4,
        "llm_calls": 3.0,
        "prompt_tokens": round(prompt_tokens / 4, 4),
        "output_tokens": budget["output_tokens"],
        "searches": 3.0,
        "passages_retrieved": 3.0,
        "passages_shown": 3.0,
        "not_measured": {},
    }
    assert budget["output_tokens"] > 0
    vanilla = read_results(runs / "vanilla" / "results.json", "test").budget["demo"]
    assert (vanilla["llm_calls"], vanilla["searches"], vanilla["passages_shown"]) == (1.0, 1.0, 1.0)


def test_searches_and_calls_that_repeat_within_an_example_are_counted_and_warned_about(runs):
    results = json.loads((runs / "iter_retgen" / "results.json").read_text())
    # rounds 2 and 3 of each example find the same 3 passages and, the echo model answering alike, send the
    # same prompt: answered from the cache
    assert results["repeated_work"]["demo"] == {
        "searches": 12,
        "repeated_searches": 8,
        "empty_queries": 0,
        "llm_calls": 12,
        "repeated_llm_calls": 8,
    }
    lines = failure_lines(read_results(runs / "iter_retgen" / "results.json", "test"))
    assert any(
        line.startswith("demo: warning: 8 of 12 searches returned the same passages")
        and "example_bm25" in line
        and "--retriever bm25" in line
        for line in lines
    )
    assert any(line.startswith("demo: warning: 8 of 12 LLM calls repeated an earlier request") for line in lines)
    assert not [
        line for line in failure_lines(read_results(runs / "vanilla" / "results.json", "test")) if "warning" in line
    ]


def test_repeated_searches_over_a_corpus_index_blame_the_queries_not_the_retriever(runs):
    data = json.loads((runs / "iter_retgen" / "results.json").read_text())
    data["config"]["retriever_metadata"] = {"retriever": "bm25", "index": "/indexes/bm25-0123"}
    [line] = [line for line in repeated_work_lines(Results.from_dict(data)) if "same passages" in line]
    assert line.endswith(
        "over retriever bm25's corpus index: the system's queries did not change between its searches "
        "(the same query again, or an empty one)"
    )
    assert "--retriever" not in line


def test_the_console_summary_and_report_md_give_the_budget_per_example(runs):
    line, model_line = budget_lines(read_results(runs / "iter_retgen" / "results.json", "test"))
    assert model_line.startswith("demo: the system's model ")  # then what the model's calls cost
    # one "per example" line: the scored examples' means, then every example's calls (none printed twice)
    assert line.startswith("demo: per example (mean of 4): LLM calls 3.00, prompt tokens ")
    assert line.count("per example") == 1
    assert "; (all 4, failed ones too) LLM calls 3.00, searches 3.00, tokens " in line
    assert "searches 3.00, distinct passages retrieved 3.00, passages shown to the reader 3.00" in line
    report = (runs / "iter_retgen" / "report.md").read_text()
    assert line in report and "8 of 12 searches returned the same passages" in report


def test_what_the_traces_cannot_tell_is_not_measured_rather_than_0():
    untraced = BudgetTally()
    untraced.add(record({"trace": [], "prediction": {"answer": "x", "extras": {"docs_unknown": True}}}))
    budget = untraced.sections()["budget"]
    assert budget["llm_calls"] is None and budget["not_measured"]["llm_calls"] == NO_TRACE
    assert budget["passages_shown"] is None and "docs_unknown" in budget["not_measured"]["passages_shown"]
    uncounted = BudgetTally()
    uncounted.add(
        record(
            {
                "trace": [{"kind": "llm", "request": {"prompt": "q"}, "prompt_tokens": 0, "completion_tokens": 0}],
                "prediction": {"answer": "x"},
            }
        )
    )
    budget = uncounted.sections()["budget"]
    assert budget["llm_calls"] == 1.0 and budget["prompt_tokens"] is None
    assert budget["not_measured"] == {"prompt_tokens": NO_TOKENS, "output_tokens": NO_TOKENS}


def test_quantities_not_measured_for_one_reason_share_it_in_the_budget_line():
    untraced = BudgetTally()
    untraced.add(record({"trace": [], "prediction": {"answer": "x", "extras": {"docs_unknown": True}}}))
    budget = untraced.sections()["budget"]
    assert budget_line("t", budget) == (
        "t: per example (mean of 1): LLM calls, prompt tokens, output tokens, searches, distinct passages retrieved "
        f"not measured ({NO_TRACE}), passages shown to the reader not measured "
        f"({budget['not_measured']['passages_shown']})"
    )


def test_failed_examples_and_empty_queries(tmp_path):
    tally = BudgetTally()
    tally.add(record({"error": "boom", "trace": [{"kind": "llm", "request": {}}]}))  # a failed example: not counted
    tally.add(
        record(
            {
                "trace": [
                    {"kind": "retrieval", "request": {"query": " \n"}, "response": {"ids": ["1"]}},
                    {"kind": "retrieval", "request": {"query": "q"}, "response": {"ids": ["2"]}},
                ],
                "prediction": {"answer": "x", "docs": [{"id": "2"}]},
            }
        )
    )
    sections = tally.sections()
    assert sections["budget"]["examples"] == 1 and sections["budget"]["passages_retrieved"] == 2.0
    assert sections["repeated_work"]["empty_queries"] == 1 and sections["repeated_work"]["repeated_searches"] == 0


def test_compare_marks_a_delta_between_other_budgets_and_prompt_styles_as_not_like_for_like(runs):
    report = compare_runs(load_run(runs / "vanilla"), load_run(runs / "iter_retgen"), iterations=200)
    row = next(r for r in report.rows if r.metric == "match" and not r.slice)
    assert row.unlike == [
        "passages shown to the reader 1.00 vs 3.00 per example",
        "searches 1.00 vs 3.00 per example",
        "prompt style selfrag vs flashrag",
    ]
    text = markdown(report)
    assert (
        "Not like for like on demo: passages shown to the reader 1.00 vs 3.00 per example; searches 1.00 vs "
        "3.00 per example; prompt style selfrag vs flashrag."
    ) in text
    assert text.count("not like for like") + text.count("Not like for like") == 1  # once, not on every row
    assert all(line.split(" | ")[8] == "no" for line in text.splitlines() if line.startswith("| demo |"))
    assert "| vanilla | 1.00 |" in text and "| iter_retgen | 3.00 |" in text  # each run's budget
    keys = [d.key for d in report.differences]
    assert {"like_for_like.demo.passages", "like_for_like.demo.prompt_style", "system_config.demo.top_n"} <= set(keys)
    assert text.index("What differs") < text.index("| task | metric |")


def test_compare_prints_one_screen_and_writes_the_full_report(runs, tmp_path):
    """Three systems' runs: the console holds each run's rows over all shared examples, one like-for-like verdict
    per run and adjusted p-values, no slice row; --output writes every difference, budget and slice row, and
    --full prints what it writes."""
    folders = [str(runs / name) for name in ("vanilla", "ircot", "iter_retgen")]
    shown = cli_here("compare", *folders, "--output", str(tmp_path / "out"))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert len(lines) <= 40 and max(map(len, lines[:-1])) <= 150  # the last names compare.md
    verdicts = [line for line in lines if "like for like" in line]
    assert verdicts == [
        "not like for like: demo: passages shown to the reader 1.00 vs 3.00 per example, searches 1.00 vs 6.00 per "
        "example, prompt style selfrag vs flashrag",
        "not like for like: demo: passages shown to the reader 1.00 vs 3.00 per example, searches 1.00 vs 3.00 per "
        "example, prompt style selfrag vs flashrag",
    ]
    assert [line for line in lines if line.startswith("decoding")] == [
        "decoding as sent that differs: stop, keep_stop",  # ircot keeps the stop string, as FlashRAG's vLLM does
        "decoding as sent that differs: stop",
    ]
    rows = [line for line in lines if line.startswith("| demo |")]
    assert rows and len(rows) == 2 * len({line.split(" | ")[1] for line in rows})  # one row a metric a run
    assert lines[-1].endswith(str(tmp_path / "out" / "compare.md"))
    report = (tmp_path / "out" / "compare.md").read_text()
    assert "| all |" in report and "What differs" in report and "Budget per example" in report
    assert any(line.startswith("| demo |") and "| all |" not in line for line in report.splitlines())  # slices
    full = cli_here("compare", *folders, "--full")
    assert full.stdout.startswith(report.split("\n![")[0])  # what compare.md holds, but its plots


def test_runs_of_one_budget_and_prompt_style_compare_like_for_like(runs):
    report = compare_runs(load_run(runs / "vanilla"), load_run(runs / "vanilla"), iterations=200)
    assert all(row.unlike == [] for row in report.rows) and report.differences == []
    assert "| yes |" in markdown(report) and "- nothing" in markdown(report)
    other = compare_runs(load_run(runs / "vanilla"), load_run(runs / "vanilla_3"), iterations=200)
    assert next(r for r in other.rows if not r.slice).unlike == [
        "passages shown to the reader 1.00 vs 3.00 per example"
    ]


def test_the_viewer_shows_the_budget_and_the_systems_warnings(runs):
    site = Site(RunCatalog([str(runs)]), registry=installed_registry())
    page = site.data("run/iter_retgen")
    assert page["budget"]["demo"]["searches"] == 3.0
    assert any("8 of 12 searches returned the same passages" in w for w in page["system_warnings"]["demo"])
    warnings = site.data("run/ircot")["system_warnings"]["demo"]  # format adherence, as the console says it
    assert any(w.startswith("demo: warning: 4 of 4 outputs (100%) did not follow ircot's format") for w in warnings)
    pair = site.data("compare/demo/vanilla~iter_retgen")["pairs"][0]
    assert "like_for_like.demo.prompt_style: selfrag vs flashrag" in pair["differences"]
    assert pair["runs"].startswith("A = vanilla: system vanilla, engine scripted, model ")  # what each run is
    assert "; B = iter_retgen: system iter_retgen, engine scripted, model " in pair["runs"]
    assert pair["budgets"]["iter_retgen"]["passages_shown"] == 3.0
    assert pair["rows"][0]["unlike"][-1] == "prompt style selfrag vs flashrag"


def test_a_search_that_found_no_passage_is_counted_and_warned_about():
    """A stopwords-only query over a BM25 index returns nothing: not an empty query, still work that bought
    nothing."""
    tally = BudgetTally()
    steps = [
        {"kind": "retrieval", "request": {"query": "the of and", "k": 5}, "response": {"ids": []}},
        {"kind": "retrieval", "request": {"query": "q", "k": 0}, "response": {"ids": []}},  # asked for none
        {"kind": "retrieval", "request": {"query": "q", "k": 5}, "response": {"ids": ["2"]}},
    ]
    tally.add(record({"trace": steps, "prediction": {"answer": "x", "docs": []}}))
    work = tally.sections()["repeated_work"]
    assert work["empty_results"] == 1 and work["empty_queries"] == 0 and work["searches"] == 3


def test_searches_that_found_no_passage_get_a_warning_line(runs):
    data = json.loads((runs / "iter_retgen" / "results.json").read_text())
    for work in data["repeated_work"].values():
        work["empty_results"] = 2
    [line] = [line for line in repeated_work_lines(Results.from_dict(data)) if "found no passage" in line]
    assert line.startswith("demo: warning: 2 of ") and "stopwords alone" in line
