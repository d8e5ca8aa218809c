"""TREC 2025 RAG's submission format as ragnarok's validator (scripts/rag25_validation.py, 7233fa7) checks it, run
unmodified (tests/data/parity/trec_rag25_validation/validation.json, record_rag25_validation.py): ragbench's reading
of every line finds the validator's errors and warnings, word for word, and `ragbench export trec-rag` of a
trec_rag25 run writes a file the validator passes: without `metadata.prompt` where the answers came from submission
files (its one warning per line), with the prompt the system sent where the run recorded it (no warning)."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import TEST_DATA
from ragbench.api import Step
from ragbench.tasks.trec_rag.ag_output import system_prompt
from ragbench.tasks.trec_rag.rag25_checks import format_of, rag25_findings
from ragbench.testing import build_index, installed_registry
from support.helpers import cli_here, run, samples

DATA = TEST_DATA / "parity" / "trec_rag25_validation"
SAMPLE = TEST_DATA / "parity" / "trec_support"
RECORD = json.loads((DATA / "validation.json").read_text(encoding="utf-8"))
LINES = [json.loads(line) for line in (DATA / "lines.jsonl").read_text(encoding="utf-8").splitlines()]
TOPIC_IDS = {json.loads(line)["id"] for line in (DATA / "topics_title.jsonl").read_text(encoding="utf-8").splitlines()}


def unordered(messages: list[str]) -> list[object]:
    """The validator names missing metadata keys as a Python set, whose order varies between runs: compared as sets."""
    return [
        set(m.split("{")[1].rstrip("}").split(", ")) if m.startswith("metadata missing keys") else m for m in messages
    ]


@pytest.mark.parametrize("number", range(len(LINES)))
def test_each_line_gets_the_validators_errors_and_warnings_in_either_format(number):
    for kind in (1, 2):
        errors, warnings = RECORD["lines"][number][str(kind)]
        found = rag25_findings(LINES[number], TOPIC_IDS, kind)
        assert (unordered(found[0]), found[1]) == (unordered(errors), warnings)
    assert rag25_findings(LINES[number], TOPIC_IDS) == rag25_findings(
        LINES[number], TOPIC_IDS, format_of(LINES[number])
    )


def test_the_export_of_a_trec_rag25_run_is_a_file_the_validator_passes(tmp_path):
    cli_here(
        "score",
        "--task",
        "trec_rag25",
        "--data",
        str(SAMPLE / "trec_rag_2025_queries.jsonl"),
        "--task-arg",
        f"trec_rag25.qrels={SAMPLE / 'qrels.rag25.txt'}",
        "--predictions",
        str(SAMPLE / "submission"),
        "--output",
        str(tmp_path / "run"),
    )
    done = cli_here(
        "export", "trec-rag", str(tmp_path / "run"), "--run-id", "fake", "--output", str(tmp_path / "a.jsonl")
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a.jsonl").read_bytes() == (DATA / "ag_output.jsonl").read_bytes()
    passed = RECORD["runs"]["topics_title.jsonl"]
    assert passed["verdict"]["valid"] and passed["verdict"]["error_count"] == 0
    printed = [line for line in passed["printed"].splitlines() if line]
    assert printed == [f"[Line {n}] WARNING: optional field 'prompt' is missing from metadata" for n in (1, 2, 3)]
    for number, line in enumerate(map(json.loads, (tmp_path / "a.jsonl").open()), start=1):
        errors, warnings = rag25_findings(line, TOPIC_IDS)
        assert errors == [] and [f"[Line {number}] WARNING: {w}" for w in warnings] == [printed[number - 1]]
    # the released topics file names the text "narrative": the validator parses no topic and refuses every line
    assert RECORD["runs"]["topics_narrative.jsonl"]["verdict"]["error_count"] == 3


def test_the_export_of_a_system_run_holds_the_prompt_it_sent_and_the_validator_warns_of_nothing(tmp_path):
    """A scripted run of trec_rag25 over a BM25 index of the sample segments: each line's `metadata.prompt` is the
    prompt of the topic's model call, and ragnarok's validator (recorded on the same file) prints nothing."""
    index = tmp_path / "bm25"
    build_index(SAMPLE / "segments.jsonl", index, "bm25", progress=False, registry=installed_registry())
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"response": "Bees dance [1]. Tides turn [2]."}]), encoding="utf-8")
    run(
        tmp_path,
        tasks=["trec_rag25"],
        system="vanilla",
        model=f"scripted:{rules}",
        data={"trec_rag25": str(SAMPLE / "trec_rag_2025_queries.jsonl")},
        task_args={"trec_rag25.qrels": str(SAMPLE / "qrels.rag25.txt")},
        retriever="bm25",
        retriever_args={"index": str(index)},
        system_args={"top_n": 2},
    )
    done = cli_here(
        "export", "trec-rag", str(tmp_path / "run"), "--run-id", "fake", "--output", str(tmp_path / "a.jsonl")
    )
    assert done.returncode == 0, done.stderr
    prompts = {
        row["id"]: next(step["request"]["prompt"] for step in row["trace"] if step["kind"] == "llm")
        for row in samples(tmp_path / "run", "trec_rag25")
    }
    written = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {line["metadata"]["narrative_id"]: line["metadata"]["prompt"] for line in written} == prompts
    assert (tmp_path / "a.jsonl").read_bytes() == (DATA / "ag_output_prompt.jsonl").read_bytes()
    checked = RECORD["runs"]["ag_output_prompt.jsonl"]
    assert checked["verdict"]["valid"] and checked["verdict"]["error_count"] == 0 and checked["printed"] == ""
    assert all(rag25_findings(line, TOPIC_IDS) == ([], []) for line in written)


def test_the_prompt_is_that_of_the_systems_last_model_call_chat_or_text():
    def llm(request: dict) -> Step:
        return Step(kind="llm", name="answer", request=request)

    chat = [{"role": "system", "content": "Cite."}, {"role": "user", "content": "Q?"}]
    search = Step(kind="retrieval", name="retrieve", request={"query": "q"})
    assert system_prompt([llm({"prompt": "plan"}), search, llm({"messages": chat})]) == chat
    assert system_prompt([llm({"messages": chat}), llm({"prompt": "write"}), search]) == "write"
    assert system_prompt([search]) is None and system_prompt([]) is None


def test_scoring_2025_lines_names_those_the_validator_refuses(tmp_path):
    folder = tmp_path / "submission"
    shutil.copytree(SAMPLE / "submission", folder)
    lines = [json.loads(line) for line in (folder / "fake.jsonl").read_text(encoding="utf-8").splitlines()]
    del lines[0]["metadata"]["team_id"]
    lines[1]["metadata"]["type"] = "semi"
    (folder / "fake.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = cli_here(
        "score",
        "--task",
        "trec_rag25",
        "--data",
        str(SAMPLE / "trec_rag_2025_queries.jsonl"),
        "--task-arg",
        f"trec_rag25.qrels={SAMPLE / 'qrels.rag25.txt'}",
        "--predictions",
        str(folder),
        "--output",
        str(tmp_path / "run"),
    )
    assert done.returncode == 0, done.stderr
    note = (
        "2 2025 line(s) ragnarok's rag25_validation refuses (read here): b1 (metadata missing keys: {'team_id'}), "
        "t2 (invalid metadata.type: semi)"
    )
    assert note in done.stdout + done.stderr
