"""The plugin guide builds a working plugin and tests it: its files are taken verbatim from
docs/writing-plugins.md and the test file from docs/testing-plugins.md (every fenced block with a
`title="PATH"`), installed into a private folder as pip would lay it out (package and dist-info with the
guide's entry points), discovered through the entry-point group, run through the command line with the
guide's scripted rules (giving the numbers the guide states) and by its own tests; they import
nothing of ragbench but its public API."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_public_api import non_public_imports

from ragbench.api.trace import trace_prompts
from support import paths

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser under its PyPI name
    tomllib = pytest.importorskip("tomli")

DOCS = paths.REPO / "docs"
GUIDE, TESTING = DOCS / "writing-plugins.md", DOCS / "testing-plugins.md"
BLOCK = re.compile(r'^```(\w+) title="([^"]+)"\n(.*?)^```$', re.M | re.S)


def plugin_files() -> dict[str, str]:
    return {
        path: body for page in (GUIDE, TESTING) for _, path, body in BLOCK.findall(page.read_text(encoding="utf-8"))
    }


def python(args: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess:
    """`python ARGS` with the plugin installed in `site`."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def cli(args: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess:
    return python(["-m", "ragbench._cli.main", *args], site, cwd)


def install(project: Path, site: Path) -> Path:
    """What `pip install` leaves behind, made from the guide's pyproject.toml: the package on a path
    and its dist-info with the entry points (no build backend needed, so it runs offline anywhere)."""
    meta = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for package in tomllib.loads((project / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]:
        shutil.copytree(project / package, site / package)
    info = site / f"{meta['name'].replace('-', '_')}-{meta['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {meta['version']}\n")
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in points.items())
            for group, points in meta["entry-points"].items()
        )
    )
    return site


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """(folder holding my-rag-plugin/ as the guide lays it out, the site it is installed into)."""
    root = tmp_path_factory.mktemp("guide-plugin")
    files = plugin_files()
    assert {
        "my-rag-plugin/pyproject.toml",
        "my-rag-plugin/my_rag_plugin/task.py",
        "my-rag-plugin/my_rag_plugin/system.py",
        "my-rag-plugin/my_rag_plugin/metric.py",
        "my-rag-plugin/my_rag_plugin/catalog.py",
        "my-rag-plugin/tests/test_my_rag_plugin.py",
    } <= set(files)
    for path, body in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(body, encoding="utf-8")
    site = install(root / "my-rag-plugin", root / "site")
    return root, site


def test_the_guide_plugin_is_listed_with_its_provider(built):
    root, site = built
    done = cli(["list"], site, cwd=root)
    assert done.returncode == 0, done.stderr
    for name in ("capitals", "two_step", "capital_hit"):
        row = next(line for line in done.stdout.splitlines() if line.split()[:1] == [name])
        assert row.endswith("[my-rag-plugin]"), row
    assert "failed to load" not in done.stderr


def test_the_guide_command_runs_and_gives_the_numbers_the_guide_states(built):
    root, site = built
    done = cli(
        [
            "--tasks",
            "capitals",
            "--data",
            "capitals=my-rag-plugin/capitals.jsonl",
            "--system",
            "two_step",
            "--model",
            "scripted:my-rag-plugin/rules.json",
            "--output",
            "runs/capitals",
            "--no-progress",
        ],
        site,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((root / "runs" / "capitals" / "results.json").read_text())
    assert results["results"]["capitals"]["capital_hit"] == pytest.approx(2 / 3)
    assert results["results"]["capitals"]["answer_words"] == pytest.approx(2.0)
    assert (
        "scores `capital_hit` 0.6667 (2 of 3; better: higher) and `answer_words` 2.0000 (better: neither)"
        in " ".join(GUIDE.read_text(encoding="utf-8").split())
    )
    details = results["details"]["capitals"]
    assert (details["capital_hit"]["higher_is_better"], details["capital_hit"]["range"]) == (True, [0, 1])
    assert (details["answer_words"]["higher_is_better"], details["answer_words"]["range"]) == (None, [0, None])
    assert "| capitals | answer_words | neither | 2.0000 |" in done.stdout
    assert set(results["details"]["capitals"]["capital_hit"]["slices"]["region"]) == {"Europe", "Asia", "Americas"}
    assert (
        "capitals: warning: 1 of 3 outputs (33%) did not follow two_step's format (a one-word answer); "
        "use an instruction-tuned model, or raise --system-arg max_tokens"
    ) in done.stderr
    samples = [json.loads(line) for line in (root / "runs" / "capitals" / "samples" / "capitals.jsonl").open()]
    assert [s["prediction"]["answer"] for s in samples] == ["Paris", "Tokyo", "I do not know"]
    assert trace_prompts(samples[0]["trace"])[0] == (
        "Paris is the capital of France.\nAnswer in one word.\nQuestion: What is the capital of France?\nAnswer:"
    )
    rerank = samples[0]["trace"][1]  # the system's own step, between the retrieval and the model's call
    assert [step["kind"] for step in samples[0]["trace"]] == ["retrieval", "custom", "llm"]
    assert (rerank["name"], rerank["request"], rerank["response"]) == (
        "rerank",
        {"retrieved": ["0-0"]},
        {"overlap": [5], "kept": ["0-0"]},
    )
    assert [doc["text"] for doc in rerank["docs"]] == ["Paris is the capital of France."]


def test_the_guide_task_options_and_bad_records_behave_as_the_guide_says(built):
    root, site = built
    bad = root / "bad.jsonl"
    bad.write_text('{"id": "fr", "country": "France", "capital": "Paris"}\n{"id": "x", "country": 5}\nnot json\n')
    done = cli(
        [
            "--tasks",
            "capitals",
            "--data",
            f"capitals={bad}",
            "--system",
            "vanilla",
            "--task-arg",
            "uppercase=true",
            "--model",
            "scripted:my-rag-plugin/rules.json",
            "--output",
            "runs/bad",
            "--no-progress",
        ],
        site,
        cwd=root,
    )
    assert done.returncode == 1, done.stderr
    results = json.loads((root / "runs" / "bad" / "results.json").read_text())
    assert results["counts"]["capitals"]["bad_records"] == 2 and results["counts"]["capitals"]["scored"] == 1
    assert results["results"]["capitals"]["capital_hit"] == 1.0  # "PARIS" (uppercase=true) holds "paris"
    refused = cli(
        [
            "--tasks",
            "capitals",
            "--data",
            f"capitals={bad}",
            "--task-arg",
            "uppercase=maybe",
            "--model",
            "scripted:echo",
            "--output",
            "runs/refused",
            "--no-progress",
        ],
        site,
        cwd=root,
    )
    assert refused.returncode == 2
    assert "--task-arg uppercase=maybe: task capitals takes true/false for uppercase" in refused.stderr


def test_the_guide_plugin_and_its_tests_import_only_the_public_api(built):
    root, _ = built
    files = sorted((root / "my-rag-plugin").rglob("*.py"))
    assert len(files) == 6 and [problem for path in files for problem in non_public_imports(path)] == []


def test_the_guide_plugin_passes_the_tests_of_the_testing_guide(built):
    root, site = built
    done = python(["-m", "pytest", "-q", "-p", "no:cacheprovider", "my-rag-plugin/tests"], site, root)
    assert done.returncode == 0 and "5 passed" in done.stdout, done.stdout + done.stderr
