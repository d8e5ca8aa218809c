"""TREC RAG 2024/2025: the MS MARCO V2.1 segmented corpus read in its gzip JSONL shards (index build too), the
topics and qrels as released, trec_eval's nDCG@20 and recall@100, and the generation tasks' submission format."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import stat
from math import log2
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import ConfigError, Document, RecordError
from ragbench.api.retrieval import CorpusLookup, corpus_format, read_corpus, trec_eval_all
from ragbench.tasks.trec_rag.ag_output import recorded_output, response_length, sentences, submission
from ragbench.tasks.trec_rag.data import read_qrels
from ragbench.tasks.trec_rag.task import TrecRag25Task, TrecRagTask
from ragbench.testing import installed_registry
from support.helpers import cli_here, run, samples

DATA = TEST_DATA / "trec_rag"
SEGMENTED = "msmarco_v2.1_segmented"  # the format an index manifest names such a corpus by
TOPICS24, QRELS24 = DATA / "topics.rag24.test.txt", DATA / "qrels.rag24.test-umbrela-all.txt"
TOPICS25, QRELS25 = DATA / "trec_rag_2025_queries.jsonl", DATA / "qrels.rag25.txt"


def segment(docid: str, title: str, text: str, start: int = 0) -> dict:
    """A segment line as the corpus holds it (trec-rag.github.io's 2024 corpus post): its seven fields."""
    return {
        "docid": docid,
        "url": f"https://example.org/{docid.split('#')[0]}",
        "title": title,
        "headings": f"{title}\n{title}\n",
        "segment": text,
        "start_char": start,
        "end_char": start + len(text),
    }


SHARD_00 = [
    segment("msmarco_v2.1_doc_51_766815931#1_1606876582", "Potty Training", "Start potty training gently."),
    segment(
        "msmarco_v2.1_doc_51_766815931#2_1606878413",
        "How Often Should I Take My Toddler To The Potty",
        "Most toddlers pee four to eight times per day; set up a potty routine for your toddler.",
        1445,
    ),
    segment("msmarco_v2.1_doc_29_677149#3_1637632", "Aeolian Vibration", "Wind causes vibration of conductors."),
    segment("msmarco_v2.1_doc_00_378699409#2_708658780", "Community", "A community is a social unit."),
]
SHARD_01 = [
    segment(
        "msmarco_v2.1_doc_37_463237391#10_984448281",
        "How To Potty Train Your Kid",
        "Take your child to the potty about 3 times a day: morning, after mealtimes and before bedtime.",
        4551,
    ),
    segment("msmarco_v2.1_doc_10_1000#0_2000", "Money Laundering", "Money laundering can mean years in jail."),
    segment("msmarco_v2.1_doc_10_1000#1_2900", "E-waste", "Recycling e-waste protects health and sustainability."),
]


def write_shard(path: Path, records: list[dict]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in records)
    return path


def write_corpus(folder: Path, *shards: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for number, records in enumerate(shards):
        write_shard(folder / f"msmarco_v2.1_doc_segmented_{number:02d}.json.gz", records)
    return folder


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """A copy of tests/data/trec_rag/msmarco_v2.1_doc_segmented: SHARD_00 and SHARD_01 as two gzip shards."""
    return Path(shutil.copytree(DATA / "msmarco_v2.1_doc_segmented", tmp_path_factory.mktemp("trec_rag") / "corpus"))


def test_the_shards_are_read_in_order_each_segment_a_document_found_again_where_it_was(corpus):
    assert corpus_format(corpus) == SEGMENTED
    (corpus / "README.txt").write_text("not a shard")  # other files of the folder are not read
    docs = list(read_corpus(corpus))
    assert [doc.id for doc in docs] == [record["docid"] for record in SHARD_00 + SHARD_01]
    first = docs[1]
    assert isinstance(first, Document)
    assert (first.title, first.text, first.url) == (SHARD_00[1]["title"], SHARD_00[1]["segment"], SHARD_00[1]["url"])
    assert first.metadata == {
        "headings": SHARD_00[1]["headings"],
        "start_char": 1445,
        "end_char": SHARD_00[1]["end_char"],
    }
    lookup = CorpusLookup(corpus)
    assert len(lookup) == len(docs) and [lookup.get(doc.id) for doc in docs] == docs


def test_a_bad_segment_line_is_a_record_error_and_the_shard_goes_on(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    shard = folder / "msmarco_v2.1_doc_segmented_00.json.gz"
    lines = ["{not json", json.dumps({"docid": "a#0_0", "title": "t"}), json.dumps(SHARD_00[0])]
    shard.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    items = list(read_corpus(folder))
    assert [type(item) for item in items] == [RecordError, RecordError, Document]
    assert "segment" in str(items[1]) and f"{shard}:2" in str(items[1])


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_a_damaged_shard_is_one_line_naming_it_not_a_silently_short_corpus(tmp_path, damage):
    folder = write_corpus(tmp_path / "corpus", SHARD_00 * 40)
    shard = folder / "msmarco_v2.1_doc_segmented_00.json.gz"
    data = bytearray(shard.read_bytes())
    if damage == "truncated":
        shard.write_bytes(bytes(data[: len(data) // 2]))
    else:
        middle = len(data) // 2
        data[middle : middle + 16] = bytes(byte ^ 0xFF for byte in data[middle : middle + 16])
        shard.write_bytes(bytes(data))
    with pytest.raises(ConfigError) as caught:
        list(read_corpus(folder))
    message = str(caught.value)
    assert str(shard) in message and "download the shard again" in message and "\n" not in message


text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(text, text, text), min_size=1, max_size=6), st.integers(1, 3))
def test_any_segments_come_back_as_written_across_shards(tmp_path_factory, values, shards):
    records = [
        segment(f"msmarco_v2.1_doc_0{i}_1#{i}_{i}", title, body) | {"headings": h}
        for i, (title, body, h) in enumerate(values)
    ]
    parts = [records[i::shards] for i in range(shards)]
    folder = write_corpus(tmp_path_factory.mktemp("c") / "corpus", *parts)
    docs = list(read_corpus(folder))
    expected = [record for part in parts for record in part]
    assert [(d.id, d.title, d.text, d.metadata["headings"]) for d in docs] == [
        (r["docid"], r["title"], r["segment"], r["headings"]) for r in expected
    ]


def test_topics_of_both_years_and_only_judged_topics_are_examples():
    rag24 = list(TrecRagTask(TOPICS24, qrels=str(QRELS24)).examples())
    assert [e.id for e in rag24] == ["2027497", "300986"]  # 835760 has no judgments: trec_eval -c leaves it out
    assert rag24[1].question == "how many years in jail for money laundering"
    assert rag24[0].gold["qrels"]["msmarco_v2.1_doc_51_766815931#2_1606878413"] == 3
    rag25 = list(TrecRag25Task(TOPICS25, qrels=str(QRELS25)).examples())
    assert [e.id for e in rag25] == ["464", "31"] and rag25[1].question.startswith("I'm seeking to understand")


def test_a_judged_topic_missing_from_the_topics_is_a_counted_record_naming_the_unread_line(tmp_path):
    topics = tmp_path / "topics.tsv"
    topics.write_text("2027497\tpotty\n300986 no tab here\n", encoding="utf-8")
    items = list(TrecRagTask(topics, qrels=str(QRELS24)).examples())
    assert [e.id for e in items if not isinstance(e, RecordError)] == ["2027497"]
    [bad] = [e for e in items if isinstance(e, RecordError)]
    assert "'300986' is judged but not in" in str(bad) and "lines 2 are no topic" in str(bad)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("1 0 d1", "expected 4 fields"),
        ("1 0 d1 high", "relevance 'high' is not a whole number"),
        ("1 0 d0 1", "judges d0 again (first on line 1)"),
    ],
)
def test_a_qrels_line_trec_eval_would_not_read_is_one_line_naming_it(tmp_path, line, message):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"1 0 d0 2\n{line}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(message)) as caught:
        read_qrels(qrels)
    assert f"{qrels}:2:" in str(caught.value)


def test_a_missing_qrels_or_topics_file_fails_before_the_run():
    with pytest.raises(ConfigError, match="--task-arg trec_rag24.qrels=QRELS"):
        TrecRagTask(TOPICS24).prepare()
    with pytest.raises(ConfigError, match="--data trec_rag25=TOPICS"):
        TrecRag25Task(None, qrels=str(QRELS25)).prepare()


@pytest.fixture(scope="module")
def index(corpus, tmp_path_factory) -> Path:
    from ragbench.testing import build_index

    folder = tmp_path_factory.mktemp("index") / "bm25"
    manifest = build_index(corpus, folder, "bm25", progress=False, registry=installed_registry())
    assert manifest.doc_count == 7 and manifest.corpus["format"] == SEGMENTED
    return folder


def scripted_run(tmp_path: Path, index: Path, response: str, qrels: Path = QRELS24, **options) -> dict:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"response": response}]))
    return run(
        tmp_path,
        tasks=["trec_rag24"],
        system="vanilla",
        model=f"scripted:{rules}",
        data={"trec_rag24": str(TOPICS24)},
        task_args={"trec_rag24.qrels": str(qrels)},
        retriever="bm25",
        retriever_args={"index": str(index)},
        **options,
    )


