"""Malformed inputs against every command: the user sees one error line (exit 2) or a run whose bad
records are counted (exit 1), never a Python traceback, never a silent pass, never a lost finished example.

Data files (bad bytes, cut lines, truncated archives, wrong JSON shapes, huge records, empty files),
predictions files, option values, run folders and corpora go through `run`, `score`, `compare`,
`reproduce`, `--replay` and `index build` via click's CliRunner (in-process: an exception escaping the
command is a traceback the user would see). Only the user-visible contract is asserted, so it holds
whichever layer (pre-flight or reader) catches a problem.
"""

from __future__ import annotations

import bz2
import io
import json
import random
import shutil
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import write_jsonl
from ragbench.testing import cli
from support.crag_helpers import crag_record, tokenizer_dir
from support.helpers import cli_run_args, score_args, task_run_args

GOOD = 4  # well-formed records in each partly broken file


def popqa_record(i: int) -> dict:
    return {
        "question": f"Who is person {i}?",
        "answers": [f"answer{i}"],
        "id": 100 + i,
        "prop": "occupation",
        "ctxs": [{"id": str(i), "title": f"Title {i}", "text": f"Person {i} is answer{i}.", "score": "1.5"}],
    }


def invoke(*args: str):
    result = CliRunner().invoke(cli, [*args], catch_exceptions=True)
    return result


def one_line_error(result) -> bool:
    """Exit 2 and one `ragbench: error:` line per problem (the pre-flight lists every problem at once)."""
    lines = result.stderr.strip().splitlines()
    return result.exit_code == 2 and bool(lines) and all(line.startswith("ragbench: error:") for line in lines)


def usage_error(result) -> bool:
    """click's own refusal of a malformed option value (Usage / Try / Error lines), exit 2."""
    return result.exit_code == 2 and "Error: " in result.stderr and "Traceback" not in result.stderr


def assert_contract(result, output: Path | None = None, good: int | None = None) -> None:
    """One error line, or a run whose bad input is counted and whose good records are all scored."""
    shown = result.output + (result.stderr or "")
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"traceback: {result.exception!r}\n{shown}"
    )
    assert "Traceback" not in shown
    if result.exit_code == 2:
        assert one_line_error(result) or usage_error(result), shown
        return  # (that a refused run leaves no folder behind is the pre-flight's own test)
    if good is not None and result.exit_code == 0:  # nothing wrong with the input: every record scored
        results = json.loads((output / "results.json").read_text())
        assert results["complete"] and sum(c["scored"] for c in results["counts"].values()) == good
        return
    assert result.exit_code == 1, f"silent pass (exit {result.exit_code}):\n{shown}"
    assert output is not None and (output / "results.json").is_file(), shown
    results = json.loads((output / "results.json").read_text())
    problems = sum(
        c["bad_records"] + c["failed"] + c.get("missing", 0) + (c["records"] == 0) for c in results["counts"].values()
    )
    problems += sum(len(r.get("errors") or []) for r in (results.get("system_reports") or {}).values())
    assert problems, f"exit 1 with nothing counted: {results['counts']}"
    assert "incomplete run (" in result.stderr
    if good is not None:
        assert sum(c["scored"] for c in results["counts"].values()) == good, results["counts"]


# --- data files ------------------------------------------------------------------------------------


def lines_of(records) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


GOOD_LINES = lines_of(popqa_record(i) for i in range(GOOD))
JSONL_CASES = {
    "non_utf8_byte": (GOOD_LINES + b'{"question": "caf\xe9", "answers": ["x"], "id": 9, "ctxs": []}\n', GOOD),
    "cut_last_line": (GOOD_LINES + lines_of([popqa_record(9)])[:40], GOOD),
    "wrong_shapes": (GOOD_LINES + b'[1, 2]\n"text"\n42\nnull\n{"question": 5, "answers": "x", "id": 7}\n', GOOD),
    "huge_record": (GOOD_LINES + lines_of([{**popqa_record(8), "question": "x" * 3_000_000}]), GOOD + 1),
    "a_json_array_not_jsonl": (json.dumps([popqa_record(i) for i in range(3)], indent=1).encode(), 0),
    "random_bytes": (random.Random(0).randbytes(3000), 0),
    "empty": (b"", 0),
    "blank_lines_only": (b"\n \n\t\n", 0),
    "utf16": ("\n".join(json.dumps(popqa_record(i)) for i in range(2)).encode("utf-16"), 0),
}


