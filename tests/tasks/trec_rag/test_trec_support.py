"""The `trec_support` metric against TREC 2025 RAG's released support-evaluation script run unmodified with a fake
judge (tests/data/parity/trec_support/support.json, record_trec_support.py): the same submission file scored by
`ragbench score` with an openai judge on a local server sends the script's chats and sampling, field for field,
one request per judged pair, and scores the recorded replies with Thakur et al.'s weighted precision and recall."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from test_engine_openai import FakeServer

from conftest import TEST_DATA
from ragbench.api import Document, Example, Prediction
from ragbench.metrics.trec_support.labels import label
from ragbench.metrics.trec_support.metric import TrecSupport
from ragbench.metrics.trec_support.prompts import messages
from ragbench.testing import ScriptedLLM, make_context
from support.helpers import cli_here

DATA = TEST_DATA / "parity" / "trec_support"
RECORD = json.loads((DATA / "support.json").read_text(encoding="utf-8"))
SUBMISSION = {
    line["metadata"]["narrative_id"]: line
    for line in map(json.loads, (DATA / "submission" / "fake.jsonl").read_text(encoding="utf-8").splitlines())
}
MODEL = "Qwen/Qwen3-8B"
# The recorded replies weighed by hand (full 1, partial 0.5, none or no tag 0): b1's seven judged pairs (the fifth
# sentence's second citation is not in the index, the fourth's fourth citation past the three judged), its five
# sentences' best; t2's four pairs and four sentences; e3 answers nothing.
EXPECTED = {
    "b1": {"trec_support_precision": 4 / 7, "trec_support_recall": 2.5 / 5},
    "t2": {"trec_support_precision": 2 / 4, "trec_support_recall": 1.5 / 4},
    "e3": {"trec_support_precision": None, "trec_support_recall": None},
}


def test_the_chats_are_the_released_scripts_for_every_judged_pair():
    """Each pair the script judged, rebuilt from its row (the whole answer, the sentence, "TITLE: SEGMENT")."""
    assert len(RECORD["calls"]) == len(RECORD["rows"]) == 11
    for call, row in zip(RECORD["calls"], RECORD["rows"], strict=True):
        answer = " ".join(s["text"] for s in SUBMISSION[row["narrative_id"]]["answer"])
        assert messages(answer, row["statement"], row["citation_doc"]) == call["messages"]
        assert call["template_args"] == {"tokenize": False, "add_generation_prompt": True, "enable_thinking": True}


def score_submission(tmp_path, *metric_args: str, folder: str = "submission", calls: list | None = None):
    """`ragbench score` of a sample submission folder with an openai judge on a local server answering each chat as
    the fake judge answered the script; the command's result and the bodies the server got."""
    replies = {json.dumps(call["messages"]): call["reply"] for call in calls or RECORD["calls"]}
    server = FakeServer(reply=lambda body: replies[json.dumps(body["messages"])])
    try:
        done = cli_here(
            "score",
            "--task",
            "trec_rag25",
            "--data",
            str(DATA / "trec_rag_2025_queries.jsonl"),
            "--task-arg",
            f"trec_rag25.qrels={DATA / 'qrels.rag25.txt'}",
            "--predictions",
            str(DATA / folder),
            "--metrics",
            "+trec_support",
            "--metric-arg",
            f"trec_support.corpus={DATA / 'segments.jsonl'}",
            *(arg for value in metric_args for arg in ("--metric-arg", value)),
            "--judge",
            f"openai:{MODEL}",
            "--judge-arg",
            f"0.base_url={server.base_url}",
            "--output",
            str(tmp_path / "run"),
        )
    finally:
        server.stop()
    return done, server.requests


def test_a_submission_scored_with_an_openai_judge_sends_the_scripts_requests_and_gets_the_weighted_scores(tmp_path):
    done, requests = score_submission(tmp_path)
    assert done.returncode == 0, done.stderr
    sent = Counter(json.dumps(request["body"], sort_keys=True) for request in requests)  # JSON: 0 and 0.0 differ
    upstream = Counter(
        json.dumps({"model": MODEL, "messages": call["messages"], **call["sampling"]}, sort_keys=True)
        for call in RECORD["calls"]
    )
    assert sent == upstream
    rows = {row["id"]: row for row in map(json.loads, (tmp_path / "run" / "samples" / "trec_rag25.jsonl").open())}
    for topic, expected in EXPECTED.items():
        assert {key: rows[topic]["scores"].get(key) for key in expected} == pytest.approx(expected)
    results = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    counted = results["counted"]["trec_rag25"]["trec_support"]
    assert {name: tally["count"] for name, tally in counted.items()} == {
        "trec_support_unparsed": 1,  # b1's garbled sentence: weighed as no support
        "trec_support_cut": 1,  # b1's fourth sentence cites four
        "trec_support_not_in_corpus": 1,  # b1's fifth sentence cites a segment the index lacks
    }
    assert results["results"]["trec_rag25"]["trec_support_precision"] == pytest.approx((4 / 7 + 2 / 4) / 2)


def upstream_bodies(calls: list[dict]) -> Counter:
    """The bodies an openai judge on `vllm serve` gets for the script's calls: the chat, its SamplingParams, and the
    template's enable_thinking as vLLM's chat_template_kwargs where the script turns it off (its default is on)."""
    return Counter(
        json.dumps(
            {"model": MODEL, "messages": call["messages"], **call["sampling"]}
            | (
                {} if call["template_args"]["enable_thinking"] else {"chat_template_kwargs": {"enable_thinking": False}}
            ),
            sort_keys=True,
        )
        for call in calls
    )


