"""The beir task: a BEIR dataset folder read as GenericDataLoader.load reads it (the split's qrels decide the
queries, in their order), bad rows counted, and a run over an index of the folder's corpus."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import TEST_DATA
from ragbench.api import ConfigError, RecordError
from ragbench.tasks.beir.task import BeirTask
from ragbench.testing import installed_registry
from support.helpers import run, task_counts

BEIR = TEST_DATA / "beir"


def copy_of_beir(tmp_path: Path, qrels: str | None = None) -> Path:
    folder = Path(shutil.copytree(BEIR, tmp_path / "scifact"))
    if qrels is not None:
        (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels, encoding="utf-8")
    return folder


def test_queries_are_those_of_the_split_qrels_in_their_order_with_graded_gold():
    examples = list(BeirTask(BEIR).examples())
    assert [(e.id, e.question, e.gold) for e in examples] == [
        ("q1", "Who founded the fishing town of Olm?", {"qrels": {"d1": 1, "d5": 2}}),
        ("q2", "What is the capital of Varn?", {"qrels": {"d2": 1, "d4": 0}}),
    ]  # q3 has no test qrels: left out
    assert [e.id for e in BeirTask(BEIR, split="dev").examples()] == ["q3"]


def test_bad_qrels_rows_and_unknown_queries_are_counted_bad_records(tmp_path):
    folder = copy_of_beir(tmp_path, "q2\td2\t1\nq1\td1\tone\nq1\td5\t2\nq9\td1\t1\n")
    items = list(BeirTask(folder).examples())
    assert [e.id for e in items if not isinstance(e, RecordError)] == ["q2"]  # q1 has a bad row: not scored
    errors = [str(e) for e in items if isinstance(e, RecordError)]
    assert errors == [
        f"{folder}/qrels/test.tsv:3 field 'score': relevance 'one' is not a whole number",
        f"{folder}/qrels/test.tsv:5 field 'query-id': query 'q9' is not in queries.jsonl",
    ]


def test_an_unreadable_query_line_fails_the_query_once(tmp_path):
    folder = copy_of_beir(tmp_path)
    lines = (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    (folder / "queries.jsonl").write_text("\n".join([lines[0][:20], *lines[1:]]) + "\n", encoding="utf-8")
    items = list(BeirTask(folder).examples())
    assert [str(e) if isinstance(e, RecordError) else e.id for e in items] == [
        f"{folder}/qrels/test.tsv:2 field 'query-id': query 'q1' is not in queries.jsonl (its lines 1 are not "
        f'{{"_id", "text"}}; {folder}/queries.jsonl:1: line cut short at column 21 (Expecting \':\' delimiter at '
        "column 1))",
        "q2",
    ]


@pytest.mark.parametrize("split, missing", [("test", "queries.jsonl"), ("train", "qrels/train.tsv")])
def test_a_missing_file_is_one_line_naming_it(tmp_path, split, missing):
    folder = copy_of_beir(tmp_path)
    (folder / "queries.jsonl").unlink() if missing == "queries.jsonl" else None
    with pytest.raises(ConfigError, match=f"{folder}/{missing} not found") as refused:
        BeirTask(folder, split=split).prepare()
    assert "\n" not in str(refused.value)
    with pytest.raises(ConfigError, match="pass --data beir=FOLDER"):
        BeirTask().prepare()


def test_systems_show_as_many_documents_as_the_deepest_cutoff():
    task = BeirTask(BEIR, k="1,10,100")
    assert task.system_defaults() == {"top_n": 100} and task.scoring.metric_options == {
        "beir_retrieval": {"k": "1,10,100"}
    }


@pytest.fixture(scope="module")
def beir_index(tmp_path_factory):
    from ragbench.testing import build_index

    folder = tmp_path_factory.mktemp("beir") / "index"
    build_index(BEIR / "corpus.jsonl", folder, "bm25", progress=False, registry=installed_registry())
    return folder


def vanilla_run(tmp_path, beir_index, **options) -> dict:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"response": "Ansgar Pell"}]))
    return run(
        tmp_path,
        tasks=["beir"],
        system="vanilla",
        model=f"scripted:{rules}",
        data={"beir": str(BEIR)},
        retriever="bm25",
        retriever_args={"index": str(beir_index)},
        **options,
    )


def test_a_run_scores_the_index_ranking_and_counts_a_short_list(tmp_path, beir_index):
    deep = vanilla_run(tmp_path, beir_index, task_args={"beir.k": "1,3,5,10,100"})
    assert deep["details"]["beir"]["recall_at_100"]["value"] == 1.0
    assert deep["details"]["beir"]["ndcg_at_1"]["value"] == 0.75  # q1 shows d1 (grade 1) before d5 (grade 2)
    assert "counted" not in deep  # five documents: the whole corpus was shown
    short = vanilla_run(tmp_path, beir_index, name="short", system_args={"top_n": 1})
    assert short["details"]["beir"]["recall_at_10"]["value"] == 0.75
    assert short["counted"]["beir"]["beir_retrieval"]["shown_short"]["count"] == 2


def test_a_qrels_file_without_its_header_is_one_line_not_a_lost_judgment(tmp_path):
    folder = copy_of_beir(tmp_path)
    (folder / "qrels" / "test.tsv").write_text("q1\td1\t1\nq1\td5\t2\nq2\td2\t1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"test.tsv: line 1 is a judgment \(q1, d1, 1\), not BEIR") as refused:
        list(BeirTask(folder).examples())
    assert "\n" not in str(refused.value)


def test_a_stray_quote_that_swallows_later_rows_is_one_line_naming_where(tmp_path):
    folder = copy_of_beir(tmp_path, 'q2\td2\t1\nq1\t"d1\t1\nq1\td5\t2\nq9\td1\t1\n')
    with pytest.raises(ConfigError, match="test.tsv:3: a double quote opens a field that runs on to line 5") as refused:
        list(BeirTask(folder).examples())
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "row, message",
    [
        (b"q1\td\xff1\t1\n", "test.tsv:3: not UTF-8 (byte 0xff at column 5); save the file as UTF-8"),
        (b"q1\t" + b"d" * 200_000 + b"\t1\n", "test.tsv:3: cannot read the row (field larger than field limit"),
    ],
    ids=["not_utf8", "over_csv_field_limit"],
)
def test_a_qrels_row_that_cannot_be_read_is_one_line_naming_the_file_and_line(tmp_path, row, message):
    folder = copy_of_beir(tmp_path)
    (folder / "qrels" / "test.tsv").write_bytes(b"query-id\tcorpus-id\tscore\nq2\td2\t1\n" + row)
    with pytest.raises(ConfigError, match=re.escape(message)) as refused:
        list(BeirTask(folder).examples())
    assert "\n" not in str(refused.value)


def test_predictions_with_docs_null_or_malformed_fail_instead_of_scoring(tmp_path):
    from conftest import write_jsonl
    from support.helpers import cli_here

    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [{"id": "q1", "output": "x", "docs": None}, {"id": "q2", "output": "x", "docs": ["d2", "d4"]}],
    )
    result = cli_here(
        "score",
        "--task",
        "beir",
        "--data",
        str(BEIR),
        "--predictions",
        str(predictions),
        "--no-progress",
        "--output",
        str(tmp_path / "s"),
    )
    results = json.loads((tmp_path / "s" / "results.json").read_text())
    assert results["system_reports"]["beir"]["errors"] == [
        f'{predictions}:2 field \'docs\': expected a list of documents {{"id", "title", "text"}}, each with its text'
    ]
    assert results["counts"]["beir"] == task_counts(
        2, 1, failed=1, metric_failures=1
    )  # q1: docs not known, not none shown
    assert result.returncode == 1
