"""A lone surrogate ("\\ud800": a string JSON holds and UTF-8 cannot) in a question, a gold answer, an id, a meta
field or a model's answer: the run finishes, every file it writes is UTF-8 and reads back the same strings, and
the console prints it as its escape (never a UnicodeEncodeError)."""

from __future__ import annotations

import json
from pathlib import Path

from ragbench._storage.jsonl import json_text, open_append, read_records
from support import paths
from support.helpers import cli_here, cli_run_args, score_args

DEMO = paths.REPO / "tasks" / "selfrag" / "data" / "demo_qa.jsonl"
ANSWER = "the answer \udcff is"


def test_a_lone_surrogate_is_written_as_its_escape_and_reads_back_the_same(tmp_path):
    records = [{"id": "q\ud800", "meta": {"k\udfff": ["\udbff", "é \ud800 ü"]}}, {"id": 2, "text": "plain é"}]
    path = tmp_path / "samples.jsonl"
    with open_append(path) as handle:
        for record in records:
            handle.write(record)
    path.read_bytes().decode("utf-8")  # valid UTF-8
    assert read_records(path) == (records, [])
    assert json.loads(json_text(records, indent=2)) == records
    assert json_text({"text": "plain é"}) == '{"text": "plain é"}'  # everything else as before


def surrogate_data(folder: Path) -> tuple[Path, list[dict]]:
    records = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()[:4]]
    records[0]["question"] = "What \ud800 is the capital of France?"
    records[1]["answers"] = ["To\udcffkyo"]
    records[2]["s_wiki_title"] = "It\ud801aly"
    records[3]["id"], records[3]["prop"] = "id\udfff", "cap\udfffital"  # a slice label, in every table
    data = folder / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return data, records


def test_a_run_resume_and_compare_with_lone_surrogates_finish_and_keep_the_strings(tmp_path):
    data, records = surrogate_data(tmp_path)
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"response": ANSWER}]), encoding="utf-8")
    args = cli_run_args(f"scripted:{rules}", "--data", f"demo={data}", "--no-progress", "--output")
    first = cli_here(*args, str(tmp_path / "a"))
    assert first.returncode == 0, first.stderr
    assert "Traceback" not in first.stderr
    run = tmp_path / "a"
    for file in [*run.rglob("*.json"), *run.rglob("*.jsonl"), *run.rglob("*.md")]:
        file.read_bytes().decode("utf-8")  # every file it wrote is UTF-8
    samples, errors = read_records(run / "samples" / "demo.jsonl")
    assert not errors and [s.get("error") for s in samples] == [None] * 4
    assert [s["question"] for s in samples] == [r["question"] for r in records]
    assert samples[1]["gold"]["answers"] == ["To\udcffkyo"]
    assert samples[2]["meta"]["s_wiki_title"] == "It\ud801aly"
    assert samples[3]["id"] == "id\udfff" and samples[3]["meta"]["prop"] == "cap\udfffital"
    assert {s["output"] for s in samples} == {ANSWER}
    assert "cap\\udfffital" in (run / "report.md").read_text(encoding="utf-8")

    resumed = cli_here(*args, str(run), "--resume")
    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr, resumed.stderr
    second = cli_here(*args, str(tmp_path / "b"), "--cache", str(run / "cache.sqlite"))  # answers from the cache
    assert second.returncode == 0 and "failed writes" not in second.stdout + second.stderr, second.stderr
    assert {s["output"] for s in read_records(tmp_path / "b" / "samples" / "demo.jsonl")[0]} == {ANSWER}
    compared = cli_here("compare", str(run), str(tmp_path / "b"), "--full")  # with its slice rows
    assert compared.returncode == 0 and "Traceback" not in compared.stderr, compared.stderr
    assert "prop=cap\\udfffital" in compared.stdout  # printed as its escape


def test_score_prints_an_id_with_a_lone_surrogate(tmp_path):
    data, records = surrogate_data(tmp_path)
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"id": r["id"], "output": ANSWER}) + "\n" for r in records[:3]))
    scored = cli_here(
        *score_args("demo", data, predictions),
        "--no-progress",
        "--output",
        str(tmp_path / "scored"),
    )
    assert scored.returncode == 1 and "Traceback" not in scored.stderr, scored.stderr
    assert "'id\\udfff'" in scored.stderr  # the id without a prediction, named
