"""Run folders for the viewer's tests, made by real systems on the scripted engine: LLatrieval on ALCE
ASQA (several iterations), Self-RAG and SMART on PopQA, and two PopQA runs (vanilla, closed_book) that
disagree, with model output and a document that carry HTML (`<script>`, an `onerror` image); and a run
written by hand whose examples failed (one with its traceback, one with a metric that raised, its
traceback kept)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_jsonl
from ragbench._registry import installed_registry
from ragbench._run.evaluator import Evaluator, RunConfig
from support.matrix_fixtures import cell_config

SCRIPT_ANSWER = "<script>window.__pwned = 1</script>person 0"
PROPS = ("occupation", "genre", "country")  # a slice value each: the slice charts get several bars, zeros among them
SCRIPT_DOC = '<script>window.__pwned = 3</script><img src=x onerror="window.__pwned = 2">Person 0 is a painter.'


def popqa_data(folder: Path) -> str:
    rows = [
        {
            "id": i,
            "question": f"Who is person {i}?",
            "answers": [f"person {i}"],
            "prop": PROPS[i],
            "s_wiki_title": f"P{i}",
            "pop": 10 * (i + 1),
            "ctxs": [{"id": f"{i}0", "title": f"P{i}", "text": SCRIPT_DOC if i == 0 else f"Person {i} is a poet."}],
        }
        for i in range(3)
    ]
    return str(write_jsonl(folder / "popqa.jsonl", rows))


def _run(root: Path, name: str, task: str, system: str, rules: list | None = None, data: str | None = None) -> Path:
    config = cell_config(task, system, root / name, limit=3)
    if rules is not None:
        Path(config["model"].split(":", 1)[1]).write_text(json.dumps(rules))
    if data is not None:
        config["data"] = {task: data}
    Evaluator(RunConfig.of(**config), registry=installed_registry()).run()
    return Path(config["output"])


def make_runs(root: Path) -> dict[str, Path]:
    data = popqa_data(root)
    return {
        "llatrieval": _run(root, "llatrieval", "alce_asqa", "llatrieval"),
        "selfrag": _run(root, "selfrag", "popqa", "selfrag", data=data),
        "smart": _run(root, "smart", "popqa", "smart", data=data),
        # A answers person 0 (with a script tag) and misses the others; B answers only person 1
        "vanilla": _run(
            root,
            "vanilla",
            "popqa",
            "vanilla",
            data=data,
            rules=[{"pattern": "person 0", "response": SCRIPT_ANSWER}, {"response": "nobody"}],
        ),
        "closed_book": _run(
            root,
            "closed_book",
            "popqa",
            "closed_book",
            data=data,
            rules=[{"pattern": "person 1", "response": "person 1"}, {"response": "nobody"}],
        ),
    }


FAILED_TRACEBACK = (
    'Traceback (most recent call last):\n  File "system.py", line 3, in run\n'
    "    return example.extras['docs']\nKeyError: 'docs'"
)

METRIC_TRACEBACK = (
    'Traceback (most recent call last):\n  File "judge.py", line 9, in score\n'
    "    raise ValueError('no reply')\nValueError: no reply"
)


def failed_run(root: Path) -> Path:
    """A run whose example "a" failed (with its traceback), "b" had a metric fail (with its traceback), "c"
    was scored; it stopped before its end (no results.json, no process holding its lock)."""
    run = root / "failed"
    (run / "samples").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"config": {"tasks": ["t"]}}))
    records = [
        {"index": 0, "id": "a", "question": "q?", "error": "KeyError: 'docs'", "traceback": FAILED_TRACEBACK},
        {
            "index": 1,
            "id": "b",
            "question": "q?",
            "scores": {"em": 1.0},
            "score_errors": {"judge": "ValueError: no reply"},
            "score_tracebacks": {"judge": METRIC_TRACEBACK},
        },
        {"index": 2, "id": "c", "question": "q?", "scores": {"em": 0.0}},
    ]
    write_jsonl(run / "samples" / "t.jsonl", records)
    return run
