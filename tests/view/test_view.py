"""`ragbench view`: the page data read from real run folders (made by real systems on the scripted
engine), the structure hook's grouping, a run in progress, the static export, the HTTP API; the pages
themselves are clicked through in a real browser in tests/view/test_view_browser.py. The pages are read as the
command writes them (`--export`) or serves them (`--port 0`, a process of its own: support/viewer_pages.py)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import write_jsonl
from ragbench.testing import ScriptedLLM, run_eval
from support.helpers import cli_here, popqa_args, run
from support.view_fixtures import FAILED_TRACEBACK, METRIC_TRACEBACK, SCRIPT_ANSWER, failed_run, make_runs
from support.viewer_pages import export_view, exported_page, run_ids, served_page, viewer_page, viewer_server


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return make_runs(tmp_path_factory.mktemp("view_runs"))


@pytest.fixture(scope="module")
def site(runs, tmp_path_factory) -> Path:
    """The viewer's pages of every run, as `ragbench view RUNS --export SITE` writes them: SITE."""
    return export_view([runs["llatrieval"].parent.parent], tmp_path_factory.mktemp("view_site") / "site")


def rid(site: Path, name: str) -> str:
    return next(found for found in run_ids(site) if found.startswith(name + "_"))


def pages(runs: Path, tmp_path: Path) -> tuple[Path, str]:
    """The export of the runs under `runs` and its first run's id."""
    out = export_view([runs], tmp_path / "site")
    return out, run_ids(out)[0]


def test_llatrieval_steps_carry_their_iteration_and_the_outline_notes_the_verdict(site):
    page = exported_page(site, f"example/{rid(site, 'llatrieval')}/alce_asqa/0")
    steps = page["steps"]
    summaries = [s for s in steps if s["name"] == "summarize"]
    assert summaries and all(s["group"] and s["group"][0].startswith("iteration ") for s in summaries)
    assert steps[-1]["name"] == "answer" and steps[-1]["group"] == []
    groups = [item for item in page["outline"] if "group" in item]
    assert [g["group"] for g in groups] == [f"iteration {k}" for k in range(1, len(groups) + 1)] and len(groups) > 1
    assert groups[0]["info"]["verification"] == "rejected"  # the scripted verifier never says [YES] here
    names = {steps[item["step"]]["name"] for item in groups[1]["items"]}
    assert {"update_query", "summarize", "select", "verify"} <= names
    assert steps[1]["prompt"].startswith("[system]") and steps[1]["reply"]


def test_llatrieval_records_each_iterations_selection_with_the_documents_it_kept(site):
    page = exported_page(site, f"example/{rid(site, 'llatrieval')}/alce_asqa/0")
    selections = [s for s in page["steps"] if s["kind"] == "custom"]
    iterations = page["outline"]
    assert [s["name"] for s in selections] == ["selection"] * len([g for g in iterations if "group" in g])
    for group, step in zip((g for g in iterations if "group" in g), selections):
        assert {"step": step["i"]} in group["items"] and step["group"] == [group["group"]]
        assert step["docs"] and '"candidates"' in step["prompt"] and '"selected"' in step["reply"]
    final = [d["id"] for d in selections[-1]["docs"]]
    assert final == [d["id"] for d in page["docs"]]  # the last selection is what the answer was given


def test_a_failed_examples_traceback_and_metric_failures_are_shown(tmp_path):
    site, rid = pages(failed_run(tmp_path), tmp_path)
    assert exported_page(site, f"example/{rid}/t/0")["traceback"] == FAILED_TRACEBACK
    assert exported_page(site, f"example/{rid}/t/2")["traceback"] is None
    assert exported_page(site, f"example/{rid}/t/1")["score_errors"] == {"judge": "ValueError: no reply"}
    assert exported_page(site, f"example/{rid}/t/1")["score_tracebacks"] == {"judge": METRIC_TRACEBACK}
    assert exported_page(site, f"example/{rid}/t/2")["score_tracebacks"] == {}
    rows = exported_page(site, f"rows/{rid}/t/0")["rows"]
    assert [r["score_errors"] for r in rows] == [{}, {"judge": "ValueError: no reply"}, {}]
    assert exported_page(site, "runs")["runs"][0]["tasks"]["t"]["counts"] == {"records": 3, "scored": 1, "failed": 2}


