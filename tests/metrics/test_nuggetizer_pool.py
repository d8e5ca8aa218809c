"""The `nuggetizer` metric with passages=pool against TREC RAG's AutoNuggetizer as nuggetizer 0.0.5's own scripts
run it (tests/data/nuggetizer/pool.json, recorded by record_pool.py there): each topic's nuggets created once from
its qrels segments graded 1-3 (their text from the corpus, in the qrels' order) with create_nuggets.py's requests
and result, kept in a nugget file that a second run reuses without creating again, each run's answers assigned
with assign_nuggets.py's requests, and each run's scores and mean those of calculate_metrics.py."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
from collections import Counter
from pathlib import Path
from statistics import mean

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import ConfigError, Example, Prediction
from ragbench.metrics.nuggetizer.metric import KEYS, NuggetizerMetric
from ragbench.metrics.nuggetizer.pool import pooled_docids, submitted_text
from ragbench.metrics.segment_texts import scan
from ragbench.tasks.trec_rag.ag_output import sentences
from ragbench.testing import ScriptedLLM, make_context
from support.helpers import run, samples

FIXTURE = json.loads((TEST_DATA / "nuggetizer" / "pool.json").read_text(encoding="utf-8"))
RUNS = FIXTURE["runs"]


def key(messages: list[dict], temperature: float) -> str:
    return json.dumps([messages, temperature])


REPLIES = {
    key(call["messages"], call["params"]["temperature"]): call["reply"]
    for call in FIXTURE["create_calls"] + [c for run in RUNS.values() for c in run["calls"]]
}


def judge() -> ScriptedLLM:
    """Answers each request as the fake judge answered nuggetizer's scripts (the same request, the same reply)."""
    llm = ScriptedLLM(lambda request: REPLIES[key(request.message_dicts(), request.sampling.temperature)])
    llm.engine.model = "gpt-4o"
    return llm


def sent(request) -> dict:
    return {"messages": request.message_dicts(), "temperature": request.sampling.temperature}


def assigning(request) -> bool:
    return "NuggetizeAssignerLLM" in request.message_dicts()[0]["content"]


def recorded(calls: list[dict]) -> list[dict]:
    return [{"messages": c["messages"], "temperature": c["params"]["temperature"]} for c in calls]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The fixture's segments as a gzip shard of the segmented corpus (one line a segment, its seven fields)."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    with gzip.open(folder / "msmarco_v2.1_doc_segmented_00.json.gz", "wt", encoding="utf-8") as handle:
        for docid, text in FIXTURE["corpus"].items():
            fields = {"docid": docid, "url": "u", "title": "t", "headings": "", "segment": text}
            handle.write(json.dumps(fields | {"start_char": 0, "end_char": len(text)}) + "\n")
    return folder


def examples() -> list[Example]:
    qrels: dict[str, dict[str, int]] = {}
    for topic, docid, grade in FIXTURE["qrels"]:
        qrels.setdefault(topic, {})[docid] = grade
    return [Example(id=qid, question=text, gold={"qrels": qrels[qid]}) for qid, text in FIXTURE["topics"].items()]


def score_run(metric: NuggetizerMetric, run: str) -> tuple[ScriptedLLM, dict[str, dict], Counter]:
    """The run's topics scored one after another (as the scripts go through them), one judge for every role."""
    llm, counted = judge(), Counter()
    ctx = make_context("demo", judges=[llm])
    ctx.count = lambda name: counted.update([name])

    async def go() -> dict[str, dict]:
        out = {}
        for example in examples():
            answer = RUNS[run]["answers"][example.id]["ragbench_answer"]
            out[example.id] = await metric.score(example, Prediction(example.id, answer=answer), ctx)
        return out

    return llm, asyncio.run(go()), counted


def upstream_scores(run: str) -> dict[str, dict]:
    return {m["qid"]: {f"nuggetizer_{k}": m[k] for k in KEYS} for m in RUNS[run]["metrics"] if m["qid"] != "all"}


