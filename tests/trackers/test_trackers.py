"""A finished run logged to experiment trackers (`--wandb`, `--mlflow URI`, `ragbench log RUN`): what W&B (in its
offline mode) and MLflow (a local file store) hold afterwards, read back from them, is the run's config, headline
metrics, per-sample rows and files; a tracker that fails leaves the run saved and unchanged, with one line naming
it and the command that logs the run again (exit 75); a tracker whose package is missing is refused before the
run starts. Every tracker writes under tmp_path. The settings ragbench gives the trackers' libraries while it logs
are defaults: the user's own stand, and the environment is as it was after."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import needs
from support import paths
from support.command_zygote import Zygote
from support.helpers import cli, cli_here, samples, score_args

pytestmark = needs("wandb", "mlflow")

RUN = ("--tasks", "demo", "--system", "closed_book", "--model", "scripted:echo", "--limit", "3", "--no-progress")


def tracker_env(tmp_path: Path, mode: str = "offline") -> dict[str, str]:
    """W&B's folders under tmp_path, nothing of its in the home folder, no key: offline, or online without a key."""
    folders = {name: tmp_path / "wandb" / name for name in ("dir", "cache", "config", "data")}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    return {
        "WANDB_MODE": mode,
        "WANDB_DIR": str(folders["dir"]),
        "WANDB_CACHE_DIR": str(folders["cache"]),
        "WANDB_CONFIG_DIR": str(folders["config"]),
        "WANDB_DATA_DIR": str(folders["data"]),
        "WANDB_API_KEY": "",
        "WANDB_SILENT": "true",
    }


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


@pytest.fixture(scope="module")
def finished(tmp_path_factory, ragbench_zygote: Zygote) -> Path:
    """A finished run of three demo examples (one run for the module: logging only reads it), a fork of the
    command zygote (no tracker in it: nothing of its own process's end to show)."""
    folder = tmp_path_factory.mktemp("finished") / "run"
    done = ragbench_zygote.run([*RUN, "--output", str(folder)], dict(os.environ))
    assert done.returncode == 0, done.stderr
    return folder


def wandb_records(offline_run: Path) -> list:
    """The records of an offline W&B run's .wandb file: a 7-byte header (":W&B", its magic, its version), then
    LevelDB log records in 32 KiB blocks (4-byte checksum, 2-byte length, 1-byte type: 1 whole, 2 first, 3 middle,
    4 last), each a `Record` protobuf."""
    from wandb.proto import wandb_internal_pb2

    data = next(offline_run.glob("run-*.wandb")).read_bytes()
    assert data[:4] == b":W&B"
    block, position, pending, records = 32768, 7, b"", []
    while position + 7 <= len(data):
        if block - position % block < 7:  # a block's tail too short for a header is padding
            position += block - position % block
            continue
        length, kind = int.from_bytes(data[position + 4 : position + 6], "little"), data[position + 6]
        body = data[position + 7 : position + 7 + length]
        position += 7 + length
        if kind == 0:
            continue
        pending = body if kind in (1, 2) else pending + body
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            records.append(record)
    return records


def offline_run(tmp_path: Path) -> Path:
    (run,) = (tmp_path / "wandb" / "dir" / "wandb").glob("offline-run-*")
    return run


def logged_items(updates) -> dict:
    """A config's, summary's or history's items as the nested dict they update (the last value of each key)."""
    items: dict = {}
    for item in updates:
        *outer, last = list(item.nested_key) or [item.key]
        inner = items
        for name in outer:
            inner = inner.setdefault(name, {})
        inner[last] = json.loads(item.value_json)
    return items


def of_kind(records: list, kind: str) -> list:
    return [getattr(record, kind) for record in records if record.WhichOneof("record_type") == kind]


def md5_b64(path: Path) -> str:
    return base64.b64encode(hashlib.md5(path.read_bytes()).digest()).decode()