def test_the_gold_is_shown_as_the_task_read_it_without_loading_the_task(tmp_path):
    from test_task_gold import Riddles

    run_eval(Riddles, "closed_book", ScriptedLLM("a piano"), output=tmp_path / "riddles")
    site, rid = pages(tmp_path / "riddles", tmp_path)
    assert exported_page(site, f"rows/{rid}/riddles/0")["rows"][0]["gold"] == "a piano"
    assert exported_page(site, f"example/{rid}/riddles/0")["gold_text"] == "a piano"


def test_a_gold_without_the_tasks_reading_shows_every_value_it_holds(tmp_path):
    run = tmp_path / "older"
    (run / "samples").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"config": {"tasks": ["t"]}}))
    gold = {
        "qa_pairs": [{"question": "Which one?", "short_answers": ["x", "y"]}],
        "label": None,
        "answer": "x and y",
        "score": 3,
    }
    (run / "samples" / "t.jsonl").write_text(json.dumps({"index": 0, "id": "a", "question": "q?", "gold": gold}) + "\n")
    assert (
        viewer_page([run], "rows/{rid}/t/0")["rows"][0]["gold"]
        == "qa_pairs: Which one?, x, y; answer: x and y; score: 3"
    )


def test_a_finished_run_is_complete_or_incomplete_by_its_results(site):
    states = {run["rid"]: (run["state"], run["complete"]) for run in exported_page(site, "runs")["runs"]}
    assert states and all(state == ("complete" if complete else "incomplete") for state, complete in states.values())


def test_selfrag_outline_has_the_decision_and_scored_passages_with_the_chosen_one(site):
    page = exported_page(site, f"example/{rid(site, 'selfrag')}/popqa/0")
    groups = {g["group"].split(":")[0]: g for g in page["outline"] if "group" in g}
    assert groups["retrieval decision"]["info"]["retrieve"] is True
    passage = groups["passage 1"]
    assert passage["chosen"] is True and {"relevance_score", "ground_score", "utility_score"} <= set(passage["info"])


def test_smart_outline_is_agent_by_agent(site):
    page = exported_page(site, f"example/{rid(site, 'smart')}/popqa/0")
    assert [g["group"] for g in page["outline"] if "group" in g] == [
        "Intent Reconstructor",
        "Knowledge Retriever",
        "Fact Locator",
        "Response Generator",
    ]


def test_runs_rows_and_compare_pages(site):
    runs = exported_page(site, "runs")
    assert len(runs["runs"]) == 5 and set(runs["comparable"]["popqa"]) >= {
        rid(site, "vanilla"),
        rid(site, "closed_book"),
    }
    entry = next(r for r in runs["runs"] if r["rid"] == rid(site, "vanilla"))
    assert entry["complete"] and entry["tasks"]["popqa"]["metrics"]["match"]["n"] == 3
    rows = exported_page(site, f"rows/{rid(site, 'vanilla')}/popqa/0")
    assert rows["total"] == 3 and rows["rows"][0]["answer"] == SCRIPT_ANSWER and "match" in rows["metrics"]
    vanilla, popqa = rid(site, "vanilla"), runs["comparable"]["popqa"]
    compare = exported_page(site, "compare/popqa/" + "~".join([vanilla, *(r for r in popqa if r != vanilla)]))
    [pair] = [pair for pair in compare["pairs"] if (pair["a"], pair["b"]) == (vanilla, rid(site, "closed_book"))]
    match = next(d for d in pair["disagreements"] if d["metric"] == "match")
    assert [r["id"] for r in match["a_right"]["rows"]] == ["0"] and [r["id"] for r in match["b_right"]["rows"]] == ["1"]
    shown = match["b_right"]["rows"][0]  # what each run answered, beside the question
    assert (shown["question"], shown["answer_a"], shown["answer_b"]) == ("Who is person 1?", "nobody", "person 1")
    assert any(r["metric"] == "match" and r["slice"] == "" and r["test"] == "mcnemar" for r in pair["rows"])
    assert not (site / "data" / "run" / "nope.js").exists()  # no such run: no page (served: 404, test_server_...)


def _listing(folder):
    return sorted((str(p.relative_to(folder)), p.stat().st_mtime_ns) for p in folder.rglob("*"))


