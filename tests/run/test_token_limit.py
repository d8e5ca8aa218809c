"""Outputs cut at their token limit are said, never only folded into a lower score: results.json's
`token_limit` (calls and scored examples, by step), report.md's "What went wrong", the console and the
viewer's run page (docs/outputs.md, "What went wrong")."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_jsonl
from support.helpers import cli_here, cli_run_args, run, viewed


def cut_task(folder: Path, cut: set[int]) -> Path:
    """Five questions; the scripted model's answers to those in `cut` stop at the token limit."""
    write_jsonl(
        folder / "qa.jsonl",
        [{"id": f"q{i}", "question": f"Question {i}?", "golden_answers": ["yes"]} for i in range(5)],
    )
    rules = [
        {"pattern": f"Question {i}\\?", "response": {"response": "yes, because", "finish_reason": "length"}}
        for i in sorted(cut)
    ] + [{"response": "yes"}]
    (folder / "answers.json").write_text(json.dumps(rules))
    task = folder / "qa.yaml"
    task.write_text(
        "task: qa\ndata: {path: qa.jsonl, format: flashrag}\nprompt:\n  template: '{{ question }}'\nmetrics: [em]\n"
    )
    return task


def test_cut_outputs_are_counted_by_step_and_said(tmp_path):
    results = run(
        tmp_path,
        tasks=[str(cut_task(tmp_path, {1, 3}))],
        system="closed_book",
        model=f"scripted:{tmp_path / 'answers.json'}",
    )
    assert results["token_limit"] == {"qa": {"examples": 2, "calls": 2, "steps": {"answer": 2}}}
    assert results["results"]["qa"]["em"] == 0.6  # the numbers are upstream's: the cut answers are scored as they are
    line = "qa: 2 LLM call(s) in 2 of 5 scored examples stopped at their max_tokens, their outputs cut there (answer 2)"
    assert line in (tmp_path / "run" / "report.md").read_text()
    pages = viewed(tmp_path / "run", out=tmp_path / "site")
    [run_page] = [page for key, page in pages.items() if key.startswith("run/")]
    assert run_page["token_limit"] == results["token_limit"]


def test_no_section_when_no_output_was_cut(tmp_path):
    results = run(
        tmp_path,
        tasks=[str(cut_task(tmp_path, set()))],
        system="closed_book",
        model=f"scripted:{tmp_path / 'answers.json'}",
    )
    assert "token_limit" not in results
    assert "max_tokens" not in (tmp_path / "run" / "report.md").read_text()


def test_the_console_says_it(tmp_path):
    task = cut_task(tmp_path, {0})
    done = cli_here(
        *cli_run_args(f"scripted:{tmp_path / 'answers.json'}", task=str(task)),
        "--output",
        str(tmp_path / "run"),
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    assert "qa: 1 LLM call(s) in 1 of 5 scored examples stopped at their max_tokens" in done.stdout + done.stderr