def test_nuggets_are_created_once_per_topic_from_its_pool_and_two_runs_share_them(corpus, tmp_path):
    nugget_file = tmp_path / "nuggets.jsonl"
    first = NuggetizerMetric(passages="pool", corpus=str(corpus), nuggets=str(nugget_file))
    llm, scores, counted = score_run(first, "run_a")
    # each topic is created then assigned (the scripts create every topic first): each step's requests in order
    assert [sent(r) for r in llm.requests if not assigning(r)] == recorded(FIXTURE["create_calls"])
    assert [sent(r) for r in llm.requests if assigning(r)] == recorded(RUNS["run_a"]["calls"])
    written = [json.loads(line) for line in nugget_file.read_text(encoding="utf-8").splitlines()]
    assert [{k: line[k] for k in ("query", "qid", "nuggets")} for line in written] == FIXTURE["nuggets"]
    assert scores == upstream_scores("run_a")
    assert counted == Counter({"nuggetizer_unparsed": 1, "nuggetizer_no_nuggets": 1})
    second = NuggetizerMetric(passages="pool", corpus=str(corpus), nuggets=str(nugget_file))
    llm, scores, _ = score_run(second, "run_b")  # a later run: the file's nuggets, no creation
    assert [sent(r) for r in llm.requests] == recorded(RUNS["run_b"]["calls"])
    assert scores == upstream_scores("run_b")
    for name in RUNS:
        run_mean = {key: mean(s[f"nuggetizer_{key}"] for s in upstream_scores(name).values()) for key in KEYS}
        assert RUNS[name]["metrics"][-1] == {"qid": "all"} | run_mean


def test_without_a_nugget_file_a_topic_is_created_once_per_metric(corpus):
    metric = NuggetizerMetric(passages="pool", corpus=str(corpus))
    llm, scores, _ = score_run(metric, "run_a")
    assert scores == upstream_scores("run_a")
    llm, scores, _ = score_run(metric, "run_b")
    assert [sent(r) for r in llm.requests] == recorded(RUNS["run_b"]["calls"])


def test_a_nugget_file_ragbench_did_not_write_is_only_read(corpus, tmp_path):
    """The track's nugget file: its nuggets are assigned (an importance left out is vital, as assign_nuggets.py
    reads it); a topic it lacks fails that example, named, and the file is left as it was."""
    track = tmp_path / "track_nuggets.jsonl"
    lines = [line | {"nuggets": [{"text": n["text"]} for n in line["nuggets"]]} for line in FIXTURE["nuggets"][:2]]
    track.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    before = track.read_bytes()
    metric = NuggetizerMetric(passages="pool", corpus=str(corpus), nuggets=str(track))
    llm = judge()
    t1 = examples()[0]
    answer = RUNS["run_a"]["answers"]["t1"]["ragbench_answer"]
    scores = asyncio.run(metric.score(t1, Prediction("t1", answer=answer), make_context("demo", judges=[llm])))
    assigned = RUNS["run_a"]["assigned"][0]["nuggets"]
    supported = sum(n["assignment"] == "support" for n in assigned)
    assert scores["nuggetizer_strict_vital_score"] == supported / len(assigned)  # every nugget vital
    with pytest.raises(ValueError, match="topic t3 has no nuggets in .*track_nuggets.jsonl, a file ragbench did not"):
        asyncio.run(metric.score(examples()[2], Prediction("t3", answer="a"), make_context("demo", judges=[llm])))
    assert track.read_bytes() == before


class Topics:
    """A task as the pre-flight sees it: its examples."""

    def examples(self):
        return iter(examples())


def test_after_the_preflight_one_pass_over_the_corpus_reads_every_topics_pool(corpus, monkeypatch):
    """The pre-flight tells the metric every topic's pool: the corpus is read once, not once per topic (the
    TREC RAG shards are 113,520,750 segments); without it, each topic's first use reads it."""
    from ragbench.metrics import segment_texts

    passes = []
    monkeypatch.setattr(
        segment_texts, "scan", lambda path, wanted, *how: passes.append(wanted) or scan(path, wanted, *how)
    )
    metric = NuggetizerMetric(passages="pool", corpus=str(corpus))
    metric.preflight(None, Topics())
    _, scores, _ = score_run(metric, "run_a")
    assert scores == upstream_scores("run_a")
    assert passes == [{docid for t, docid, grade in FIXTURE["qrels"] if grade > 0}]
    passes.clear()
    score_run(NuggetizerMetric(passages="pool", corpus=str(corpus)), "run_a")
    assert len(passes) == 2  # t1's pool, then t2's (t3's is empty)