def test_export_writes_every_page_and_nothing_into_the_runs(site, runs, tmp_path):
    before = {name: _listing(path) for name, path in runs.items()}
    done = cli_here("view", str(runs["llatrieval"].parent.parent), "--export", str(tmp_path / "site"))
    assert done.returncode == 0, done.stderr
    files = int(re.search(r"(\d+) data files", done.stderr)[1])
    assert {name: _listing(path) for name, path in runs.items()} == before
    data = tmp_path / "site" / "data"
    assert (tmp_path / "site" / "index.html").read_text().count('data-mode="static"') == 1
    assert (tmp_path / "site" / "static" / "app.js").is_file() and files == len(list(data.rglob("*.js")))
    text = (data / "example" / rid(site, "llatrieval") / "alce_asqa" / "0.js").read_text()
    assert text.startswith('RB.put("example/') and "iteration 1" in text
    assert (data / "compare" / "popqa.js").is_file()
    popqa = exported_page(site, "runs")["comparable"]["popqa"]  # the runs of the task, in the viewer's order
    for baseline in popqa:  # every run can be the baseline, as the Compare page's links ask
        order = "~".join([baseline, *(r for r in popqa if r != baseline)])
        page = json.loads((data / "compare" / "popqa" / f"{order}.js").read_text().split(", ", 1)[1].rsplit(");", 1)[0])
        assert page["runs"][0] == baseline and {p["a"] for p in page["pairs"]} == {baseline}


def test_view_command_errors_are_one_line(tmp_path):
    result = cli_here("view", str(tmp_path / "missing"))
    assert result.returncode != 0 and result.stderr.count("\n") == 1 and "missing: nothing is there" in result.stderr
    result = cli_here("view", str(tmp_path))
    assert result.returncode != 0 and "no ragbench run under" in result.stderr and "Traceback" not in result.stderr
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").write_text("{}")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        result = cli_here("view", str(tmp_path), "--port", str(busy.getsockname()[1]))
    assert result.returncode != 0 and result.stderr.count("\n") == 1 and "choose another --port" in result.stderr


def test_selfrag_long_form_outline_is_the_beam_search_tree_with_the_chosen_path(tmp_path):
    from support.matrix_fixtures import cell_config

    config = cell_config("asqa", "selfrag", tmp_path, limit=1)
    run_eval(config.pop("tasks"), config.pop("system"), config.pop("model"), **config)
    page = viewer_page([config["output"]], "example/{rid}/asqa/0")
    levels = [item for item in page["outline"] if item.get("group", "").startswith("segment ")]
    nodes = [node for level in levels for node in level["items"]]
    assert levels and len(nodes) == sum(1 for s in page["steps"] if s["name"] == "selfrag:segment")
    assert sum(node["chosen"] for node in levels[0]["items"]) == 1
    assert {"path_score", "relevance_score", "ground_score", "utility_score"} <= set(nodes[0]["info"])


def test_rows_come_in_chunks_and_full_records_only_by_offset(tmp_path, ragbench_zygote):
    run = tmp_path / "big"
    (run / "samples").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"config": {"tasks": ["t"]}}))
    with (run / "samples" / "t.jsonl").open("w") as handle:
        for i in range(1201):
            handle.write(
                json.dumps(
                    {
                        "index": i,
                        "id": f"e{i}",
                        "question": "q" * 1000,
                        "trace": [{"x": "y" * 2000}],
                        "scores": {"em": float(i % 2)},
                    }
                )
                + "\n"
            )
    with viewer_server(
        ragbench_zygote, run
    ) as viewer:  # served: the pages asked for, not all 1,201 examples an export writes
        rid = served_page(viewer, "runs")["runs"][0]["rid"]
        first, last = served_page(viewer, f"rows/{rid}/t/0"), served_page(viewer, f"rows/{rid}/t/2")
        assert (first["total"], first["chunks"], len(first["rows"]), len(last["rows"])) == (1201, 3, 500, 201)
        assert (
            last["rows"][-1]["id"] == "e1200"
            and len(last["rows"][-1]["question"]) <= 240
            and "trace" not in last["rows"][-1]
        )
        assert served_page(viewer, f"example/{rid}/t/1200")["id"] == "e1200"


