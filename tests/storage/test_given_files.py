"""Files the user gives are opened in one place (ragbench._storage.given_files): a FIFO, a device or a folder where
`score --predictions` or a report task reads a file is refused at once in one line naming it and the fix, never
waited on (each test has a timeout: a regression fails, it does not hang); a damaged file (bytes that are not UTF-8,
JSON nested past reading, a line cut short, random bytes) is said in lines naming the file, the line and the cause,
never "a bug of the plugin", never a traceback."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench.api import ConfigError, Preflight, RecordError
from ragbench.api.data import given_text_lines, iter_jsonl
from ragbench.metrics.drb_fact.pages import read_pages
from ragbench.tasks.argue.task import ArgueReport
from ragbench.tasks.deep_research_bench.task import DeepResearchBench
from ragbench.tasks.dragun.task import DragunReport
from ragbench.tasks.trec_rag.task import TrecRagTask
from support.helpers import cli_here, score_args
from support.matrix_fixtures import DRAGUN, TASK_DATA, TREC_RAG

pytestmark = pytest.mark.timeout(120)

DEEP = "[" * 100_000 + "]" * 100_000  # round 6's C13: past any JSON reader's nesting
QRELS = TREC_RAG / "qrels.rag24.test-umbrela-all.txt"
REPORT_FILE = {  # the file of a predictions folder each report task reads
    "argue_report": "run.jsonl",
    "trec_rag24": "run.jsonl",
    "deep_research_bench": "model.jsonl",
    "dragun_report": "sample-run",
}


def scoring(task: str, folder: Path) -> tuple[list[str], Path]:
    """The command line's start scoring `task`'s predictions in folder/preds (made, holding the organizer runs for
    DRAGUN), and that folder."""
    predictions = folder / "preds"
    predictions.mkdir()
    if task == "dragun_report":
        data = DRAGUN / "data"
        for run in ("organizer-gpt-oss-t2", "dragun-organizers-starter-kit-task-2"):
            shutil.copy(data / "runs" / "report_generation_runs" / run, predictions / run)
        return [*score_args(task, data, predictions)], predictions
    data, task_args = TASK_DATA[task](folder)
    extra = [arg for name, value in task_args.items() for arg in ("--task-arg", f"{task}.{name}={value}")]
    return [*score_args(task, Path(data), predictions), *extra], predictions


def refused(args: list[str], out: Path) -> list[str]:
    """The error lines of `args` (exit 2); none blames a plugin, no traceback."""
    done = cli_here(*args, "--output", str(out))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "bug of the plugin" not in done.stderr, done.stderr
    return [line for line in done.stderr.splitlines() if line.startswith("ragbench: error")]


@pytest.mark.parametrize("task", sorted(REPORT_FILE))
@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_fifo_device_or_folder_as_a_report_file_is_refused_in_one_line_naming_it(tmp_path, task, kind):
    args, predictions = scoring(task, tmp_path)
    where = predictions / REPORT_FILE[task]
    if kind == "fifo":
        os.mkfifo(where)
    elif kind == "device":
        where.symlink_to("/dev/zero")  # never ends
    else:
        where.mkdir()
        (where / "x.jsonl").write_text("{}\n")
    lines = refused(args, tmp_path / "run")
    if kind == "folder" and task == "dragun_report":  # a folder is no run file: none found, said so
        assert any("expected one DRAGUN Task 2 run file" in line for line in lines), lines
        return
    what = {"fifo": "a FIFO (named pipe) is there", "device": "a character device is there", "folder": "a folder"}
    [line] = [line for line in lines if str(where) in line]
    assert what[kind] in line and "not a file" in line and "give " in line, line


@pytest.mark.parametrize(
    ("damage", "cause"),
    [
        (b'{"metadata": {"topic_id": "v1"}, "responses": [{"text": "caf\xe9"}]}\n', "not UTF-8 (byte 0xe9"),
        (DEEP.encode() + b"\n", "nested too deeply to parse"),
    ],
    ids=["undecodable bytes", "nested 100,000 deep"],
)
def test_a_damaged_report_line_is_named_with_its_file_line_and_cause(tmp_path, damage, cause):
    args, predictions = scoring("argue_report", tmp_path)
    (predictions / "run.jsonl").write_bytes(b"\n" + damage)
    done = cli_here(*args, "--judge", "scripted:support.argue_fake_judge:answer", "--output", str(tmp_path / "run"))
    assert "Traceback" not in done.stderr and "bug of the plugin" not in done.stderr, done.stderr
    said = done.stdout + done.stderr + "".join(p.read_text() for p in (tmp_path / "run").rglob("*.json"))
    assert f"{predictions / 'run.jsonl'}:2: {cause}" in said


def test_a_fifo_as_deepresearch_bench_s_model_file_is_not_blamed_on_the_plugin(tmp_path):
    args, predictions = scoring("deep_research_bench", tmp_path)
    os.mkfifo(predictions / "model.jsonl")
    [line] = refused(args, tmp_path / "run")[:1]
    assert f"{predictions / 'model.jsonl'}: a FIFO (named pipe) is there, not a file" in line


def report_readers(folder: Path) -> dict[str, tuple[object, str]]:
    """Each report task made on its sample data, and the name of the report file its predictions folder holds."""
    argue, _ = TASK_DATA["argue_report"](folder)
    drb, _ = TASK_DATA["deep_research_bench"](folder)
    return {
        "argue_report": (ArgueReport(argue), "run.jsonl"),
        "deep_research_bench": (DeepResearchBench(drb), "model.jsonl"),
        "trec_rag24": (TrecRagTask(str(TREC_RAG / "topics.rag24.test.txt"), qrels=str(QRELS)), "run.jsonl"),
        "dragun_report": (DragunReport(str(DRAGUN / "data")), "sample-run"),
    }


GOOD_LINE = json.dumps({"metadata": {"topic_id": "v1", "run_id": "r"}, "responses": [{"text": "A claim."}]})
DAMAGED = st.one_of(
    st.binary(max_size=300),  # random bytes
    st.integers(1, 3000).map(lambda depth: ("[" * depth + "]" * depth).encode()),  # deep nesting
    st.integers(0, len(GOOD_LINE) - 1).map(lambda cut: GOOD_LINE[:cut].encode()),  # a line cut short
)


@pytest.fixture(scope="module")
def readers(tmp_path_factory):
    return report_readers(tmp_path_factory.mktemp("data"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task=st.sampled_from(sorted(REPORT_FILE)), damage=DAMAGED, good_first=st.booleans())
def test_a_damaged_report_file_is_read_into_records_or_lines_naming_it_never_an_exception(
    readers, tmp_path_factory, task, damage, good_first
):
    made, name = readers[task]
    folder = tmp_path_factory.mktemp("preds")
    path = folder / name
    path.write_bytes((GOOD_LINE.encode() + b"\n" if good_first else b"") + damage)
    try:
        items = list(made.prediction_records(folder))  # type: ignore[attr-defined]
    except ConfigError as exc:  # the file as a whole refused: one line naming it
        assert str(path) in str(exc) and "\n" not in str(exc)
        return
    for _, item in items:
        if isinstance(item, RecordError):
            assert str(item).startswith(f"{path}:") and "\n" not in str(item), item


def test_a_plugins_check_meeting_a_fifo_names_it_and_blames_no_plugin(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    check = Preflight()
    with check.step("task x"):
        iter_jsonl(fifo).__next__()  # a file ragbench's reader refuses (NotAFileError), not through open_given
    assert check.problems == [
        f"task x: {fifo}: a FIFO (named pipe) is there, not a file; remove it, or put the file there"
    ]


# any character but a text file's line ends (LF, CR), the other breaks `str.splitlines` knows drawn often
LINE = st.text(
    st.one_of(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
        st.sampled_from("\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
    )
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(LINE, st.sampled_from(["", " ", "\t "])), max_size=12))
def test_the_numbered_lines_of_a_given_file_are_its_non_blank_ones_by_their_line_numbers(tmp_path, lines):
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    numbered = given_text_lines(path, "records")
    assert numbered == [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]


def test_a_json_record_holding_a_unicode_line_break_is_one_numbered_line(tmp_path):
    """U+2028, U+2029 and U+0085 stand unescaped in a JSON string (json.dumps(ensure_ascii=False) writes them so):
    a file of records holding one is read line for line as `iter_jsonl` reads it, not refused as a line cut in two
    (drb_fact's pages file, a scraped page's text)."""
    page = {"url": "https://a.example", "title": "T", "content": "one\u2028two\u2029three\x85four"}
    failed = {"url": "https://b.example", "status": 404}
    path = tmp_path / "pages.jsonl"
    path.write_text(json.dumps(page, ensure_ascii=False) + "\r\n\n" + json.dumps(failed) + "\n", encoding="utf-8")
    numbered = given_text_lines(path, "pages")
    assert [(number, json.loads(line)) for number, line in numbered] == [(1, page), (3, failed)]
    assert [(index + 1, record) for index, record in iter_jsonl(path)] == [(1, page), (3, failed)]
    pages = read_pages(path)
    assert pages["https://a.example"].read and pages["https://a.example"].text.endswith(page["content"])
    assert not pages["https://b.example"].read


def test_a_fifo_given_for_numbered_lines_is_refused_naming_the_option(tmp_path):
    fifo = tmp_path / "labels.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match=f"^metric x: labels {fifo}: a FIFO"):
        given_text_lines(fifo, "labels (JSONL)", "metric x: labels")
