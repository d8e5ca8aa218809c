"""The report systems (plugins/report_writer): report_rag and plan_search_write run end to end offline with the
scripted engine through the CLI, their reports' [n] citations become the segment ids of `export trec-rag`, and a
report over its word limit is cut to it and counted, never silently."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import Document
from ragbench.api.trace import trace_prompts
from ragbench.plugins.report_writer.limits import within, words
from ragbench.plugins.report_writer.system import interleaved, plan_lines
from ragbench.testing import build_index, installed_registry, run_eval
from support.helpers import cli_here, samples
from support.matrix_fixtures import OPEN_QA, cell_config

DATA = TEST_DATA / "trec_rag"
TOPICS, QRELS = DATA / "topics.rag24.test.txt", DATA / "qrels.rag24.test-umbrela-all.txt"
SENTENCE = "Potty training takes patience and a routine, step {} [1][2]."  # 9 words (citations count none)
LONG_REPORT = " ".join(SENTENCE.format(i) for i in range(50))  # 450 words: over TREC RAG's 400


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("index") / "bm25"
    build_index(DATA / "msmarco_v2.1_doc_segmented", folder, "bm25", progress=False, registry=installed_registry())
    return folder


def trec_run(tmp_path: Path, index: Path, system: str, rules: list[dict], *args: str) -> Path:
    """`ragbench --tasks trec_rag24 --system SYSTEM` over the sample's bm25 index, the scripted model's rules."""
    (tmp_path / "rules.json").write_text(json.dumps(rules))
    out = tmp_path / "run"
    done = cli_here(
        *("--tasks", "trec_rag24", "--data", f"trec_rag24={TOPICS}", "--task-arg", f"trec_rag24.qrels={QRELS}"),
        *("--system", system, "--model", f"scripted:{tmp_path / 'rules.json'}", "--retriever", "bm25"),
        *("--retriever-arg", f"index={index}", "--output", str(out), "--no-progress", *args),
    )
    assert done.returncode == 0, done.stderr
    return out


def exported(tmp_path: Path, run: Path) -> list[dict]:
    done = cli_here("export", "trec-rag", str(run), "--output", str(tmp_path / "ag.jsonl"))
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in (tmp_path / "ag.jsonl").read_text(encoding="utf-8").splitlines()]


def test_plan_search_write_searches_its_plan_and_cuts_an_overlong_report_to_the_tracks_400_words(tmp_path, index):
    plan = "1. toddler potty schedule\n- money laundering jail\n\n"
    rules = [{"pattern": "Sub-questions:$", "response": plan}, {"pattern": "Report:$", "response": LONG_REPORT}]
    run = trec_run(tmp_path, index, "plan_search_write", rules)
    results = json.loads((run / "results.json").read_text())
    # 450 words written, cut to 44 whole sentences (396 words): counted in the statistics and as a format shortfall
    assert results["system_stats"]["trec_rag24"] == {
        "examples": 2,
        "mean_words_written": 450,
        "mean_words_kept": 396,
        "mean_sub_questions": 2,
        "reports_over_limit": 2,
        "citations": 2 * 44 * 2,
        "citations_to_no_source": 0,
        "empty_plans": 0,
    }
    assert results["format_adherence"]["trec_rag24"][0] | {"fix": None} == {
        "format": "report within its word limit",
        "followed": 0,
        "of": 2,
        "fix": None,
    }
    for record in samples(run, "trec_rag24"):
        searched = [step["request"]["query"] for step in record["trace"] if step["kind"] == "retrieval"]
        assert searched == [record["question"], "toddler potty schedule", "money laundering jail"]
        prompts = trace_prompts(record["trace"])
        assert "The report must not exceed 400 words." in prompts[1]
        assert "- toddler potty schedule\n- money laundering jail" in prompts[1]
        assert record["prediction"]["answer"] == " ".join(SENTENCE.format(i) for i in range(44))
        assert record["prediction"]["raw_output"] == LONG_REPORT  # what the model wrote, kept beside the cut
        assert record["prediction"]["extras"]["report"]["over_limit"] is True
    for line in exported(tmp_path, run):
        assert line["response_length"] == 396 and len(line["answer"]) == 44
        assert all(sentence["citations"] == [0, 1] for sentence in line["answer"])


def test_report_rag_cites_the_segments_shown_and_a_citation_to_no_source_is_counted(tmp_path, index):
    run = trec_run(tmp_path, index, "report_rag", [{"response": "Three times a day [2][1]. Up to twenty years [9]."}])
    results = json.loads((run / "results.json").read_text())
    stats = results["system_stats"]["trec_rag24"]
    assert (stats["reports_over_limit"], stats["citations"], stats["citations_to_no_source"]) == (0, 6, 2)
    assert results["format_adherence"]["trec_rag24"][0]["followed"] == 2  # within the limit: followed
    rows = {row["id"]: row for row in samples(run, "trec_rag24")}
    for line in exported(tmp_path, run):
        shown = [doc["id"] for doc in rows[line["topic_id"]]["prediction"]["docs"]]
        assert line["references"] == shown and 2 <= len(shown) < 20  # every segment bm25 finds, fewer than top_n
        prompt = trace_prompts(rows[line["topic_id"]]["trace"])[0]
        assert [int(n) for n in re.findall(r"^\[(\d+)\] ", prompt, re.M)] == list(range(1, len(shown) + 1))
        assert line["answer"] == [
            {"text": "Three times a day.", "citations": [1, 0]},
            {"text": "Up to twenty years.", "citations": []},  # [9] named no segment shown
        ]


def test_deep_research_bench_reports_have_no_word_limit_unless_given(tmp_path):
    """DeepResearch Bench sets no length: a report keeps every word; `max_words` cuts it and counts it."""
    build_index(OPEN_QA / "varn_corpus.jsonl", tmp_path / "varn", "bm25", progress=False, registry=installed_registry())
    for system_args, kept in (({}, 40), ({"max_words": 30}, 30)):
        folder = tmp_path / f"cell{len(system_args)}"
        config = cell_config("deep_research_bench", "plan_search_write", folder, corpus_index=tmp_path)
        config["system_args"] = system_args
        results = run_eval(config.pop("tasks"), registry=installed_registry(), page_cache=None, **config).results
        assert results["complete"], results.get("failures")
        record = samples(folder / "run", "deep_research_bench")[1]  # its report: "zzz" 40 times, one sentence
        assert words(record["prediction"]["answer"]) == kept and record["prediction"]["docs"]
        assert ("must not exceed" in trace_prompts(record["trace"])[1]) is bool(system_args)
        stats = results["system_stats"]["deep_research_bench"]
        assert stats["reports_over_limit"] == (2 if system_args else 0)  # the first, the reference, is over 30 too
        assert ("deep_research_bench" in results.get("format_adherence", {})) is bool(system_args)


sentence = st.lists(st.sampled_from(["Olm", "is", "a", "town", "[1]", "[2][3]", "Varn's", "ferry"]), min_size=1)


@settings(max_examples=60, deadline=None)
@given(st.lists(sentence.map(lambda tokens: " ".join(tokens) + "."), min_size=1, max_size=8), st.integers(1, 30))
def test_a_report_is_cut_within_its_limit_to_a_prefix_and_the_words_written_are_kept(sentences, limit):
    report = " ".join(sentences)
    kept = within(report, limit)
    assert kept.words_written == words(report) and kept.words_kept == words(kept.text) <= limit
    assert report.startswith(kept.text)
    if words(report) <= limit:
        assert kept.text == report
    else:
        assert kept.words_kept > 0 or words(sentences[0]) == 0


def test_a_plan_is_its_lines_without_marks_each_once_and_searches_interleave_by_rank():
    assert plan_lines("1. a\n2) b\n- a\n\n* c\nSub-question 4: d", 3) == ["a", "b", "c"]
    one, two, three = (Document(id=i, title="", text=i) for i in "123")
    assert interleaved([[one, two], [two, three], []], 5) == [one, two, three]
    assert interleaved([[one, two], [three]], 2) == [one, three]


def test_a_chat_model_gets_each_prompt_as_one_user_message_and_an_empty_plan_searches_the_question(tmp_path, index):
    rules = [{"pattern": "Sub-questions:$", "response": "\n  \n"}, {"response": "Daily [1]."}]
    run = trec_run(tmp_path, index, "plan_search_write", rules, "--model-arg", "chat=true")
    for record in samples(run, "trec_rag24"):
        plan, report = trace_prompts(record["trace"])
        assert [message["role"] for message in plan + report] == ["user", "user"]
        assert plan[0]["content"].endswith("Sub-questions:") and report[0]["content"].endswith("Report:")
        searched = [step["request"]["query"] for step in record["trace"] if step["kind"] == "retrieval"]
        assert searched == [record["question"]] and record["prediction"]["extras"]["report"]["empty_plan"] is True
    assert json.loads((run / "results.json").read_text())["system_stats"]["trec_rag24"]["empty_plans"] == 2