def test_a_pooled_segment_missing_from_the_corpus_fails_the_example_named(corpus):
    metric = NuggetizerMetric(passages="pool", corpus=str(corpus))
    example = Example(id="x", question="q", gold={"qrels": {"msmarco_v2.1_doc_77_1#0_1": 2}})
    with pytest.raises(ValueError, match="segment msmarco_v2.1_doc_77_1#0_1 is not in the corpus"):
        asyncio.run(metric.score(example, Prediction("x", answer="a"), make_context("demo", judges=[judge()])))


def test_pool_options_are_checked_before_the_run(tmp_path):
    with pytest.raises(ConfigError, match="passages=pool reads the pooled segments from corpus"):
        NuggetizerMetric(passages="pool")
    with pytest.raises(ConfigError, match="with passages=pool only"):
        NuggetizerMetric(nuggets=str(tmp_path / "n.jsonl"))
    with pytest.raises(ConfigError, match="corpus .* not found"):
        NuggetizerMetric(passages="pool", corpus=str(tmp_path / "nowhere"))
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # a real FIFO: refused at once, never read (a read would wait for a writer)
    with pytest.raises(ConfigError, match="fifo.jsonl is not a regular file"):
        NuggetizerMetric(passages="pool", corpus=str(tmp_path), nuggets=str(fifo))
    with pytest.raises(ConfigError, match="does not exist; create it"):
        NuggetizerMetric(passages="pool", corpus=str(tmp_path), nuggets=str(tmp_path / "no" / "n.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": "t1"}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="bad.jsonl:1: not a nugget line"):
        NuggetizerMetric(passages="pool", corpus=str(tmp_path), nuggets=str(bad))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "e"]), st.integers(0, 3)), max_size=8))
def test_the_pool_is_the_topics_segments_graded_above_0_in_qrels_order(judged):
    qrels = dict(judged)
    assert pooled_docids(Example(id="t", question="q", gold={"qrels": qrels})) == [d for d, g in qrels.items() if g]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet="abc xyz,;", min_size=1, max_size=20), st.integers(1, 3)), max_size=4))
def test_the_assigned_text_is_the_exported_submissions_sentences_joined(parts):
    """What the answer is assigned as is what assign_nuggets.py joins from `ragbench export trec-rag`'s lines."""
    answer = " ".join(f"{text.strip() or 'x'} [{n}]." for text, n in parts)
    exported, _ = sentences(answer, shown=3)
    assert submitted_text(answer) == " ".join(sentence["text"] for sentence in exported)


def fake_judge(request) -> str:
    """`scripted:test_nuggetizer_pool:fake_judge`: the judge of a run, answering as the recorder's did."""
    return REPLIES[key(request.message_dicts(), request.sampling.temperature)]