def test_the_compare_page_shows_the_interval_and_p_value_that_ragbench_compare_prints(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps(
            [  # long answers holding the gold: f1 values of many sizes
                {
                    "pattern": "capital|wrote|painted",
                    "response": "Leonardo da Vinci Jane Austen Leo Tolstoy Homer Paris Tokyo "
                    "Rome Cairo Ottawa Nairobi Shakespeare",
                },
                {"response": "Jupiter Pacific Everest lion Portuguese Spanish Au Na"},
            ]
        )
    )
    for name, model in (("a", "scripted:echo"), ("b", f"scripted:{answers}")):
        run(tmp_path / "runs", name, tasks=["demo"], system="closed_book", model=model, bootstrap_iters=0)
    page = viewer_page([tmp_path / "runs"], "compare/demo/a~b")
    row = next(r for r in page["pairs"][0]["rows"] if r["metric"] == "f1" and not r["slice"])
    printed = cli_here("compare", str(tmp_path / "runs" / "a"), str(tmp_path / "runs" / "b"), "--full")
    assert printed.returncode == 0, printed.stderr
    assert (
        f"| demo | f1 | higher | all | 24 | {row['mean_a']:.4f} | {row['mean_b']:.4f} | {row['diff']:+.4f} | yes | "
        f"[{row['ci95'][0]:.4f}, {row['ci95'][1]:.4f}] | {row['p_adjusted']:.4g} | {row['p_value']:.4g} | "
        "bootstrap |"
    ) in printed.stdout


def test_the_compare_page_lists_no_right_and_wrong_for_a_key_without_a_better_value(tmp_path):
    """RGB's `rejected` (0/1) has no better direction: neither run's rejections are "right"."""
    from conftest import TEST_DATA

    rejecting = tmp_path / "rejecting.json"
    rejecting.write_text(json.dumps([{"response": "I can not answer: insufficient information in the documents."}]))
    for name, model in (("a", "scripted:echo"), ("b", f"scripted:{rejecting}")):
        run(
            tmp_path / "runs",
            name,
            tasks=["rgb_en"],
            system="closed_book",
            model=model,
            data={"rgb_en": str(TEST_DATA / "rgb" / "en.json")},
            bootstrap_iters=0,
        )
    listed = {d["metric"] for d in viewer_page([tmp_path / "runs"], "compare/rgb_en/a~b")["pairs"][0]["disagreements"]}
    assert "accuracy" in listed and "rejected" not in listed


def test_runs_with_no_metric_in_common_are_said_so_and_the_other_pairs_still_shown(tmp_path):
    for name, metrics in (("a", ["em"]), ("b", ["f1"]), ("c", ["em"])):
        run(tmp_path / "runs", name, tasks=["demo"], system="closed_book", model="scripted:echo", metrics=metrics)
    refused = cli_here("compare", str(tmp_path / "runs" / "a"), str(tmp_path / "runs" / "b"))
    assert refused.returncode == 2
    assert "share no metric scored in both (demo: em vs f1); score one with the other's metrics" in refused.stderr
    page = viewer_page([tmp_path / "runs"], "compare/demo/a~b~c")  # the export, written whole
    assert "share no metric scored in both (demo: em vs f1)" in page["error"]
    assert [(pair["a"], pair["b"]) for pair in page["pairs"]] == [("a", "c")]