def test_a_run_logged_to_wandb_offline_holds_its_config_metrics_sample_rows_and_files(tmp_path):
    folder = tmp_path / "run"
    done = cli(
        *RUN,
        "--output",
        str(folder),
        "--wandb",
        "--wandb-arg",
        "project=rag",
        "--wandb-arg",
        "tags=a,b",
        env=tracker_env(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert "ragbench: warning" not in done.stderr  # W&B's service process ended with the logging
    run = offline_run(tmp_path)
    assert f"logged to W&B: {run} (an offline run: `wandb sync {run}` uploads it)" in done.stdout
    records = wandb_records(run)
    (header,) = of_kind(records, "run")
    assert (header.project, header.display_name, header.job_type, list(header.tags)) == (
        "rag",
        "run",
        "eval",
        ["a", "b"],
    )
    config = logged_items(header.config.update)
    assert (config["system"], config["model"], config["tasks"], config["limit"]) == (
        "closed_book",
        "scripted:echo",
        ["demo"],
        3,
    )
    results = json.loads((folder / "results.json").read_text())
    run_json = json.loads((folder / "run.json").read_text())
    assert config["run"]["folder"] == str(folder) and config["run"]["config_hash"] == run_json["config_hash"]
    assert config["versions"] == results["versions"]
    summary = logged_items(item for part in of_kind(records, "summary") for item in part.update)
    assert {key: summary[f"demo/{key}"] for key in results["results"]["demo"]} == results["results"]["demo"]
    assert summary["demo/counts/scored"] == 3
    history = logged_items(item for part in of_kind(records, "history") for item in part.item)
    tables = {
        key: json.loads((run / "files" / value["path"]).read_text())
        for key, value in history.items()
        if isinstance(value, dict) and value.get("_type") == "table-file"
    }
    headline = tables["results"]
    assert [row[:3] for row in headline["data"]] == [["demo", k, v] for k, v in results["results"]["demo"].items()]
    lines = samples(folder, "demo")
    table = tables["samples/demo"]
    assert table["columns"][:5] == ["id", "question", "prediction", "gold", "error"]
    assert [row[:3] for row in table["data"]] == [[s["id"], s["question"], s["prediction"]["answer"]] for s in lines]
    assert [row[5:] for row in table["data"]] == [[s["scores"][k] for k in table["columns"][5:]] for s in lines]
    (artifact,) = [artifact for artifact in of_kind(records, "artifact") if artifact.type == "ragbench-run"]
    assert (artifact.name, artifact.type) == ("run-run", "ragbench-run")
    files = {entry.path: entry.digest for entry in artifact.manifest.contents}
    on_disk = {p.relative_to(folder).as_posix(): md5_b64(p) for p in folder.rglob("*") if p.is_file()}
    assert files == {name: digest for name, digest in on_disk.items() if name != "run.lock"}
    assert "results.json" in files and "samples/demo.jsonl" in files


def test_a_samples_table_over_wandbs_row_limit_is_named_on_the_console(tmp_path, finished, monkeypatch):
    """W&B keeps the first Table.MAX_ROWS rows of a table logged to a run (10,000; 2 here): the line says so."""
    import wandb

    from ragbench._trackers.run_log import run_log
    from ragbench._trackers.trackers import TrackerRequest
    from ragbench._trackers.wandb_log import log

    for name, value in tracker_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(wandb.Table, "MAX_ROWS", 2)
    where = log(run_log(finished), TrackerRequest("wandb"))
    assert where.endswith(
        "; samples/demo shows 2 of its 3 examples (W&B's limit on a table; the artifact has them all)"
    )


def test_a_finished_run_logged_to_an_mlflow_folder_holds_its_metrics_params_tables_and_files(tmp_path, finished):
    from mlflow.tracking import MlflowClient

    before = folder_bytes(finished)
    store = tmp_path / "mlruns"
    done = cli("log", str(finished), "--mlflow", str(store), "--mlflow-arg", "experiment=rag")
    assert done.returncode == 0, done.stderr
    run_id = re.search(r"logged to MLflow: \S+ \(experiment rag, run (\w+)\)", done.stdout).group(1)
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # what ragbench sets while it logs to a folder
    try:
        client = MlflowClient(tracking_uri=store.as_uri())
        logged = client.get_run(run_id)
        artifacts = {item.path for item in client.list_artifacts(run_id)}
        logged_files = {item.path for item in client.list_artifacts(run_id, "run")}
        artifact_root = Path(client.download_artifacts(run_id, "", str(tmp_path / "back")))
    finally:
        del os.environ["MLFLOW_ALLOW_FILE_STORE"]
    results = json.loads((finished / "results.json").read_text())
    assert logged.info.status == "FINISHED" and logged.info.run_name == "run"
    assert {k: logged.data.metrics[f"demo/{k}"] for k in results["results"]["demo"]} == results["results"]["demo"]
    params = logged.data.params
    assert (params["system"], params["model"], params["tasks"]) == ("closed_book", "scripted:echo", '["demo"]')
    assert params["task_configs.demo.name"] == "demo" and params["run.folder"] == str(finished)
    assert logged.data.tags["ragbench.complete"] == "True"
    assert {"results_table.json", "samples", "run"} <= artifacts
    assert {"run/results.json", "run/run.json", "run/samples"} <= logged_files and "run/run.lock" not in logged_files
    table = json.loads((artifact_root / "samples" / "demo.json").read_text())
    lines = samples(finished, "demo")
    assert [row[0] for row in table["data"]] == [line["id"] for line in lines]
    assert (artifact_root / "run" / "samples" / "demo.jsonl").read_bytes() == before["samples/demo.jsonl"]
    assert folder_bytes(finished) == before  # logging only reads the run


def test_outputs_scored_with_ragbench_score_are_logged_as_a_run_is(tmp_path):
    from mlflow.tracking import MlflowClient

    data = paths.REPO / "tasks" / "selfrag" / "data" / "demo_qa.jsonl"
    ids = [json.loads(line)["id"] for line in data.read_text().splitlines()]
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"id": i, "output": "Paris"}) + "\n" for i in ids))
    store = tmp_path / "mlruns"
    done = cli_here(
        *score_args("demo", data, predictions), "--output", str(tmp_path / "scored"), "--mlflow", str(store)
    )
    assert done.returncode == 0, done.stderr
    run_id = re.search(r"logged to MLflow: \S+ \(experiment ragbench, run (\w+)\)", done.stdout).group(1)
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    try:
        logged = MlflowClient(tracking_uri=store.as_uri()).get_run(run_id)
    finally:
        del os.environ["MLFLOW_ALLOW_FILE_STORE"]
    assert logged.data.params["system"] == "recorded" and logged.data.metrics["demo/counts/scored"] == len(ids)


