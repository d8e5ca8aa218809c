"""A third-party plugin package (examples/ragbench-plugin-example), installed the way a user
would install it, is discovered through the `ragbench` entry-point group and works end to end
with built-in components; broken plugins are reported without hiding the others.

Offline: both packages are built from local sources with --no-index --no-deps
--no-build-isolation into private --target folders, then used through PYTHONPATH in
subprocesses, so nothing is installed into the test environment. The `ragbench` commands are forks of the
test process's command zygote (tests/support/command_zygote.py: the command's PYTHONPATH on its sys.path as a
fresh interpreter puts it, its entry points read by the command), ~1 s of CPU less each than a fresh
interpreter; what only a fresh interpreter shows (which plugin modules discovery imports) runs in one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from ragbench.api.trace import trace_prompts
from support import paths
from support.command_zygote import Zygote
from support.helpers import cli_run_args, pip_install_args, plugin_pyproject, task_counts, task_run_args, write_dedented

REPO = paths.REPO
EXAMPLE = REPO / "examples" / "ragbench-plugin-example"
PROVIDER = "ragbench-plugin-example"
BROKEN_PROVIDER = "ragbench-broken-example"


def _broken_package(root: Path) -> Path:
    """A plugin with two entry points: one whose hook module fails to import, and one whose
    catalogue loads but whose system's target module fails when first used."""
    write_dedented(
        root / "pyproject.toml",
        plugin_pyproject(
            BROKEN_PROVIDER,
            {"broken_import": "ragbench_broken_example.boom", "broken_lazy": "ragbench_broken_example.lazy"},
            "ragbench_broken_example",
        ),
    )
    write_dedented(root / "ragbench_broken_example" / "__init__.py", "")
    write_dedented(
        root / "ragbench_broken_example" / "boom.py",
        'raise ImportError("this plugin needs the libfrobnicate library")\n',
    )
    write_dedented(
        root / "ragbench_broken_example" / "lazy.py",
        """\
        from ragbench.api import hookimpl


        @hookimpl
        def ragbench_catalog():
            return {"systems": {"broken_system": {
                "target": "ragbench_broken_example.heavy:HeavySystem",
                "description": "needs a module that is not installed"},
                                "task_as_system": {
                "target": "ragbench.tasks.selfrag.demo:Demo",
                "description": "a task registered as a system"}}}
        """,
    )
    write_dedented(
        root / "ragbench_broken_example" / "heavy.py",
        """\
        import libfrobnicate_not_installed  # noqa: F401


        class HeavySystem:
            pass
        """,
    )
    return root


