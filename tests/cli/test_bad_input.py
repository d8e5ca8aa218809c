"""Bad records, bad predictions and failing engines are recorded and counted; the run goes on."""

from __future__ import annotations

import json

import pytest

from conftest import write_jsonl
from ragbench.api import ConfigError
from support.helpers import cli_here, run, samples, score_args, task_counts


@pytest.fixture
def data_with_bad_lines(tmp_path, popqa_records):
    lines = [
        popqa_records[0],
        "{not json",
        popqa_records[1],
        {"answers": ["x"], "ctxs": []},
        popqa_records[2],
        {"question": "q", "answers": "not a list", "ctxs": []},
    ]
    return write_jsonl(tmp_path / "popqa.jsonl", lines)


def test_malformed_line_and_missing_field_are_recorded_with_file_line_and_field(tmp_path, data_with_bad_lines):
    results = run(tmp_path, tasks=["popqa"], model="scripted:echo", data={"popqa": str(data_with_bad_lines)})
    assert results["counts"]["popqa"] == task_counts(6, 3, bad_records=3)
    assert results["complete"] is False
    errors = [s["error"] for s in samples(tmp_path / "run", "popqa") if s["error"]]
    assert errors[0].startswith(f"bad record: {data_with_bad_lines}:2: not valid JSON")
    assert errors[1] == f"bad record: {data_with_bad_lines}:4 field 'question': missing field"
    assert errors[2] == f"bad record: {data_with_bad_lines}:6 field 'answers': expected list, got str"
    assert results["details"]["popqa"]["match"]["n"] == 3


def test_cli_exit_code_says_the_run_was_incomplete(tmp_path, data_with_bad_lines):
    result = cli_here(
        "--tasks",
        "popqa",
        "--model",
        "scripted:echo",
        "--data",
        f"popqa={data_with_bad_lines}",
        "--no-progress",
        "--output",
        str(tmp_path / "r"),
    )
    assert result.returncode == 1
    assert (
        "incomplete run (popqa: 3 bad record(s) in the data; fix the input file(s) named above and run again)"
        in result.stderr
    )
    assert (tmp_path / "r" / "results.json").exists()


def test_engine_that_keeps_failing_fails_its_examples_not_the_run(tmp_path, popqa_records):
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records)
    replay = write_jsonl(
        tmp_path / "calls.jsonl",
        [
            {"prompt": f"### Instruction:\nWho is person {i}?\n\n### Response:\n", "response": f"answer{i}"}
            for i in range(3)
        ]
        + [{"prompt": "### Instruction:\nWho is person 3?\n\n### Response:\n", "error": "HTTP 503 after 6 attempts"}],
    )
    results = run(tmp_path, tasks=["popqa"], system="closed_book", model=f"replay:{replay}", data={"popqa": str(data)})
    assert results["counts"]["popqa"] == task_counts(6, 3, failed=3)
    assert results["results"]["popqa"]["match"] == 1.0
    recorded = samples(tmp_path / "run", "popqa")
    assert "replayed error: HTTP 503" in recorded[3]["error"]
    assert "replay miss" in recorded[4]["error"] and "nearest recorded request" in recorded[4]["error"]
    assert recorded[3]["trace"][0]["error"]  # the failed call is in the trace


def test_a_metric_that_raises_is_recorded_and_the_others_still_score(tmp_path, popqa_records, monkeypatch):
    from ragbench.metrics.match import TokenF1

    monkeypatch.setattr(TokenF1, "score", lambda self, e, p, ctx=None: 1 / 0)
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records)
    results = run(tmp_path, tasks=["popqa"], model="scripted:echo", data={"popqa": str(data)})
    first = samples(tmp_path / "run", "popqa")[0]
    assert first["score_errors"] == {"f1": "ZeroDivisionError: division by zero"}
    assert results["details"]["popqa"]["f1"]["n_errors"] == 6 and results["results"]["popqa"]["match"] == 0.0