def test_a_failed_logging_keeps_the_run_and_names_the_command_that_logs_it_again(tmp_path):
    """W&B online without a key, MLflow at a path under a file: both fail for real; the run is saved, exit 75."""
    (tmp_path / "a_file").write_text("")
    folder = tmp_path / "run"
    store = tmp_path / "a_file" / "mlruns"
    done = cli(*RUN, "--output", str(folder), "--wandb", "--mlflow", str(store), env=tracker_env(tmp_path, "online"))
    assert done.returncode == 75, done.stderr
    failed = [line for line in done.stderr.splitlines() if "logging to" in line]
    assert failed == [
        f"ragbench: error: logging to W&B failed (UsageError: No API key configured. Use `wandb login` to log in.); "
        f"the run in {folder} is saved and unchanged: log it with `ragbench log {folder} --wandb`",
        f"ragbench: error: logging to MLflow at {store.as_uri()} failed (NotADirectoryError: [Errno 20] Not a "
        f"directory: '{store}'); "
        f"the run in {folder} is saved and unchanged: log it with `ragbench log {folder} --mlflow {store}`",
    ]
    assert json.loads((folder / "results.json").read_text())["complete"] is True
    again = cli("log", str(folder), "--wandb", env=tracker_env(tmp_path))  # the line's command, W&B now offline
    assert again.returncode == 0 and "logged to W&B:" in again.stdout


def test_a_folder_given_to_mlflow_is_allowed_as_a_file_store_while_it_is_logged_to(monkeypatch):
    from ragbench._trackers.mlflow_log import logging_environment, tracking_uri
    from ragbench._trackers.trackers import environment_defaults

    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    with environment_defaults(logging_environment(tracking_uri("mlruns"))):
        assert os.environ["MLFLOW_ALLOW_FILE_STORE"] == "true"
    assert "MLFLOW_ALLOW_FILE_STORE" not in os.environ
    with environment_defaults(logging_environment(tracking_uri("http://127.0.0.1:5000"))):
        assert "MLFLOW_ALLOW_FILE_STORE" not in os.environ
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "false")  # the user's own choice stands
    with environment_defaults(logging_environment(tracking_uri("mlruns"))):
        assert os.environ["MLFLOW_ALLOW_FILE_STORE"] == "false"
    assert os.environ["MLFLOW_ALLOW_FILE_STORE"] == "false"


@settings(max_examples=30, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "MLFLOW_HTTP_REQUEST_TIMEOUT",
                "MLFLOW_HTTP_REQUEST_MAX_RETRIES",
                "MLFLOW_DISABLE_TELEMETRY",
                "WANDB_CACHE_DIR",
            ]
        ),
        st.text("0123456789ab", max_size=5),
    )
)
def test_the_user_s_own_settings_stand_and_the_environment_is_as_it_was_after(users):
    from ragbench._trackers.mlflow_log import logging_environment
    from ragbench._trackers.trackers import environment_defaults
    from ragbench._trackers.wandb_log import logging_environment as wandb_environment

    ours = {**logging_environment("http://127.0.0.1:1"), **wandb_environment()}
    before = dict(os.environ)
    try:
        for name in ours:
            os.environ.pop(name, None)
        os.environ.update(users)
        kept = dict(os.environ)
        with environment_defaults(ours):
            assert {name: os.environ[name] for name in ours} == {**ours, **users}
        assert dict(os.environ) == kept
    finally:
        os.environ.clear()
        os.environ.update(before)