def _pip_install(source: Path, target: Path) -> subprocess.Popen:
    return subprocess.Popen(
        pip_install_args(source, target),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("plugins")
    # Build from a copy: setuptools writes build/ and *.egg-info next to the sources.
    example_src = root / "example-src"
    shutil.copytree(EXAMPLE, example_src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    broken_src = _broken_package(root / "broken-src")
    installs = {
        "example": (_pip_install(example_src, root / "site"), root / "site"),
        "broken": (_pip_install(broken_src, root / "broken-site"), root / "broken-site"),
    }
    for name, (process, _) in installs.items():
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 0, f"pip install of the {name} plugin failed:\n{output}"
    return {name: site for name, (_, site) in installs.items()}


def _with_paths(*paths: Path) -> dict[str, str]:
    """This process's environment with `paths` first on PYTHONPATH."""
    env = dict(os.environ)
    existing = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join([*map(str, paths), *([existing] if existing else [])])
    return env


def _run(args: list[str], *paths: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=_with_paths(*paths), cwd=cwd, timeout=60
    )


RagbenchCommand = Callable[..., subprocess.CompletedProcess]


@pytest.fixture
def ragbench_command(ragbench_zygote: Zygote) -> RagbenchCommand:
    """`ragbench ARGS` with `paths` first on PYTHONPATH, in `cwd`: a fork of the command zygote."""

    def run(args: list[str], *paths: Path, cwd: Path) -> subprocess.CompletedProcess:
        return ragbench_zygote.run(args, _with_paths(*paths), cwd=cwd, timeout=60)

    return run


def _data(site: Path) -> list[dict]:
    path = site / "ragbench_plugin_example" / "data" / "trivia_tf.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _samples(run_dir: Path, task: str) -> list[dict]:
    files = sorted((run_dir / "samples").glob(f"{task}*"))
    assert files, f"no samples file for {task} in {run_dir / 'samples'}"
    return [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines() if line.strip()]


# --- discovery ------------------------------------------------------------------------------------
def test_list_shows_plugin_components_with_provider(sites, tmp_path, ragbench_command):
    done = ragbench_command(["list"], sites["example"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for kind, name in (("tasks", "trivia_tf"), ("systems", "majority_vote"), ("metrics", "verdict_accuracy")):
        section = lines[lines.index(f"{kind}:") + 1 :]
        row = next((line for line in section if line.split()[:1] == [name]), None)
        assert row is not None, f"{name} not listed under {kind}:\n{done.stdout}"
        assert row.endswith(f"[{PROVIDER}]"), row
    assert "[ragbench]" in done.stdout  # built-ins still there
    assert "failed to load" not in done.stderr


def test_plugin_adds_a_command_and_a_metric_family(sites, tmp_path, ragbench_command):
    data = _data(sites["example"])
    done = ragbench_command(["trivia-stats"], sites["example"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    true = sum(record["truth"] for record in data)
    assert done.stdout == f"{len(data)} statements: {true} true, {len(data) - true} false\n"
    listed = ragbench_command(["list", "metrics"], sites["example"], cwd=tmp_path).stdout
    assert any(line.split()[:1] == ["mentions:NAME"] and line.endswith(f"[{PROVIDER}]") for line in listed.splitlines())
    assert "trivia-stats" in ragbench_command(["--help"], sites["example"], cwd=tmp_path).stdout
    assert "trivia-stats" not in ragbench_command(["--help"], cwd=tmp_path).stdout  # only when installed


def test_catalogue_is_lazy_and_targets_resolve(sites, tmp_path):
    script = textwrap.dedent("""\
        import json, sys
        from ragbench.testing import installed_registry
        registry = installed_registry()
        before = sorted(m for m in sys.modules if m.startswith("ragbench_plugin_example"))
        loaded = {kind: registry.load(kind, name).name for kind, name in
                  (("tasks", "tf_trivia"), ("systems", "self_consistency"), ("metrics", "verdict_accuracy"))}
        print(json.dumps({"before": before, "loaded": loaded,
                          "defaults": registry.entry("tasks", "trivia_tf").defaults}))
        """)
    done = _run(["-c", script], sites["example"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    # Discovery imports only the hook module (and its package), never the components.
    assert out["before"] == ["ragbench_plugin_example", "ragbench_plugin_example.plugin"]
    assert out["loaded"] == {"tasks": "trivia_tf", "systems": "majority_vote", "metrics": "verdict_accuracy"}
    assert out["defaults"] == {"system_args": {"max_tokens": 8}}


# --- runs -----------------------------------------------------------------------------------------
# Per item, whether each of the three votes (seeds 0, 1, 2) is right: c = correct, w = wrong.
# The majority is right on 6/8; any single seed alone would score 5/8 or 4/8.
VOTE_PLAN = ["ccc", "wcc", "wcc", "cwc", "ccw", "ccw", "cww", "www"]
EXPECTED_MAJORITY = sum(plan.count("c") >= 2 for plan in VOTE_PLAN) / len(VOTE_PLAN)
# Spellings per seed: postprocessing and the vote must see through case and punctuation.
SPELLINGS = [lambda v: v, lambda v: f" {v.capitalize()}.", lambda v: f"{v.upper()}\nbecause ..."]


def _fake_model(folder: Path, data: list[dict]) -> Path:
    """A `scripted:fake_llm:answer` model whose answer depends on the statement and the seed."""
    table = {}
    for record, plan in zip(data, VOTE_PLAN, strict=True):
        verdicts = [record["truth"] if mark == "c" else not record["truth"] for mark in plan]
        table[record["statement"]] = [SPELLINGS[seed]("true" if v else "false") for seed, v in enumerate(verdicts)]
    write_dedented(
        folder / "fake_llm.py",
        f"""\
        import re

        TABLE = {table!r}


        def answer(request):
            statement = re.search(r"Statement: (.*)\\nAnswer:", request.prompt).group(1)
            assert request.sampling.temperature == 0.7, request.sampling
            return TABLE[statement][request.sampling.seed]
        """,
    )
    return folder


def test_majority_vote_on_plugin_task(sites, tmp_path, ragbench_command):
    data = _data(sites["example"])
    assert len(data) == len(VOTE_PLAN)
    assert EXPECTED_MAJORITY == 6 / 8
    assert all(sum(p[seed] == "c" for p in VOTE_PLAN) / 8 != EXPECTED_MAJORITY for seed in range(3))
    fake = _fake_model(tmp_path / "fake", data)
    out = tmp_path / "run"
    done = ragbench_command(
        [
            *cli_run_args("scripted:fake_llm:answer", task="trivia_tf", system="majority_vote"),
            "--output",
            str(out),
            "--no-progress",
        ],
        sites["example"],
        fake,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["complete"]
    assert results["results"]["trivia_tf"]["verdict_accuracy"] == pytest.approx(EXPECTED_MAJORITY)
    assert results["counts"]["trivia_tf"] == task_counts(8, 8)
    assert results["cost"]["llm_calls"] == 3 * len(data)
    samples = {s["id"]: s for s in _samples(out, "trivia_tf")}
    second = samples[data[1]["qid"]]  # plan "wcc": the wrong first vote is outvoted
    assert [step["request"]["sampling"]["seed"] for step in second["trace"]] == [0, 1, 2]
    assert [step["request"]["sampling"]["max_tokens"] for step in second["trace"]] == [8, 8, 8]  # task default
    truth = "true" if data[1]["truth"] else "false"
    assert second["prediction"]["answer"] == truth.capitalize() + "."  # seed 1's spelling, postprocessed
    assert len(second["prediction"]["extras"]["votes"]) == 3
    assert second["scores"]["verdict_accuracy"] == 1.0


@pytest.mark.parametrize("system, expected", [("vanilla", 5 / 8), ("closed_book", 3 / 8)])
def test_builtin_systems_on_plugin_task(sites, tmp_path, system, expected, ragbench_command):
    # With evidence in the prompt the scripted model says "True" (5 of 8 statements are true),
    # without it "False" (3 of 8 are false).
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps(
            [{"pattern": r"Evidence:\n\[1\] ", "response": " True\n\nThe evidence says so."}, {"response": "False."}]
        )
    )
    out = tmp_path / "run"
    done = ragbench_command(
        [
            *cli_run_args(f"scripted:{rules}", task="trivia_tf", system=system),
            "--metrics",
            "+mentions:true",
            "--output",
            str(out),
            "--no-progress",
        ],
        sites["example"],
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text())["results"]["trivia_tf"]
    assert results["verdict_accuracy"] == pytest.approx(expected)
    assert results["mentions:true"] == (1.0 if system == "vanilla" else 0.0)  # the plugin's metric family
    assert results["match_normalized"] == pytest.approx(expected)  # a built-in metric on the plugin's gold
    first = _samples(out, "trivia_tf")[0]
    assert first["prediction"]["answer"] == ("True" if system == "vanilla" else "False.")
    assert ("[1] Pacific Ocean\n" in trace_prompts(first["trace"])[0]) == (system == "vanilla")


def test_loader_reports_bad_records(sites, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(sites["example"]))
    from ragbench.api import RecordError
    from ragbench_plugin_example.task import TriviaTF

    good = {"qid": "q1", "statement": "Water is wet.", "truth": True, "evidence": [{"title": "W", "text": "Wet."}]}
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(good),
                "{not json",
                json.dumps({"qid": "q3", "statement": "No truth."}),
                json.dumps({"qid": "q4", "statement": "x", "truth": "yes"}),
                json.dumps({"qid": "q5", "statement": "x", "truth": False, "evidence": "not a list"}),
                "",
                json.dumps({"qid": 6, "statement": "No evidence is fine.", "truth": False}),
            ]
        )
        + "\n"
    )
    items = list(TriviaTF(path).examples())
    assert [type(i).__name__ for i in items] == ["Example", *["RecordError"] * 4, "Example"]
    assert [str(i).split(": ", 1)[0] for i in items if isinstance(i, RecordError)] == [
        f"{path}:2",
        f"{path}:3 field 'truth'",
        f"{path}:4 field 'truth'",
        f"{path}:5 field 'evidence'",
    ]
    first, last = items[0], items[-1]
    assert (first.id, first.gold, first.docs[0].title, first.index) == (
        "q1",
        {"truth": True, "answers": ["true"]},
        "W",
        0,
    )
    assert (last.id, last.docs, last.index) == ("6", [], 6)
    assert len(list(TriviaTF().examples())) == 8  # the shipped data loads cleanly


# --- broken plugins -------------------------------------------------------------------------------
def test_plugin_that_fails_to_import_is_reported_and_others_listed(sites, tmp_path, ragbench_command):
    done = ragbench_command(["list"], sites["broken"], sites["example"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    failures = [line for line in done.stderr.splitlines() if "failed to load" in line]
    assert failures == [
        f"ragbench: plugin 'broken_import' from {BROKEN_PROVIDER} failed to load: "
        "ImportError: this plugin needs the libfrobnicate library"
    ]
    for name in ("trivia_tf", "majority_vote", "verdict_accuracy", "vanilla", "demo"):
        assert f"  {name} " in done.stdout, name
    # The other entry point of the same distribution still registers its (lazy) system.
    assert any(
        line.split()[:1] == ["broken_system"] and line.endswith(f"[{BROKEN_PROVIDER}]")
        for line in done.stdout.splitlines()
    )


def test_component_of_the_wrong_kind_gives_one_line_error_naming_the_provider(sites, tmp_path, ragbench_command):
    done = ragbench_command(
        [
            *cli_run_args("scripted:echo", system="task_as_system"),
            "--output",
            str(tmp_path / "run"),
            "--no-progress",
        ],
        sites["broken"],
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        "ragbench: error: system 'task_as_system' (ragbench.tasks.selfrag.demo:Demo) (from "
        f"{BROKEN_PROVIDER}, entry point broken_lazy) is class ragbench.tasks.selfrag.demo.Demo, not a subclass "
        "of System: the plugin registers the wrong kind of component; fix its entry or ask its provider"
    ]
    assert not (tmp_path / "run").exists()


def test_component_failing_at_first_use_gives_one_line_error(sites, tmp_path, ragbench_command):
    done = ragbench_command(
        [
            *cli_run_args("scripted:echo", task="trivia_tf", system="broken_system"),
            "--output",
            str(tmp_path / "run"),
            "--no-progress",
        ],
        sites["broken"],
        sites["example"],
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"ragbench: error: system 'broken_system' (from {BROKEN_PROVIDER}, entry point broken_lazy) failed to load "
        "ragbench_broken_example.heavy:HeavySystem: ModuleNotFoundError: "
        "No module named 'libfrobnicate_not_installed'"
    ]


def test_a_plugin_metric_scores_a_builtin_task(sites, tmp_path, ragbench_command):
    out = tmp_path / "run"
    done = ragbench_command(
        [
            *task_run_args(
                "pubhealth",
                REPO / "tests/data/selfrag/health_claims_processed.sample.jsonl",
                "closed_book",
                "scripted:echo",
            ),
            "--metrics",
            "+verdict_accuracy",
            "--output",
            str(out),
            "--no-progress",
        ],
        sites["example"],
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["details"]["pubhealth"]["verdict_accuracy"]["n"] == 3  # numeric, from the built-in label
    assert {"match", "selfrag_match", "label_accuracy"} <= set(results["results"]["pubhealth"])
    refused = ragbench_command(
        [
            "--tasks",
            "demo",
            "--model",
            "scripted:echo",
            "--metrics",
            "+verdict_accuracy",
            "--output",
            str(tmp_path / "r2"),
        ],
        sites["example"],
        cwd=tmp_path,
    )
    assert refused.returncode == 2 and "metric verdict_accuracy cannot score task demo" in refused.stderr