def test_a_run_over_an_index_of_the_shards_scores_as_trec_eval_over_its_run_file(tmp_path, index):
    qrels_file = tmp_path / "qrels.txt"  # judged segments bm25 ranks low or never shows, and one not in the corpus
    qrels_file.write_text(
        "2027497 0 msmarco_v2.1_doc_10_1000#0_2000 3\n"
        "2027497 0 msmarco_v2.1_doc_51_766815931#1_1606876582 1\n"
        "2027497 0 msmarco_v2.1_doc_99_1#0_0 2\n"
        "300986 0 msmarco_v2.1_doc_10_1000#1_2900 2\n"
        "300986 0 msmarco_v2.1_doc_10_1000#0_2000 0\n",
        encoding="utf-8",
    )
    results = scripted_run(tmp_path, index, "Three times a day [1][2]. Four to eight [3].", qrels_file)
    rows = samples(tmp_path / "run", "trec_rag24")
    # the segments that hold a word of the question, 3 of the 7 each: 2027497's (potty, toddler, take, how) #2, #10
    # and last #1 ("potty" alone); 300986's money laundering segment, then #10 and #2 ("how")
    assert [[doc["id"].split("_", 3)[-1] for doc in row["prediction"]["docs"]] for row in rows] == [
        ["51_766815931#2_1606878413", "37_463237391#10_984448281", "51_766815931#1_1606876582"],
        ["10_1000#0_2000", "37_463237391#10_984448281", "51_766815931#2_1606878413"],
    ]
    trec_run = {
        row["id"]: {doc["id"]: float(7 - rank) for rank, doc in enumerate(row["prediction"]["docs"])} for row in rows
    }
    qrels = {e.id: e.gold["qrels"] for e in TrecRagTask(TOPICS24, qrels=str(qrels_file)).examples()}
    expected = trec_eval_all(qrels, trec_run, ["ndcg_cut.20", "recall.100"])
    details = results["details"]["trec_rag24"]
    assert details["ndcg_cut_20"]["value"] == pytest.approx(expected["ndcg_cut_20"], abs=1e-12)
    assert details["recall_100"]["value"] == pytest.approx(expected["recall_100"], abs=1e-12)
    # 2027497 shows 1 of its 3 relevant segments (#1, grade 1, at rank 3: the money laundering one holds no word of
    # its question, the third is not in the corpus); 300986 none (its E-waste segment holds no word of its question)
    assert expected["recall_100"] == pytest.approx((1 / 3 + 0) / 2)
    assert expected["ndcg_cut_20"] == pytest.approx((1 / log2(4)) / (3 + 2 / log2(3) + 1 / log2(4)) / 2)
    assert "counted" not in results  # each search returned fewer than it asked for, all shown: none short