def test_predictions_file_problems_are_reported_and_good_lines_scored(tmp_path, popqa_records):
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records[:3])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"id": 100, "output": " answer0\n\nignored"},
            "{broken",
            {"id": "101"},
            {"id": "999", "output": "x"},
            {"id": "100", "output": "dup"},
        ],
    )
    result = cli_here(
        *score_args("popqa", data, predictions),
        "--no-progress",
        "--output",
        str(tmp_path / "s"),
    )
    assert result.returncode == 1
    results = json.loads((tmp_path / "s" / "results.json").read_text())
    errors = results["system_reports"]["popqa"]["errors"]
    assert errors == [
        f"{predictions}:2: not valid JSON at column 2: Expecting property name enclosed in double quotes",
        f"{predictions}:3 field 'output': missing field",
        f"{predictions}:5 field 'id': duplicate id '100'",
        f"{predictions}: unknown id '999' (not in the task's data)",
    ]
    assert results["counts"]["popqa"] == task_counts(3, 1, failed=2)
    assert results["results"]["popqa"]["match"] == 1.0
    assert (
        samples(tmp_path / "s", "popqa")[1]["error"]
        == f"UnreadablePrediction: {predictions}:3 field 'output': missing field"
    )
    assert "unknown id '999'" in result.stderr


@pytest.mark.parametrize(
    "output,kind",
    [(5, "a number"), (None, "null"), (["a"], "a list"), ({"text": "a"}, "an object"), (True, "a boolean")],
)
def test_an_output_that_is_not_a_string_fails_its_example_saying_so(tmp_path, popqa_records, output, kind):
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records[:2])
    predictions = write_jsonl(tmp_path / "pred.jsonl", [{"id": 100, "output": output}, {"id": 101, "output": "x"}])
    result = cli_here(
        *score_args("popqa", data, predictions),
        "--no-progress",
        "--output",
        str(tmp_path / "s"),
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    problem = (
        f"{predictions}:1 field 'output': the output of id '100' is {kind}, expected a string (the raw model text)"
    )
    assert samples(tmp_path / "s", "popqa")[0]["error"] == f"UnreadablePrediction: {problem}"
    assert "has no prediction" not in result.stderr and problem in result.stderr


def test_predictions_whose_docs_cannot_be_read_are_reported_not_scored_as_other_documents(tmp_path):
    """`docs` as text, text-less documents or unreadable scores are bad lines: scored, they were empty
    passages, and a claim checked against them a wrong number. `docs` null is as absent: which documents
    were shown is not known (retrieval metrics fail on it, counted; tests/tasks/beir/test_beir_task.py)."""
    from ragbench.plugins.recorded.system import Recorded

    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"id": 1, "output": "a", "docs": None},
            {"id": 2, "output": "a", "docs": "a passage"},
            {"id": 3, "output": "a", "docs": [{"id": "d", "title": "t"}]},
            {"id": 4, "output": "a", "docs": [5]},
            {"id": 5, "output": "a", "docs": [{"text": "x", "score": "high"}]},
            {"id": 6, "output": "a", "docs": [{"id": "d", "title": "t", "text": "x", "score": 0.5}]},
            {"id": 7, "output": "a"},
        ],
    )
    system = Recorded(str(predictions))
    assert [error.split(" field 'docs': ")[0] for error in system.file_errors] == [
        f"{predictions}:{n}" for n in range(2, 6)
    ]
    assert sorted(system.outputs) == ["1", "6", "7"]
    assert [d.text for d in system._docs["6"]] == ["x"] and system._docs["7"] is None and system._docs["1"] is None


def test_missing_data_file_offline_names_the_file_and_where_to_put_it(tmp_path, monkeypatch):
    import urllib.error

    def no_network(url, timeout):
        raise urllib.error.URLError(f"no network to reach {url}")

    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr("urllib.request.urlopen", no_network)  # ragbench._storage.datafiles imports it to download
    with pytest.raises(ConfigError) as error:
        run(tmp_path, tasks=["pubhealth"], model="scripted:echo")
    message = str(error.value)
    assert "health_claims_processed.jsonl" in message and "--data pubhealth=PATH" in message
    assert str(tmp_path / "data" / "health_claims_processed.jsonl") in message


