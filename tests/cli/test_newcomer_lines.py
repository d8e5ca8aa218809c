"""What a newcomer meets, each said in one clear line: a task alias named as the task it runs, a model the hub
cannot give failing at once, and install hints naming the folder ragbench was installed from."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT, TEST_DATA
from ragbench._cli.install_hints import for_this_install, installed_from
from ragbench._cli.outcomes import config_error
from ragbench._errors import EXIT_CONFIG, ConfigError
from support.helpers import cli_here, cli_run_args, closed_port


def test_a_task_alias_is_said_to_be_the_task_it_runs(tmp_path):
    done = cli_here(
        "--tasks",
        "fever",
        "--data",
        f"pubhealth={TEST_DATA / 'selfrag' / 'health_claims_processed.sample.jsonl'}",
        "--limit",
        "2",
        "--system",
        "closed_book",
        "--model",
        "scripted:echo",
        "--output",
        str(tmp_path / "run"),
    )
    assert done.returncode == 0, done.stderr
    first = done.stderr.splitlines()[0]
    assert first == (
        "ragbench: --tasks fever is an alias of task pubhealth (PubHealth claim verification): its "
        "results are under pubhealth"
    )
    assert list(json.loads((tmp_path / "run" / "results.json").read_text())["results"]) == ["pubhealth"]


def test_a_task_named_by_its_own_name_or_a_group_gets_no_alias_line(tmp_path):
    done = cli_here(
        *cli_run_args("scripted:echo", "--limit", "1", "--output", str(tmp_path / "run")),
    )
    assert done.returncode == 0 and "alias" not in done.stderr


def test_a_model_neither_on_disk_nor_cached_fails_at_once_when_the_hub_cannot_be_reached(
    tmp_path, monkeypatch, ragbench_zygote
):
    """A command of its own (a fork of the tests' command zygote, which has not imported huggingface_hub): the hub
    client reads HF_ENDPOINT and HF_HOME as the command imports it."""
    for offline in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):  # the command gets this process's environment
        monkeypatch.delenv(offline, raising=False)
    with closed_port() as port:
        env = {**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_HOME": str(tmp_path / "hf")}
        done = ragbench_zygote.run(
            cli_run_args("hf:someorg/not-a-model", "--limit", "1", "--output", str(tmp_path / "run")), env
        )
    assert done.returncode == EXIT_CONFIG
    [line] = [line for line in done.stderr.splitlines() if line.startswith("ragbench: error:")]
    assert (
        "hf engine: model 'someorg/not-a-model' is neither a folder on disk nor in the Hugging Face cache "
        f"({tmp_path / 'hf' / 'hub'}), and the hub cannot be reached: no answer from" in line
    )
    assert "Retry" not in done.stderr  # no retries of the hub client before the line


def test_this_checkout_is_where_install_hints_point():
    """The suite runs on ragbench installed from its folder (the README's `pip install -e`)."""
    assert installed_from() == (str(ROOT), True)
    for hint in ("pip install ragbench[vllm]", "pip install 'ragbench[vllm]'", 'pip install "ragbench[vllm]"'):
        assert for_this_install(f"run `{hint}`; then again") == f"run `pip install -e '{ROOT}[vllm]'`; then again"


@given(st.text())
def test_text_without_an_install_hint_is_left_as_it_is(text):
    if "ragbench[" not in text:
        assert for_this_install(text) == text


def test_a_configuration_error_names_the_install_the_user_has(capsys):
    with pytest.raises(SystemExit) as stopped:
        config_error(ConfigError("--model vllm:x: the vllm engine needs vLLM; run `pip install ragbench[vllm]`"))
    assert stopped.value.code == EXIT_CONFIG
    assert capsys.readouterr().err == (
        f"ragbench: error: --model vllm:x: the vllm engine needs vLLM; run `pip install -e '{ROOT}[vllm]'`\n"
    )