def test_ndcg_at_20_and_recall_at_100_are_trec_eval_s_graded_values():
    """Values from pytrec_eval (trec_eval 9.0.8's C code) on this qrels and ranking, worked by hand too: nDCG's
    gains are the grades, recall's relevant segments those of grade 1 and above (trec_eval's default)."""
    from ragbench.tasks.trec_rag.metric import TrecRagRetrieval

    qrels = {"a": 3, "b": 2, "c": 1, "d": 0}
    shown = [Document(id=doc, title="", text="") for doc in ("d", "b", "x", "a")]
    from ragbench.api import Example, Prediction

    scores = TrecRagRetrieval().score(Example(id="q", question="", gold={"qrels": qrels}), Prediction("q", docs=shown))
    # DCG = 2/log2(3) + 3/log2(5); ideal DCG = 3 + 2/log2(3) + 1/log2(4); 2 of the 3 relevant retrieved
    assert scores["ndcg_cut_20"] == pytest.approx(0.5363218250207072, abs=1e-12)  # pytrec_eval's
    assert scores["ndcg_cut_20"] == pytest.approx((2 / log2(3) + 3 / log2(5)) / (3 + 2 / log2(3) + 1 / log2(4)))
    assert scores["recall_100"] == pytest.approx(2 / 3, abs=1e-12)