@pytest.mark.parametrize(
    "args,expected",
    [
        (["--tasks", "popq"], "unknown task 'popq'; did you mean 'popqa'?"),
        (["--tasks", "demo", "--system", "vanila"], "unknown system 'vanila'; did you mean 'vanilla'?"),
        (["--tasks", "demo", "--model", "hff:x"], "unknown engine 'hff'; did you mean 'hf'?"),
        (["--tasks", "demo", "--model", "nocolon"], "is not of the form engine:model"),
        (
            ["--tasks", "demo", "--system-arg", "top_k=3"],
            "--system-arg top_k=3: system vanilla has no option 'top_k'; did you mean 'top_p' or 'top_n'? (accepted: "
            "top_n=<int >= 1, default 1>,",
        ),
        (
            ["--tasks", "demo", "--system-arg", "top_n=abc"],
            "--system-arg top_n=abc: system vanilla takes an integer >= 1 for top_n (top_n=<int >= 1, default 1>)",
        ),
        (
            ["--tasks", "demo", "--system-arg", "top_n=-3"],
            "--system-arg top_n=-3: system vanilla takes an integer >= 1 for top_n (top_n=<int >= 1, default 1>)",
        ),
        (
            ["--tasks", "demo", "--metric-arg", "match.nonsense=1"],
            "--metric-arg match.nonsense=1: metric match has no option 'nonsense' (it takes no options)",
        ),
        (["--tasks", "demo", "--system-arg", "oops"], "--system-arg 'oops': expected KEY=VALUE"),
        (["--tasks", "demo", "--system", "recorded"], "system recorded needs --system-arg path=<"),
        (["--tasks", "demo", "--task-arg", "nope=1"], "--task-arg nope=...: no selected task accepts 'nope'"),
        (
            ["--tasks", "demo", "--task-arg", "templat=alpaca"],
            "--task-arg templat=...: no selected task accepts 'templat'; did you mean 'template'?",
        ),
        (
            ["--tasks", "demo", "--task-arg", "dem.template=alpaca"],
            "--task-arg dem.template: task 'dem' is not among --tasks; did you mean 'demo'?",
        ),
        (
            ["--tasks", "demo", "--model-arg", "scrip=x"],
            "--model scripted:echo: unknown option(s) scrip; did you mean 'script'? (accepted:",
        ),
        (
            ["--tasks", "demo", "--task-arg", "template=x"],
            "template 'x' is not one of alpaca, llama_chat, open_instruct",
        ),
        (["--tasks", "demo", "--data", "popqa=x.jsonl"], "--data popqa=...: task 'popqa' is not among --tasks"),
        (["--tasks", "popqa", "--data", "popqa=/no/such.jsonl"], "--data popqa=/no/such.jsonl: no such file"),
        (["--tasks", "demo", "--model", "replay:/no/file.jsonl"], "replay file not found: /no/file.jsonl"),
    ],
)
def test_config_errors_are_one_clear_line(tmp_path, args, expected):
    model = [] if "--model" in args else ["--model", "scripted:echo"]
    result = cli_here(*args, *model, "--no-progress", "--output", str(tmp_path / "r"))
    assert result.returncode == 2
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_scoring_a_predictions_file_does_not_copy_it_into_the_config(tmp_path, popqa_records):
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records[:2])
    predictions = write_jsonl(tmp_path / "pred.jsonl", [{"id": 100, "output": "answer0"}, {"id": 101, "output": "x"}])
    results = run(
        tmp_path, tasks=["popqa"], system="recorded", system_args={"path": str(predictions)}, data={"popqa": str(data)}
    )
    assert results["config"]["system_config"]["popqa"] == {"path": str(predictions)}
    assert results["config"]["model"] is None and results["results"]["popqa"]["match"] == 0.5
