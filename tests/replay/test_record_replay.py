"""Record and replay whole runs: every run writes its LLM, retrieval and tool calls to calls/, and
`ragbench --replay RUN_DIR` re-executes it offline (no model, index or server) to the same samples
and results."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest
from test_llatrieval_end_to_end import run_on_bm25_index
from test_llm_judge import judge_rules, judged_demo_run, predictions_of, score_with_judges

from conftest import write_jsonl
from ragbench._replay.call_refs import resolved
from ragbench._replay.recording import CallRecorder
from ragbench._replay.rerun import replay_config
from ragbench._replay.tools import RecordingTool, ReplayedToolError, load_replay_tools
from ragbench._retrieval.replay import ReplayRetriever
from ragbench._run.evaluator import Evaluator
from ragbench.api import ConfigError, Document, Example
from ragbench.api.retrieval import RetrievalError
from ragbench.testing import installed_registry
from support.crag_helpers import crag_t2_run
from support.crag_tiny_kg import write_tiny_kg
from support.helpers import cli_here, comparable, run, samples

# What legitimately differs between a run and its replay: timings, and which of two identical calls
# made at once by different examples was answered from the response cache (the cache is read off the
# event loop, so that depends on thread timing; the answers are the same).
VOLATILE = {"seconds", "cached"}


def without_timings(value):
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def assert_replays_identically(run_dir, tmp_path, tasks):
    """Replay `run_dir` with its index, model files and servers gone; samples and scores equal."""
    replayed = tmp_path / "replayed"
    result = cli_here("--replay", str(run_dir), "--output", str(replayed), "--no-progress")
    assert result.returncode == 0, result.stderr
    for task in tasks:
        original, again = samples(run_dir, task), samples(replayed, task)
        assert without_timings(again) == without_timings(original)
    first = json.loads((run_dir / "results.json").read_text())
    second = json.loads((replayed / "results.json").read_text())
    assert comparable(second) == comparable(first)
    return second


def test_a_recorded_llatrieval_run_with_re_retrieval_replays_identically_without_its_index(tmp_path):
    out = run_on_bm25_index(tmp_path, "llatrieval")
    searches = [json.loads(line) for line in (out / "calls" / "retrieval.jsonl").read_text().splitlines()]
    assert {s["retriever"] for s in searches} == {"bm25"} and all("docs" in s for s in searches)
    assert len({s["query"] for s in searches}) > 6  # missing-info queries of later iterations
    shutil.rmtree(tmp_path / "index")  # nothing but the recording answers now
    (tmp_path / "rules.json").unlink()
    replayed = assert_replays_identically(out, tmp_path, ["alce_asqa"])
    assert replayed["config"]["retriever"] == "replay" and replayed["config"]["model"].startswith("replay:")
    selections = [
        step
        for record in samples(tmp_path / "replayed", "alce_asqa")
        for step in record["trace"]
        if step["kind"] == "custom"
    ]  # recorded again by the system, no recording needed
    assert selections and all(step["name"] == "selection" and step["docs"] for step in selections)


def test_a_vanilla_run_on_a_bm25_index_replays_identically(tmp_path):
    out = run_on_bm25_index(tmp_path, "vanilla")
    shutil.rmtree(tmp_path / "index")
    assert_replays_identically(out, tmp_path, ["alce_asqa"])


def test_documents_without_ids_are_recorded_and_replayed_by_their_derived_ids(tmp_path):
    """HotpotQA's paragraphs have no ids: each gets `<example id>:<position>`, which the trace and the
    recorded searches name it by, so a recording carries each paragraph once, and the replay finds it there."""
    from conftest import TEST_DATA

    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"response": "Olm"}]))
    data = TEST_DATA / "open_qa" / "hotpot_dev_distractor_v1.json"
    results = run(
        tmp_path,
        tasks=["hotpotqa_distractor"],
        data={"hotpotqa_distractor": str(data)},
        system="llatrieval",
        system_args={
            "retrieve_top": 2,
            "summarize_top": 2,
            "doc_num": 2,
            "window_size": 3,
            "k": 1,
            "max_iterations": 2,
        },
        retriever="example_bm25",
        model=f"scripted:{rules}",
        limit=1,
    )
    assert results["complete"]
    searches = [json.loads(line) for line in (tmp_path / "run" / "calls" / "retrieval.jsonl").read_text().splitlines()]
    assert len(searches) == 2 and searches[0]["ids"] == ["5c8a01:2", "5c8a01:0"]  # Ansgar Pell, Olm
    carried = [doc["id"] for search in searches for doc in search.get("docs", [])]
    assert sorted(carried) == sorted(set(carried))  # each paragraph carried once, the next search names it
    (first,) = samples(tmp_path / "run", "hotpotqa_distractor")
    assert all(None not in step["response"]["ids"] for step in first["trace"] if step["kind"] == "retrieval")
    rules.unlink()
    assert_replays_identically(tmp_path / "run", tmp_path, ["hotpotqa_distractor"])


def test_a_crag_task2_run_replays_its_kg_calls_without_a_server(tmp_path):
    kg_dir = write_tiny_kg(tmp_path / "cragkg")
    results = crag_t2_run(
        tmp_path,
        ["what is florida's capital?", "who is florida's governor?"],
        '{"domain": "encyclopedia", "main_entity": "florida"}',
        kg_dir=str(kg_dir),
    )
    assert results["counts"]["crag_t2"]["failed"] == 0
    calls = tmp_path / "run" / "calls"
    tool_calls = [json.loads(line) for line in (calls / "tools.jsonl").read_text().splitlines()]
    assert {c["tool"] for c in tool_calls} == {"crag_kg"} and len(tool_calls) == 4
    assert json.loads((calls / "tools.json").read_text()) == {"crag_t2": ["crag_kg"]}
    shutil.rmtree(kg_dir)  # no KG files, no server: the replay must not start one
    config = replay_config(tmp_path / "run", str(tmp_path / "replayed"), progress=False)
    replayed = Evaluator(config, registry=installed_registry()).run().results
    assert comparable(replayed) == comparable(results)
    assert without_timings(samples(tmp_path / "replayed", "crag_t2")) == without_timings(
        samples(tmp_path / "run", "crag_t2")
    )


def test_replay_needs_a_recorded_run(tmp_path):
    with pytest.raises(ConfigError, match="no run.json"):
        replay_config(tmp_path)
    (tmp_path / "run.json").write_text(json.dumps({"config": {"tasks": ["demo"]}}))
    with pytest.raises(ConfigError, match="recorded no calls"):
        replay_config(tmp_path)


# --- the replay retriever ---------------------------------------------------------------------------


def recorded_searches(tmp_path, lines):
    return write_jsonl(tmp_path / "searches.jsonl", lines)


def test_replay_retriever_answers_from_carried_docs_the_example_or_a_corpus(tmp_path):
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"id": "c1", "title": "Corpus", "contents": "from the corpus"}])
    path = recorded_searches(
        tmp_path,
        [
            {
                "query": "q1",
                "k": 2,
                "ids": ["d1", "d2"],
                "scores": [2.0, 1.0],
                "docs": [{"id": "d1", "title": "T1", "text": "one"}, {"id": "d2", "title": "T2", "text": "two"}],
            },
            {"query": "q2", "ids": ["own", "c1"]},
        ],
    )
    retriever = ReplayRetriever(file=str(path), corpus=str(corpus))
    [[first, second]] = retriever.search(["q1"], 2)
    assert (first.id, first.text, first.score, second.text) == ("d1", "one", 2.0, "two")
    assert [d.id for d in retriever.search(["q1"], 1)[0]] == ["d1"]  # a larger recorded k serves a smaller one
    example = Example(id="e", question="q", docs=[Document(id="own", title="Own", text="the example's")])
    docs = retriever.for_example(example).search(["q2"], 5)[0]
    assert [(d.id, d.text) for d in docs] == [("own", "the example's"), ("c1", "from the corpus")]


def test_replay_retriever_miss_names_the_nearest_recorded_query(tmp_path):
    retriever = ReplayRetriever(file=str(recorded_searches(tmp_path, [{"query": "where is lloro", "ids": []}])))
    with pytest.raises(
        RetrievalError, match='no recorded search for "where is llorro".*nearest recorded query: "where is lloro"'
    ):
        retriever.search(["where is llorro"], 3)


def test_replay_retriever_refuses_a_larger_k_than_recorded_and_missing_documents(tmp_path):
    retriever = ReplayRetriever(file=str(recorded_searches(tmp_path, [{"query": "q", "k": 1, "ids": ["x"]}])))
    with pytest.raises(RetrievalError, match=r"recorded with k=\[1\], asked k=5"):
        retriever.search(["q"], 5)
    with pytest.raises(RetrievalError, match="document 'x'.*pass --retriever-arg corpus=FILE or index=DIR"):
        retriever.search(["q"], 1)


def test_replay_retriever_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="file=PATH"):
        ReplayRetriever()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"q": 1}\n')
    with pytest.raises(ConfigError, match="bad.jsonl:1: not a recorded search"):
        ReplayRetriever(file=str(bad))


# --- tools ------------------------------------------------------------------------------------------


class Kg:
    async def lookup(self, name, year=None):
        if name == "down":
            raise ConnectionError("KG unreachable")
        return {"name": name, "year": year}

    def sync_lookup(self, name):
        return [name.upper()]


def test_tool_calls_sync_and_async_results_and_errors_are_recorded_and_replayed(tmp_path):
    recorder = CallRecorder(tmp_path / "calls")
    tool = RecordingTool(Kg(), "crag_t2", "kg", recorder)
    recorder.tool_names({"crag_t2": ["kg"]})

    async def use(kg):
        found = await kg.lookup("florida", year=2020)
        with pytest.raises(Exception, match="KG unreachable"):
            await kg.lookup("down")
        return found, kg.sync_lookup("x")

    original = asyncio.run(use(tool))
    recorder.close()
    replayed_tool = load_replay_tools(tmp_path / "calls")["crag_t2"]["kg"]
    assert asyncio.run(use(replayed_tool)) == original == ({"name": "florida", "year": 2020}, ["X"])
    with pytest.raises(ReplayedToolError, match="no recorded kg call.*nearest recorded call"):
        asyncio.run(replayed_tool.lookup("texas"))


def test_a_recording_cut_short_by_a_kill_is_continued_on_a_new_line(tmp_path):
    (tmp_path / "calls").mkdir()
    (tmp_path / "calls" / "retrieval.jsonl").write_text('{"query": "a", "ids": []}\n{"query": "b", "i')
    recorder = CallRecorder(tmp_path / "calls")
    recorder.retrieval("bm25", "c", 1, [], carry_docs=True)
    recorder.close()
    lines = (tmp_path / "calls" / "retrieval.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["query"] == "c" and lines[1] == '{"query": "b", "i'


# --- each prompt stored once ------------------------------------------------------------------------


def test_every_prompt_is_stored_once_in_the_run_folder_and_the_run_replays_from_it(tmp_path):
    """The samples' traces hold the prompts and replies; calls/llm.jsonl and judge0_calls.jsonl refer
    to them; the response cache keeps no prompt; the replay still gives the same samples."""
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps([{"pattern": "You are grading", "response": "correct"}]))
    run(
        tmp_path,
        tasks=["demo"],
        system="closed_book",
        model="scripted:echo",
        limit=3,
        metrics=["llm_judge"],
        judges=[f"scripted:{judge}"],
    )
    out = tmp_path / "run"
    first = samples(out, "demo")[0]
    assert "prompts" not in first
    texts = [
        json.dumps(
            step["request"]["messages"][-1]["content"] if "messages" in step["request"] else step["request"]["prompt"]
        )[1:-1]
        for step in [*first["trace"], *first["judge_trace"]]
    ]
    files = [path for path in out.rglob("*") if path.is_file()]
    for text in texts:
        holders = [path.name for path in files if text in path.read_text(encoding="utf-8", errors="replace")]
        assert holders == ["demo.jsonl"], holders
    lines = [json.loads(line) for line in (out / "calls" / "llm.jsonl").read_text().splitlines()]
    assert {line["role"] for line in lines} == {"model", "judge:0"}
    assert all(set(line) <= {"role", "engine", "ref", "response_data"} for line in lines)
    assert_replays_identically(out, tmp_path, ["demo"])


def test_a_reference_to_an_example_the_run_never_wrote_is_skipped_and_counted(tmp_path):
    from ragbench._engines.replay import ReplayEngine

    run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo", limit=2)
    calls = tmp_path / "run" / "calls" / "llm.jsonl"
    calls.write_text(calls.read_text() + json.dumps({"role": "model", "engine": "x", "ref": "0" * 64}) + "\n")
    engine = ReplayEngine(str(calls), role="model")
    assert engine.unresolved == 1 and sum(map(len, engine.records.values())) == 2


def test_a_document_is_carried_once_per_run_and_replayed_from_the_line_that_carried_it(tmp_path):
    recorder = CallRecorder(tmp_path / "calls")
    one, two = Document(id="d1", title="T1", text="one", score=2.0), Document(id="d2", title="T2", text="two")
    changed = Document(id="d1", title="T1", text="one, edited")
    recorder.retrieval("bm25", "q1", 2, [one, two], carry_docs=True)
    recorder.retrieval("bm25", "q2", 2, [two, Document(id="d1", title="T1", text="one", score=0.5)], carry_docs=True)
    recorder.retrieval("bm25", "q3", 1, [changed], carry_docs=True)  # another content under a known id: carried
    recorder.close()
    lines = [json.loads(line) for line in (tmp_path / "calls" / "retrieval.jsonl").read_text().splitlines()]
    assert [[d["id"] for d in line["docs"]] for line in lines] == [["d1", "d2"], [], ["d1"]]
    retriever = ReplayRetriever(file=str(tmp_path / "calls" / "retrieval.jsonl"))
    [[first, second]] = retriever.search(["q2"], 2)
    assert (first.text, second.text, second.score) == ("two", "one", 0.5)
    assert retriever.search(["q3"], 1)[0][0].text == "one, edited"


# -- a judge's calls file (tests/metrics/test_llm_judge.py's runs) --------------------------------------------------------


def test_each_judge_writes_a_replay_file_that_reproduces_its_verdicts(tmp_path):
    judges = [judge_rules(tmp_path, "a.json", "correct"), judge_rules(tmp_path, "b.json", "incorrect")]
    results = judged_demo_run(tmp_path, judges)
    assert results["results"]["demo"]["llm_judge"] == 0.5  # 1 and 0 averaged per example
    log = tmp_path / "run" / "judge0_calls.jsonl"
    assert all(set(json.loads(line)) == {"ref"} for line in log.read_text().splitlines())  # the samples hold the text
    first = [record for _, record in resolved(log)]
    assert len(first) == 24 and {r["response"] for r in first} == {"correct"}
    assert set(first[0]) == {"messages", "sampling", "response", "response_data"}
    predictions = predictions_of(tmp_path / "run", "demo", tmp_path / "p.jsonl")
    for files, expected in [
        (["judge0_calls.jsonl", "judge1_calls.jsonl"], 0.5),
        (["judge0_calls.jsonl"], 1.0),
        (["judge1_calls.jsonl"], 0.0),
    ]:
        out = tmp_path / f"again_{len(files)}_{files[0]}"
        replayed = score_with_judges(predictions, tmp_path / "run", files, out)
        assert replayed.returncode == 0, replayed.stderr
        assert json.loads((out / "results.json").read_text())["results"]["demo"]["llm_judge"] == expected


def test_a_judge_file_resolves_past_a_samples_line_that_is_no_sample_record(tmp_path):
    """The references of a judge's file are found in the run's samples through the sample reader: a line edited
    by hand (a trace that is no list) or cut short holds nothing to refer to, and is no traceback."""
    judged_demo_run(tmp_path, [judge_rules(tmp_path, "a.json", "correct")])
    log = tmp_path / "run" / "judge0_calls.jsonl"
    before = [record for _, record in resolved(log)]
    with (tmp_path / "run" / "samples" / "demo.jsonl").open("a") as handle:
        handle.write('{"index": 99, "id": "edited", "trace": "not a list"}\n{"index": 100, "trace": [1]}\n{"ind')
    assert [record for _, record in resolved(log)] == before and {r["response"] for r in before} == {"correct"}