@pytest.mark.parametrize("case", sorted(JSONL_CASES))
def test_run_on_a_malformed_jsonl_data_file(tmp_path, case):
    content, good = JSONL_CASES[case]
    data = tmp_path / "popqa.jsonl"
    data.write_bytes(content)
    output = tmp_path / "run"
    result = invoke(
        *task_run_args("popqa", data, "closed_book", "scripted:echo"),
        "--output",
        str(output),
        "--no-progress",
        "--bootstrap-iters",
        "10",
    )
    assert_contract(result, output, good)
    if case == "huge_record":
        assert result.exit_code == 0  # large, not malformed


@pytest.mark.parametrize("case", ["missing", "folder", "truncated_json", "object_not_array", "bad_bytes"])
def test_run_on_a_malformed_alce_json_file(tmp_path, case):
    data = tmp_path / "asqa.json"
    text = json.dumps([{"qa_pairs": [], "answer": "x", "question": "q?", "docs": []}])
    if case == "folder":
        data.mkdir()
    elif case == "truncated_json":
        data.write_text(text[: len(text) // 2])
    elif case == "object_not_array":
        data.write_text(json.dumps({"question": "q"}))
    elif case == "bad_bytes":
        data.write_bytes(text.encode()[:20] + b"\xff\xfe" + text.encode()[20:])
    output = tmp_path / "run"
    result = invoke(
        *task_run_args("asqa", data, "closed_book", "scripted:echo"),
        "--output",
        str(output),
        "--no-progress",
        "--metrics",
        "str_em",
    )
    assert_contract(result, output)


def crag_bz2(tmp_path: Path, n: int = 3) -> Path:
    path = tmp_path / "crag_task_1_and_2_dev_v4.jsonl.bz2"
    noise = random.Random(1)
    records = [
        crag_record(i, split=1, search_results=[{"page_result": noise.randbytes(400_000).hex()}]) for i in range(n)
    ]
    path.write_bytes(bz2.compress(lines_of(records)))
    return path


def crag_tar(tmp_path: Path, records: list[dict]) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:bz2") as archive:
        payload = lines_of(records)
        member = tarfile.TarInfo("crag_task_3_dev_v4/part.jsonl")
        member.size = len(payload)
        archive.addfile(member, io.BytesIO(payload))
    path = tmp_path / "crag_task_3_dev_v4.tar.bz2"
    path.write_bytes(buffer.getvalue())
    return path


def crag_score(tmp_path: Path, task: str, data: Path, ids: list[str]):
    predictions = write_jsonl(tmp_path / "pred.jsonl", [{"id": i, "output": "I don't know"} for i in ids])
    output = tmp_path / "run"
    args = [
        "score",
        "--task",
        task,
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        "--task-arg",
        f"tokenizer={tokenizer_dir()}",
        "--output",
        str(output),
        "--no-progress",
        "--bootstrap-iters",
        "10",
    ]
    if task == "crag_t3":
        args += ["--task-arg", "kg=false"]
    return invoke(*args), output


@pytest.mark.parametrize("case", ["truncated_bz2", "not_bz2", "plain_jsonl_named_bz2"])
def test_score_on_a_broken_crag_task_1_2_file(tmp_path, case):
    data = crag_bz2(tmp_path)
    whole = data.read_bytes()
    if case == "truncated_bz2":
        data.write_bytes(whole[: int(len(whole) * 0.6)])
    elif case == "not_bz2":
        data.write_bytes(random.Random(2).randbytes(5000))
    else:
        data.write_bytes(lines_of([crag_record(0, split=1)]))
    result, output = crag_score(tmp_path, "crag_t1", data, [f"id-{i}" for i in range(3)])
    assert_contract(result, output)


@pytest.mark.parametrize("case", ["truncated_archive", "plain_jsonl", "random_bytes"])
def test_score_on_a_broken_crag_task_3_archive(tmp_path, case):
    if case == "plain_jsonl":
        data = write_jsonl(tmp_path / "crag_t3.jsonl", [crag_record(0, split=1)])
    else:
        data = crag_tar(tmp_path, [crag_record(i, split=1) for i in range(3)])
        whole = data.read_bytes()
        data.write_bytes(whole[: len(whole) // 2] if case == "truncated_archive" else random.Random(3).randbytes(4000))
    result, output = crag_score(tmp_path, "crag_t3", data, [f"id-{i}" for i in range(3)])
    assert_contract(result, output)


# --- predictions files -----------------------------------------------------------------------------

PREDICTION_CASES = {
    "non_utf8": b'{"id": 100, "output": "answer0"}\n{"id": 101, "output": "caf\xe9"}\n',
    "cut_line": b'{"id": 100, "output": "answer0"}\n{"id": 101, "outp',
    "wrong_shapes": b'{"id": 100, "output": "answer0"}\n[1]\n{"id": [1], "output": 3}\n{"output": "x"}\n',
    "duplicate_and_unknown_ids": b'{"id": 100, "output": "a"}\n{"id": 100, "output": "b"}\n{"id": 999, "output": "c"}\n',
    "empty": b"",
    "random_bytes": random.Random(4).randbytes(2000),
    "huge_output": json.dumps({"id": 100, "output": "y " * 2_000_000}).encode() + b"\n",
}


@pytest.mark.parametrize("case", sorted(PREDICTION_CASES))
def test_score_on_a_malformed_predictions_file(tmp_path, case):
    data = write_jsonl(tmp_path / "popqa.jsonl", [popqa_record(i) for i in range(3)])
    predictions = tmp_path / "pred.jsonl"
    predictions.write_bytes(PREDICTION_CASES[case])
    output = tmp_path / "run"
    result = invoke(
        *score_args("popqa", data, predictions),
        "--output",
        str(output),
        "--no-progress",
        "--bootstrap-iters",
        "10",
    )
    assert_contract(result, output)


def test_score_with_a_predictions_path_that_is_missing_or_a_folder(tmp_path):
    data = write_jsonl(tmp_path / "popqa.jsonl", [popqa_record(0)])
    for predictions in (tmp_path / "nope.jsonl", tmp_path):
        result = invoke(
            *score_args("popqa", data, predictions),
            "--output",
            str(tmp_path / "run"),
            "--no-progress",
        )
        assert_contract(result, tmp_path / "run")
        assert result.exit_code == 2


# --- option values ---------------------------------------------------------------------------------

OPTION_CASES = [
    ["--limit", "-1"],
    ["--limit", "abc"],
    ["--seed", "x"],
    ["--max-inflight", "0"],
    ["--bootstrap-iters", "-5"],
    ["--system-arg", "top_n=abc"],
    ["--system-arg", "=1"],
    ["--task-arg", "nope=1"],
    ["--metric-arg", "match.x=1"],
    ["--metric-arg", "nodot=1"],
    ["--model-arg", "junk"],
    ["--model", "scripted:/no/such/rules.json"],
    ["--model", ":"],
    ["--metrics", "nosuchmetric"],
    ["--tasks", ","],
    ["--judge-arg", "0.x=1"],
    ["--role-model", "x"],
    ["--retriever", "nosuch"],
    ["--data", "popqa"],
]


@pytest.mark.parametrize("extra", OPTION_CASES, ids=lambda a: " ".join(a))
def test_run_with_a_bad_option_value(tmp_path, extra):
    base = {"--tasks": "demo", "--model": "scripted:echo"}
    args = [x for key, value in base.items() if key not in extra for x in (key, value)]
    output = tmp_path / "run"
    result = invoke(*args, *extra, "--output", str(output), "--no-progress")
    assert_contract(result, output)
    assert result.exit_code == 2, result.output


# --- run folders: compare, --replay ------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("finished") / "run"
    result = invoke(
        *cli_run_args("scripted:echo"),
        "--limit",
        "4",
        "--output",
        str(folder),
        "--no-progress",
        "--bootstrap-iters",
        "10",
    )
    assert result.exit_code in (0, 1), result.output
    return folder


RUN_DAMAGE = {
    "results_not_json": lambda d: (d / "results.json").write_text('{"results": '),
    "results_a_list": lambda d: (d / "results.json").write_text("[1, 2]"),
    "results_bad_bytes": lambda d: (d / "results.json").write_bytes(b'{"results": {"demo": "\xff"}}'),
    "sample_line_cut": lambda d: (d / "samples" / "demo.jsonl").write_text(
        (d / "samples" / "demo.jsonl").read_text()[:-30]
    ),
    "samples_gone": lambda d: shutil.rmtree(d / "samples"),
    "run_json_not_json": lambda d: (d / "run.json").write_text("{"),
    "calls_cut": lambda d: (d / "calls" / "llm.jsonl").write_text((d / "calls" / "llm.jsonl").read_text()[:-25]),
}


@pytest.mark.parametrize("damage", sorted(RUN_DAMAGE))
def test_compare_and_replay_of_a_damaged_run_folder(tmp_path, finished_run, damage):
    damaged = tmp_path / "damaged"
    shutil.copytree(finished_run, damaged)
    RUN_DAMAGE[damage](damaged)
    compared = invoke("compare", str(finished_run), str(damaged))
    shown = compared.output + compared.stderr
    assert compared.exception is None or isinstance(compared.exception, SystemExit), f"{compared.exception!r}"
    assert "Traceback" not in shown
    assert (
        compared.exit_code == 2
        and one_line_error(compared)
        or (compared.exit_code == 0 and damage in ("run_json_not_json", "calls_cut"))
    ), shown
    output = tmp_path / "replayed"
    replayed = invoke("--replay", str(damaged), "--output", str(output), "--no-progress")
    assert replayed.exception is None or isinstance(replayed.exception, SystemExit), f"{replayed.exception!r}"
    if replayed.exit_code == 0:  # the replay needs only run.json and calls/: damage elsewhere does not matter
        assert damage not in ("run_json_not_json", "calls_cut")
    else:
        assert_contract(replayed, output)


def test_compare_of_folders_that_are_not_runs(tmp_path, finished_run):
    (tmp_path / "file.txt").write_text("x")
    for other in (tmp_path / "nope", tmp_path / "file.txt", tmp_path):
        result = invoke("compare", str(finished_run), str(other))
        assert_contract(result)
        assert result.exit_code == 2


def test_replay_of_something_that_is_not_a_run(tmp_path):
    (tmp_path / "file.txt").write_text("x")
    for given in (tmp_path / "nope", tmp_path / "file.txt", tmp_path):
        result = invoke("--replay", str(given), "--output", str(tmp_path / "out"), "--no-progress")
        assert_contract(result, tmp_path / "out")
        assert result.exit_code == 2


# --- reproduce -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [["nosuch-row"], ["selfrag-popqa", "--data", "popqa=/no/such.jsonl"], ["selfrag-popqa", "--limit", "x"]],
    ids=lambda a: " ".join(a),
)
def test_reproduce_with_bad_input(tmp_path, args):
    result = invoke("reproduce", *args, "--output", str(tmp_path / "run"), "--no-progress")
    assert_contract(result, tmp_path / "run")
    assert result.exit_code == 2


# --- index build ----------------------------------------------------------------------------------

CORPUS_CASES = {
    "non_utf8.jsonl": b'{"id": "1", "title": "t", "contents": "ok"}\n{"id": "2", "title": "t", "contents": "caf\xe9"}\n',
    "cut.jsonl": b'{"id": "1", "title": "t", "contents": "ok"}\n{"id": "2", "tit',
    "wrong_shapes.jsonl": b'[1]\n{"title": 3}\n',
    "empty.jsonl": b"",
    "empty.tsv": b"",
    "header_only.tsv": b"id\ttext\ttitle\n",
    "bad_bytes.tsv": b"id\ttext\ttitle\n1\tcaf\xe9\tt\n",
    "ragged.tsv": b"id\ttext\ttitle\n1\tonly two\n",
}


@pytest.mark.parametrize("name", sorted(CORPUS_CASES))
def test_index_build_on_a_malformed_corpus(tmp_path, name):
    corpus = tmp_path / name
    corpus.write_bytes(CORPUS_CASES[name])
    out = tmp_path / "index"
    result = invoke(
        "index", "build", "--corpus", str(corpus), "--retriever", "bm25", "--out", str(out), "--no-progress"
    )
    shown = result.output + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), f"{result.exception!r}\n{shown}"
    assert "Traceback" not in shown
    if result.exit_code == 1:  # built from the good passages: every bad one reported and counted
        assert "bad record skipped" in result.stderr and "bad record(s) skipped" in result.stderr, shown
        assert (out / "manifest.json").is_file()
    else:
        assert one_line_error(result), shown
        assert not out.exists()