def test_two_trec_rag_runs_scored_from_their_submissions_share_the_topics_nuggets(corpus, tmp_path):
    """Each run's submission file (2024's format) scored on trec_rag24 with one nugget file: the first run creates
    the topics' nuggets (the file is create_nuggets.py's output), the second assigns the same ones; each topic's
    scores are calculate_metrics.py's of that run."""
    topics_file, qrels_file = tmp_path / "topics.tsv", tmp_path / "qrels.txt"
    topics_file.write_text("".join(f"{q}\t{t}\n" for q, t in FIXTURE["topics"].items()), encoding="utf-8")
    qrels_file.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in FIXTURE["qrels"]), encoding="utf-8")
    nugget_file = tmp_path / "nuggets.jsonl"
    for name, recorded_run in RUNS.items():
        folder = tmp_path / name
        folder.mkdir()
        lines = [
            {
                "run_id": name,
                "topic_id": qid,
                "topic": FIXTURE["topics"][qid],
                "references": ["msmarco_v2.1_doc_01_1000#0_0"],
                "response_length": 1,
                "answer": [{"text": text, "citations": [0]} for text in answer["sentences"]],
            }
            for qid, answer in recorded_run["answers"].items()
        ]
        (folder / "ag_output.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        run(
            tmp_path,
            name=f"scored_{name}",
            tasks=["trec_rag24"],
            system="recorded",
            system_args={"path": str(folder)},
            data={"trec_rag24": str(topics_file)},
            task_args={"trec_rag24.qrels": str(qrels_file)},
            metrics=("+nuggetizer",),
            metric_args={
                "nuggetizer.passages": "pool",
                "nuggetizer.corpus": str(corpus),
                "nuggetizer.nuggets": str(nugget_file),
            },
            judges=["scripted:test_nuggetizer_pool:fake_judge"],
        )
        rows = {row["id"]: row["scores"] for row in samples(tmp_path / f"scored_{name}", "trec_rag24")}
        assert {qid: {k: rows[qid][k] for k in scores} for qid, scores in upstream_scores(name).items()} == (
            upstream_scores(name)
        )
        written = [json.loads(line) for line in nugget_file.read_text(encoding="utf-8").splitlines()]
        assert sorted(line["qid"] for line in written) == ["t1", "t2", "t3"]  # created once, by the first run
        assert sorted(({k: line[k] for k in ("query", "qid", "nuggets")} for line in written), key=str) == sorted(
            FIXTURE["nuggets"], key=str
        )


def test_a_topic_missing_from_a_submission_counts_0_in_the_mean_over_all_topics_as_calculate_metrics_py(
    corpus, tmp_path
):
    """assign_nuggets.py gives a topic no line answers an empty answer (every nugget not_support) and
    calculate_metrics.py's mean is over every topic of the nugget file: t3 left out of run_a's submission scores 0
    and the mean is over t1, t2 and t3."""
    topics_file, qrels_file = tmp_path / "topics.tsv", tmp_path / "qrels.txt"
    topics_file.write_text("".join(f"{q}\t{t}\n" for q, t in FIXTURE["topics"].items()), encoding="utf-8")
    qrels_file.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in FIXTURE["qrels"]), encoding="utf-8")
    folder = tmp_path / "run_a"
    folder.mkdir()
    answers = {qid: answer for qid, answer in RUNS["run_a"]["answers"].items() if qid != "t3"}
    lines = [
        {"topic_id": qid, "references": ["msmarco_v2.1_doc_01_1000#0_0"], "answer": [{"text": t, "citations": [0]}]}
        for qid, answer in answers.items()
        for t in [" ".join(answer["sentences"])]
    ]
    (folder / "ag_output.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    results = run(
        tmp_path,
        tasks=["trec_rag24"],
        system="recorded",
        system_args={"path": str(folder)},
        data={"trec_rag24": str(topics_file)},
        task_args={"trec_rag24.qrels": str(qrels_file)},
        metrics=("+nuggetizer",),
        metric_args={"nuggetizer.passages": "pool", "nuggetizer.corpus": str(corpus)},
        judges=["scripted:test_nuggetizer_pool:fake_judge"],
    )
    upstream = upstream_scores("run_a")
    rows = {row["id"]: row["scores"] for row in samples(tmp_path / "run", "trec_rag24")}
    assert {key: rows["t3"][f"nuggetizer_{key}"] for key in KEYS} == dict.fromkeys(KEYS, 0.0)
    for key in KEYS:
        expected = mean([upstream["t1"][f"nuggetizer_{key}"], upstream["t2"][f"nuggetizer_{key}"], 0.0])
        assert results["results"]["trec_rag24"][f"nuggetizer_{key}"] == pytest.approx(expected, abs=1e-12)
    assert "300986" not in str(results["system_reports"])
    assert results["system_reports"]["trec_rag24"]["notes"][0].startswith("1 judged topic(s) no submission line")