def test_an_answer_maps_to_the_submission_format_of_each_year():
    answer = "Take them three times a day [1][3]. Most pee four to eight times [2][9]. No source here."
    parts, dropped = sentences(answer, shown=3)
    assert parts == [
        {"text": "Take them three times a day.", "citations": [0, 2]},
        {"text": "Most pee four to eight times.", "citations": [1]},
        {"text": "No source here.", "citations": []},
    ]
    assert dropped == 1  # [9]: no ninth segment was shown
    references = ["s1", "s2", "s3"]
    line24 = submission(2024, "2027497", "potty", references, parts, "my-run", "my-team")
    assert line24 == {
        "run_id": "my-run",
        "topic_id": "2027497",
        "topic": "potty",
        "references": references,
        "response_length": 15,
        "answer": parts,
    }
    line25 = submission(2025, "464", "community", references, parts, "my-run", "my-team")
    assert line25["metadata"] == {
        "team_id": "my-team",
        "run_id": "my-run",
        "type": "automatic",
        "narrative_id": "464",
        "narrative": "community",
    }
    assert set(line25) == {"metadata", "references", "answer"}


def test_response_length_is_rag24_validation_s_nfkc_word_count():
    assert response_length([{"text": " ﬁne  words\u00a0here "}, {"text": "two words"}]) == 5


sentence_text = st.sampled_from(["potty", "toddler", "training", "morning", "routine", "children", "water", "day"])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(sentence_text, min_size=2, max_size=5), st.lists(st.integers(0, 4), max_size=3, unique=True)
        ),
        min_size=1,
        max_size=4,
    )
)
def test_any_submission_answer_reads_back_with_the_same_citations(values):
    references = [f"msmarco_v2.1_doc_00_{i}#0_{i}" for i in range(5)]
    answer = [{"text": " ".join(words).capitalize() + ".", "citations": cites} for words, cites in values]
    output = recorded_output(answer, references)
    parts, dropped = sentences(output, shown=len(references))
    assert dropped == 0 and parts == answer


def test_a_folder_of_submissions_is_scored_as_predictions_docids_citations_included(tmp_path):
    folder = tmp_path / "submission"
    folder.mkdir()
    refs = ["msmarco_v2.1_doc_51_766815931#2_1606878413", "msmarco_v2.1_doc_10_1000#0_2000"]
    lines = [
        {
            "run_id": "r",
            "topic_id": "2027497",
            "topic": "potty",
            "references": refs,
            "response_length": 3,
            "answer": [{"text": "Four to eight times.", "citations": [0]}],
        },
        {
            "metadata": {"run_id": "r", "narrative_id": "300986"},
            "references": refs[1:],
            "answer": [{"text": "Years in jail.", "citations": [refs[1]]}],
        },
    ]
    (folder / "ag_output.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    results = run(
        tmp_path,
        tasks=["trec_rag24"],
        system="recorded",
        system_args={"path": str(folder)},
        data={"trec_rag24": str(TOPICS24)},
        task_args={"trec_rag24.qrels": str(QRELS24)},
    )
    rows = {row["id"]: row for row in samples(tmp_path / "run", "trec_rag24")}
    assert rows["2027497"]["prediction"]["answer"] == "Four to eight times [1]."
    assert rows["2027497"]["prediction"]["citations"] == [[1]]
    assert rows["300986"]["scores"]["recall_100"] == 1.0
    assert rows["2027497"]["scores"]["recall_100"] == pytest.approx(1 / 3)
    assert results["counts"]["trec_rag24"]["scored"] == 2