def test_a_run_whose_lock_is_held_is_running_with_its_holder_and_once_killed_is_incomplete_stopped(
    tmp_path, ragbench_zygote
):
    data = write_jsonl(tmp_path / "popqa.jsonl", [{"id": "q", "question": "Q?", "answers": ["Q"], "ctxs": []}])
    out = tmp_path / "runs" / "slow"
    running = subprocess.Popen(
        [sys.executable, "-m", "ragbench", *popqa_args(data, out, "--model-arg", "overhead=60", "--no-progress")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # its one batch takes a minute
    try:
        deadline = time.monotonic() + 60
        while not ((out / "run.json").is_file() and f'"pid": {running.pid}' in _text(out / "run.lock")):
            assert running.poll() is None and time.monotonic() < deadline, "the run did not start"
            time.sleep(0.05)
        with viewer_server(ragbench_zygote, tmp_path / "runs") as viewer:  # one viewer, before and after the run's end
            try:
                [summary] = served_page(viewer, "runs")["runs"]
                assert summary["state"] == "running" and not summary["finished"]
                assert summary["holder"].startswith(f"pid {running.pid} on {socket.gethostname()}, started ")
                assert "--output " + str(out) in summary["holder"]  # its command
                assert served_page(viewer, f"rows/{summary['rid']}/popqa/0")["state"] == "running"
            finally:
                running.kill()
                running.wait(timeout=30)
            [summary] = served_page(viewer, "runs")["runs"]  # the kernel let go of the lock; no results.json
            assert summary["state"] == "stopped" and summary["holder"] is None
            assert served_page(viewer, f"run/{summary['rid']}")["state"] == "stopped"
    finally:
        running.kill()
        running.wait(timeout=30)


def _text(path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def test_a_run_in_progress_shows_its_examples_so_far(tmp_path, ragbench_zygote):
    run = tmp_path / "run"
    (run / "samples").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"config": {"tasks": ["t"], "system": "vanilla"}, "finished": False}))
    samples = run / "samples" / "t.jsonl"
    samples.write_text(
        json.dumps({"index": 0, "id": "a", "question": "q?", "error": "boom"}) + "\n" + '{"index": 1, "id": "b", "quest'
    )
    with viewer_server(ragbench_zygote, run) as viewer:  # one viewer, following the file as it grows
        rid = served_page(viewer, "runs")["runs"][0]["rid"]
        first = served_page(viewer, f"rows/{rid}/t/0")
        assert first["total"] == 1 and not first["finished"] and first["rows"][0]["error"] == "boom"
        with samples.open("a") as handle:  # the cut line is finished, then a retry of "a" succeeds
            handle.write(
                'ion": "q2?"}\n' + json.dumps({"index": 0, "id": "a", "question": "q?", "scores": {"em": 1.0}}) + "\n"
            )
        rows = served_page(viewer, f"rows/{rid}/t/0")["rows"]
        assert [(r["id"], r["error"], r["scores"]) for r in rows] == [("a", None, {"em": 1.0}), ("b", None, {})]
        assert served_page(viewer, "runs")["runs"][0]["tasks"]["t"]["counts"] == {
            "records": 2,
            "scored": 2,
            "failed": 0,
        }
        samples.write_text(json.dumps({"index": 0, "id": "z"}) + "\n")  # rewritten (the run finished): indexed again
        assert [row["id"] for row in served_page(viewer, f"rows/{rid}/t/0")["rows"]] == ["z"]


def test_server_answers_the_api_and_refuses_unknown_paths(runs, ragbench_zygote):
    with viewer_server(ragbench_zygote, runs["llatrieval"].parent.parent) as base:
        with urllib.request.urlopen(base + "/api/runs") as response:
            assert len(json.load(response)["runs"]) == 5
            assert "script-src 'self'" in response.headers["Content-Security-Policy"]
        with urllib.request.urlopen(base + "/") as response:
            assert b"static/app.js" in response.read()
        for path in ("/api/run/nope", "/static/../runs.py", "/api/example/x/y/notanumber"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(base + path)
            assert err.value.code == 404


def test_the_compare_page_compares_the_finished_runs_and_lists_a_stopped_one(tmp_path, ragbench_zygote):
    """A run stopped before its results.json (killed) beside the task's finished runs: the default Compare page
    compares the finished ones and names the other, where it showed only "compare needs finished runs"."""
    for name in ("a", "b", "stopped"):
        run(tmp_path / "runs", name, tasks=["demo"], system="closed_book", model="scripted:echo", bootstrap_iters=0)
    (tmp_path / "runs" / "stopped" / "results.json").unlink()  # as a kill before the end leaves the folder
    with viewer_server(ragbench_zygote, tmp_path / "runs") as viewer:
        [stopped] = [found["rid"] for found in served_page(viewer, "runs")["runs"] if found["name"] == "stopped"]
        page = served_page(viewer, "compare/demo")
        assert "error" not in page and len(page["runs"]) == 2 and stopped not in page["runs"]
        assert [(p["a"], p["b"]) for p in page["pairs"]] == [tuple(page["runs"])]
        assert page["unfinished"] == [stopped] and page["unfinished_note"].endswith(f"--resume finishes it): {stopped}")
        alone = served_page(viewer, f"compare/demo/{page['runs'][0]}~{stopped}")
    assert not alone.get("pairs")
    assert alone["error"].startswith("compare needs two finished runs of demo; not compared, not finished")