def test_check_says_which_trackers_are_ready(tmp_path):
    done = cli_here("check", *RUN, "--output", str(tmp_path / "run"), "--no-model", "--wandb", "--mlflow", "mlruns")
    assert done.returncode == 0, done.stderr
    assert (
        "ok  logging to W&B: its package is installed\nok  logging to MLflow: its package is installed\n" in done.stdout
    )


def test_an_incomplete_run_whose_logging_failed_exits_1_as_any_incomplete_run():
    from ragbench._cli.run.trackers import exit_after_logging

    with pytest.raises(SystemExit) as incomplete:
        exit_after_logging(["a line"], complete=False)
    with pytest.raises(SystemExit) as complete:
        exit_after_logging(["a line"], complete=True)
    assert (incomplete.value.code, complete.value.code) == (1, 75)
    assert exit_after_logging([], complete=True) is None


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("--wandb-arg", "project=x"), "--wandb-arg project=x: give --wandb to log the run to W&B"),
        (("--mlflow-arg", "experiment=x"), "--mlflow-arg experiment=x: give --mlflow URI to log the run to MLflow"),
        (("--wandb", "--wandb-arg", "entity"), "--wandb-arg 'entity': expected KEY=VALUE"),
        (
            ("--wandb", "--wandb-arg", "reinit=true"),
            "--wandb-arg reinit: not an option of W&B logging; one of project, entity, name, group, job_type, "
            "tags, notes, mode, dir",
        ),
        (
            ("--mlflow", " "),
            "--mlflow: give the tracking URI, e.g. --mlflow mlruns (a local folder) or http://HOST:5000",
        ),
    ],
)
def test_a_malformed_tracker_option_is_refused_before_the_run_starts(tmp_path, args, line):
    done = cli_here(*RUN, "--output", str(tmp_path / "run"), *args)
    assert (done.returncode, done.stderr) == (2, f"ragbench: error: {line}\n")
    assert not (tmp_path / "run").exists()


def test_a_tracker_whose_package_is_missing_is_refused_before_the_run_starts(tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mlflow" else real(name, *a))
    done = cli_here(*RUN, "--output", str(tmp_path / "run"), "--mlflow", str(tmp_path / "mlruns"))
    assert done.returncode == 2
    assert re.fullmatch(
        r"ragbench: error: --mlflow: the mlflow package is not installed: pip install (-e )?\S+\[mlflow\]\S*\n",
        done.stderr,
    )
    assert not (tmp_path / "run").exists() and not (tmp_path / "mlruns").exists()


def test_log_refuses_a_folder_that_is_no_finished_run_before_any_tracker_starts(tmp_path):
    (tmp_path / "empty").mkdir()
    done = cli_here("log", str(tmp_path / "empty"), "--mlflow", str(tmp_path / "mlruns"))
    assert (done.returncode, done.stderr) == (
        2,
        f"ragbench: error: log: {tmp_path / 'empty'} has no results.json (give the folder of a finished ragbench run)\n",
    )
    assert not (tmp_path / "mlruns").exists()
    nothing = cli_here("log", str(tmp_path / "empty"))
    assert (
        nothing.stderr == "ragbench: error: log: give --wandb, --mlflow URI or both (the trackers to log the run to)\n"
    )


nested = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8000),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=300), inner, max_size=4),
    max_leaves=12,
)


@given(st.dictionaries(st.text(max_size=300), nested, max_size=5))
def test_every_param_of_a_config_is_one_mlflow_accepts(config):
    from mlflow.utils.validation import _validate_param

    from ragbench._trackers.mlflow_log import MAX_PARAM_CHARS, flattened

    for name, value in flattened(config):
        _validate_param(name, value)  # raises for a key or value MLflow refuses
        assert len(value) <= MAX_PARAM_CHARS


@given(st.text(max_size=400))
def test_every_run_folder_name_makes_an_artifact_name_wandb_accepts(name):
    from wandb.sdk.artifacts.artifact import Artifact

    from ragbench._trackers.wandb_log import artifact_name

    Artifact(artifact_name(name), type="ragbench-run")  # raises for a name W&B refuses