def test_export_writes_the_submission_of_a_run_references_capped_citations_kept(tmp_path, index):
    from ragbench.tasks.trec_rag.commands import export

    scripted_run(tmp_path, index, "Three times a day [1][2]. Four to eight [3][9].", system_args={"top_n": 3})
    out = tmp_path / "ag.jsonl"
    lines = export(str(tmp_path / "run"), None, str(out), "my-run", "team", False)
    assert lines[0] == f"TREC RAG 2024 submission: {out} (2 topics, run_id my-run)"
    assert lines[1] == "2 citation(s) named no segment in references and were left out"  # [9], in both topics
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    rows = {row["id"]: row for row in samples(tmp_path / "run", "trec_rag24")}
    for line in written:
        shown = [doc["id"] for doc in rows[line["topic_id"]]["prediction"]["docs"]]
        assert line["references"] == shown and line["run_id"] == "my-run"
        assert line["answer"] == [
            {"text": "Three times a day.", "citations": [0, 1]},
            {"text": "Four to eight.", "citations": [2]},
        ]
        assert line["response_length"] == 7
    with pytest.raises(ConfigError, match="exists: give --overwrite"):
        export(str(tmp_path / "run"), None, str(out), None, "team", False)


def test_a_bad_submission_line_is_a_record_error_naming_it_and_the_rest_are_read(tmp_path):
    from ragbench.tasks.trec_rag.ag_output import submission_records

    folder = tmp_path / "submissions"
    folder.mkdir()
    good = {"topic_id": "1", "references": ["s"], "answer": [{"text": "Yes.", "citations": [0]}]}
    bad_cite = {"topic_id": "2", "references": ["s"], "answer": [{"text": "No.", "citations": [3]}]}
    lines = [b"\xff\xfe not utf-8", b"[1]", json.dumps(bad_cite).encode(), json.dumps(good).encode()]
    (folder / "run.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    items = [item for _, item in submission_records(folder)]
    assert [type(item) for item in items] == [RecordError, RecordError, RecordError, dict]
    assert "run.jsonl:3" in str(items[2]) and "citation 3 is neither an index" in str(items[2])
    assert items[3] == {
        "id": "1",
        "output": "Yes [1].",
        "docs": [{"id": "s"}],
        "extras": {"response_words": 1, "citing_twice": 0},
    }


def test_a_lucene_bm25_index_is_built_from_the_shards_too(corpus, tmp_path):
    from ragbench.testing import build_index

    manifest = build_index(corpus, tmp_path / "lucene", "lucene_bm25", progress=False, registry=installed_registry())
    assert manifest.doc_count == 7 and manifest.corpus["format"] == SEGMENTED


def test_the_prompt_shows_segments_as_ragnarok_does_and_answers_cite_them():
    from ragbench.api import Example
    from ragbench.tasks.trec_rag.task import TrecRagPrompting

    docs = [
        Document(id="a", title="Potty", text="Most toddlers [2] pee\nfour times."),
        Document(id="b", title="", text="x"),
    ]
    prompt = TrecRagPrompting().build_prompt(Example(id="1", question="how often?", gold={}), docs)
    assert "Question: how often?" in prompt and "IEEE format in square brackets" in prompt
    assert "[1] Title: Potty Content: Most toddlers (2) pee four times.\n[2] x\n" in prompt
    assert TrecRagPrompting().citations("Often [1][2]. Less [2].") == [[1, 2], [2]]


def submission_folder(tmp_path: Path, lines: list[dict]) -> Path:
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "ag_output.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return folder


def scored_submissions(tmp_path: Path, folder: Path, **task_args: str) -> tuple[dict, dict]:
    results = run(
        tmp_path,
        tasks=["trec_rag24"],
        system="recorded",
        system_args={"path": str(folder)},
        data={"trec_rag24": str(TOPICS24)},
        task_args={"trec_rag24.qrels": str(QRELS24), **{f"trec_rag24.{k}": v for k, v in task_args.items()}},
    )
    return results, {row["id"]: row for row in samples(tmp_path / "run", "trec_rag24")}


ANSWERED = {
    "topic_id": "2027497",
    "references": ["msmarco_v2.1_doc_51_766815931#2_1606878413"],
    "answer": [{"text": "Four to eight times.", "citations": [0]}],
}
UNKNOWN = {**ANSWERED, "topic_id": "999999"}


def test_a_topic_no_submission_answers_scores_0_in_the_mean_over_all_topics_as_castorini_scores_it(tmp_path):
    """assign_nuggets.py assigns every topic of the nugget file, one without an answer an empty one, and
    calculate_metrics.py takes the mean over them all; a line of a topic not judged is not read. Both said in a
    line each."""
    results, rows = scored_submissions(tmp_path, submission_folder(tmp_path, [ANSWERED, UNKNOWN]))
    assert results["counts"]["trec_rag24"]["scored"] == 2 and results["counts"]["trec_rag24"]["failed"] == 0
    assert rows["300986"]["prediction"]["answer"] == "" and rows["300986"]["scores"]["recall_100"] == 0.0
    assert results["results"]["trec_rag24"]["recall_100"] == pytest.approx(rows["2027497"]["scores"]["recall_100"] / 2)
    notes = results["system_reports"]["trec_rag24"]["notes"]
    assert notes == [
        "1 judged topic(s) no submission line answers, scored as empty answers (castorini's assign_nuggets.py): "
        "300986 (--task-arg trec_rag24.missing_topics=failed fails them instead)",
        "1 submission line(s) of topics the qrels do not judge, not read (as castorini's scripts): 999999",
    ]
    assert results["system_reports"]["trec_rag24"]["errors"] == []


def test_missing_topics_failed_is_the_named_strict_variant(tmp_path):
    results, rows = scored_submissions(tmp_path, submission_folder(tmp_path, [ANSWERED]), missing_topics="failed")
    assert results["counts"]["trec_rag24"]["scored"] == 1 and results["counts"]["trec_rag24"]["failed"] == 1
    assert "has no prediction for id '300986'" in rows["300986"]["error"]
    with pytest.raises(ConfigError, match="missing_topics=skip is not one of empty, failed"):
        TrecRagTask(TOPICS24, qrels=str(QRELS24), missing_topics="skip")


def test_ragnaroks_warnings_long_answers_and_duplicate_citations_are_counted_and_named(tmp_path):
    """rag24_validation warns on an answer over 400 words (NFKC words of its sentences) and on a sentence citing
    one reference twice."""
    long = {**ANSWERED, "answer": [{"text": "word " * 401, "citations": [0, 0]}, {"text": "Ok.", "citations": [0]}]}
    just = {**ANSWERED, "topic_id": "300986", "answer": [{"text": "word " * 400, "citations": [0]}]}
    results, _ = scored_submissions(tmp_path, submission_folder(tmp_path, [long, just]))
    assert results["system_reports"]["trec_rag24"]["notes"] == [
        "1 answer(s) over 400 words, which ragnarok's rag24_validation warns of (and cuts): 2027497 (402 words)",
        "1 answer sentence(s) citing one reference twice, which ragnarok's rag24_validation warns of: 2027497",
    ]
    counted = results["counted"]["trec_rag24"]["trec_rag_retrieval"]
    assert (counted["over_400_words"]["count"], counted["citing_twice"]["count"]) == (1, 1)


def test_ragbench_score_says_each_note_in_one_line_and_succeeds(tmp_path):
    folder = submission_folder(tmp_path, [ANSWERED, UNKNOWN])
    args = ["--task-arg", f"trec_rag24.qrels={QRELS24}", "--predictions", str(folder), "--output", str(tmp_path / "s")]
    result = cli_here("score", "--task", "trec_rag24", "--data", str(TOPICS24), "--no-progress", *args)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "not read (as castorini's scripts)" in line]
    assert lines == [
        "ragbench: trec_rag24: 1 submission line(s) of topics the qrels do not judge, not read (as castorini's "
        "scripts): 999999"
    ]