def sent_bodies(requests: list[dict]) -> Counter:
    return Counter(json.dumps(request["body"], sort_keys=True) for request in requests)  # JSON: 0 and 0.0 differ


def test_no_thinking_sends_the_scripts_requests_with_its_no_thinking_option(tmp_path):
    recorded = RECORD["no_thinking"]["calls"]
    assert all(call["template_args"]["enable_thinking"] is False for call in recorded)
    done, requests = score_submission(tmp_path, "trec_support.no_thinking=true", calls=recorded)
    assert done.returncode == 0, done.stderr
    assert sent_bodies(requests) == upstream_bodies(recorded)
    assert all(request["body"]["chat_template_kwargs"] == {"enable_thinking": False} for request in requests)
    rows = {row["id"]: row for row in map(json.loads, (tmp_path / "run" / "samples" / "trec_rag25.jsonl").open())}
    for topic, expected in EXPECTED.items():  # the same replies: the same scores
        assert {key: rows[topic]["scores"].get(key) for key in expected} == pytest.approx(expected)


def test_citations_given_with_scores_are_judged_in_the_scripts_order_by_score_ties_as_written(tmp_path):
    """submission_dict/: t2's citations as {docid: score}; the second sentence's four, three of them tied, are cut
    to the three the script judges (the highest, then the tied in their written order)."""
    recorded = RECORD["dict_citations"]
    done, requests = score_submission(tmp_path, folder="submission_dict", calls=recorded["calls"])
    assert done.returncode == 0, done.stderr
    assert sent_bodies(requests) == upstream_bodies(recorded["calls"])
    rows = {row["id"]: row for row in map(json.loads, (tmp_path / "run" / "samples" / "trec_rag25.jsonl").open())}
    for topic in ("b1", "t2"):
        step = next(step for step in rows[topic]["judge_trace"] if step["name"] == "trec_support_pairs")
        docs = [doc["id"] for doc in rows[topic]["prediction"]["docs"]]
        judged = [docs.index(pair["docid"]) for pair in step["response"]["pairs"]]
        script = [docs.index(row["citation_id"]) for row in recorded["rows"] if row["narrative_id"] == topic]
        assert judged == script
    # t2: 0.5 and 1 for its first sentence, 0.5, 0 and 0 for its second, 0 for its last; a sentence citing none
    assert rows["t2"]["scores"]["trec_support_precision"] == pytest.approx(2 / 6)
    assert rows["t2"]["scores"]["trec_support_recall"] == pytest.approx(1.5 / 4)


def test_the_judges_labels_agree_with_a_labels_file_as_kappa_and_exact_matches(tmp_path):
    """The script's own output rows as the labels (its replies, read as ragbench reads them), the first pair's label
    given as "No Support" instead: 9 of the 10 labelled pairs match (the garbled reply has no label: unlabelled);
    the file's labels none 2, partial 6, full 2 against the judge's 1, 6, 3: kappa (0.9 - 0.44) / (1 - 0.44)."""
    rows = [dict(row) for row in RECORD["rows"]]
    rows[0] = {key: value for key, value in rows[0].items() if key != "support_output"} | {"label": "No Support"}
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    done, _ = score_submission(tmp_path, f"trec_support.labels={labels}")
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    assert results["results"]["trec_rag25"]["trec_support_labels_exact"] == pytest.approx(0.9)
    assert results["results"]["trec_rag25"]["trec_support_labels_kappa"] == pytest.approx(0.46 / 0.56)
    counted = {name: n["count"] for name, n in results["counted"]["trec_rag25"]["trec_support"].items()}
    assert counted["trec_support_unlabelled"] == 1 and counted["trec_support_labels_no_judged_full"] == 1


def scored(answer: str, docs: list[Document], replies: list[str], **options) -> tuple[dict, Counter, ScriptedLLM]:
    import asyncio

    llm = ScriptedLLM(replies)
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[llm])
    ctx.count = lambda name: counted.update([name])
    prediction = Prediction("q", answer=answer, docs=docs)
    scores = asyncio.run(TrecSupport(**options).score(Example(id="q", question="q"), prediction, ctx))
    return scores, counted, llm


def test_shown_documents_are_judged_when_no_corpus_is_given_and_unshown_citations_are_counted():
    docs = [Document(id="a", title="A", text="alpha"), Document(id="b", title="B", text="beta")]
    scores, counted, llm = scored(
        "One claim [1][2][7]. Two [2].",
        docs,
        ["<support>No Support</support>", "<support> full support </support>", "<support>Partial Support</support>"],
    )
    assert counted == Counter({"trec_support_citing_unshown": 1})
    assert [r.messages[1][1].split("Citation document: ")[1].split("\n")[0] for r in llm.requests] == [
        "A: alpha",
        "B: beta",
        "B: beta",
    ]
    assert scores == {"trec_support_precision": pytest.approx(1.5 / 3), "trec_support_recall": pytest.approx(0.75)}


@pytest.mark.parametrize(
    ("reply", "found"),
    [
        ("<support>Full Support</support>", "full support"),
        ("<think><support>No Support</support></think>\n<support>Partial Support</support>", "partial support"),
        ("<think>maybe <support>Full Support</support></think> no tag after", None),
        ("<SUPPORT>\n  No   Support.\n</SUPPORT>", "no support"),
        ("<support>Supported</support>", None),
        ("", None),
    ],
)
def test_a_reply_is_read_by_its_last_support_tag_after_the_reasoning(reply, found):
    assert label(reply) == found