def test_export_says_which_answers_ragnaroks_checker_warns_of(tmp_path, index):
    from ragbench.tasks.trec_rag.commands import export

    scripted_run(tmp_path, index, "word " * 400 + "end [1][1]. Short [2][2].", system_args={"top_n": 3})
    lines = export(str(tmp_path / "run"), None, str(tmp_path / "ag.jsonl"), "r", "team", False)
    assert lines[1:] == [
        "2 answer(s) over 400 words, which ragnarok's rag24_validation warns of (and cuts): "
        "2027497 (402 words), 300986 (402 words)",
        "4 sentence(s) cited one segment twice, written once (rag24_validation warns of it)",
    ]


def test_the_segments_unpacked_or_in_one_jsonl_file_are_read_as_the_gzip_shards_are(corpus, tmp_path):
    """Anserini's MsMarcoV2DocCollection reads a shard gzipped or not: so does ragbench, and one .jsonl file of
    segment lines too."""
    packed = list(read_corpus(corpus))
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    for number, records in enumerate((SHARD_00, SHARD_01)):
        suffix = ".json" if number == 0 else ".jsonl"
        (unpacked / f"msmarco_v2.1_doc_segmented_{number:02d}{suffix}").write_text(
            "".join(json.dumps(record) + "\n" for record in records), encoding="utf-8"
        )
    one_file = tmp_path / "segments.jsonl"
    one_file.write_text("".join(json.dumps(record) + "\n" for record in SHARD_00 + SHARD_01), encoding="utf-8")
    for path in (unpacked, one_file):
        assert list(read_corpus(path)) == packed
        lookup = CorpusLookup(path)
        assert len(lookup) == len(packed) and [lookup.get(doc.id) for doc in packed] == packed
    write_shard(unpacked / "msmarco_v2.1_doc_segmented_00.json.gz", SHARD_00)
    with pytest.raises(ConfigError, match="msmarco_v2.1_doc_segmented_00 is there twice"):
        corpus_format(unpacked)


def test_export_with_overwrite_replaces_a_symbolic_link_never_the_file_it_leads_to(tmp_path, index):
    from ragbench.tasks.trec_rag.commands import export

    scripted_run(tmp_path, index, "Three times a day [1].")
    mine = tmp_path / "mine.jsonl"
    mine.write_text("the user's own file\n", encoding="utf-8")
    link = tmp_path / "ag.jsonl"
    link.symlink_to(mine)
    with pytest.raises(ConfigError, match="is a symbolic link: give --overwrite to replace the link"):
        export(str(tmp_path / "run"), None, str(link), None, "team", False)
    export(str(tmp_path / "run"), None, str(link), None, "team", True)
    assert mine.read_text(encoding="utf-8") == "the user's own file\n"
    assert not link.is_symlink() and len(link.read_text(encoding="utf-8").splitlines()) == 2
    with pytest.raises(ConfigError, match="is a folder"):
        export(str(tmp_path / "run"), None, str(tmp_path), None, "team", True)


def test_export_never_writes_into_a_run_folder_nor_over_a_named_pipe_even_with_overwrite(tmp_path, index):
    """--overwrite over the run's own results.json (or a new file in the run folder) was taken: the run's results
    replaced by the submission; a named pipe at --output was replaced by a file, the pipe gone."""
    scripted_run(tmp_path, index, "Three times a day [1].")
    run_folder = tmp_path / "run"
    results = (run_folder / "results.json").read_bytes()
    (tmp_path / "link").symlink_to(run_folder)
    for output in (run_folder / "results.json", run_folder / "samples" / "new.jsonl", tmp_path / "link" / "a.jsonl"):
        done = cli_here("export", "trec-rag", str(run_folder), "--output", str(output), "--overwrite")
        assert done.returncode == 2 and done.stderr.splitlines() == [
            f"ragbench: error: export trec-rag: {output} is inside the ragbench run folder {run_folder.resolve()}, "
            "which holds only what ragbench writes there (its results and samples could be replaced); give an "
            "--output outside it"
        ]
    assert (run_folder / "results.json").read_bytes() == results
    assert not (run_folder / "samples" / "new.jsonl").exists() and not (run_folder / "a.jsonl").exists()
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    done = cli_here("export", "trec-rag", str(run_folder), "--output", str(pipe), "--overwrite")
    assert done.returncode == 2 and done.stderr.splitlines() == [
        f"ragbench: error: export trec-rag: {pipe} is a named pipe, not a file, and is left as it is; give a file "
        "name as --output"
    ]
    assert stat.S_ISFIFO(pipe.lstat().st_mode)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "run.json").write_text("{}")  # a run.json ragbench did not write: no run folder
    done = cli_here("export", "trec-rag", str(run_folder), "--output", str(tmp_path / "mine" / "a.jsonl"))
    assert done.returncode == 0, done.stderr


@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 2) | st.floats(0, 1), min_size=1))
def test_citations_given_with_scores_are_written_by_score_highest_first_equal_scores_as_written(cited):
    written = recorded_output([{"text": "Claim.", "citations": cited}], ["a", "b", "c", "d"])
    order = [key for _, _, key in sorted((-score, n, key) for n, (key, score) in enumerate(cited.items()))]
    assert written == "Claim " + "".join(f"[{'abcd'.index(key) + 1}]" for key in order) + "."


def test_citation_scores_that_do_not_compare_are_refused_naming_them():
    with pytest.raises(ValueError, match=r"citation scores \[0.5, 'high'\] do not compare"):
        recorded_output([{"text": "Claim.", "citations": {"a": 0.5, "b": "high"}}], ["a", "b"])
