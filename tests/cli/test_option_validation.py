"""Every numeric option and every engine option is checked before anything runs: a value of the wrong
type or out of range, or an option the engine does not know, is one line naming the option, the value and
what it takes (the known options for an unknown one); exit 2 and no run folder."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_engine_vllm import FakeLLM, fake_vllm  # noqa: F401 (the fixture)  # noqa: F401 (the fixture)

from conftest import write_jsonl
from ragbench.testing import PreflightError, cli, run_eval
from support.helpers import closed_port


def refused(tmp_path: Path, *args: str) -> str:
    """The one error line of a run the command line refuses (exit 2, no traceback, nothing written)."""
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, [*args, "--no-progress", "--output", str(out)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    assert not out.exists(), "the refused run wrote its folder"
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("ragbench: error: ")
    return line.removeprefix("ragbench: error: ")


@pytest.mark.parametrize(
    "option,value,expected",
    [
        ("--seed", "-5", "--seed -5: give at least 0"),
        ("--seed", "abc", "Invalid value for '--seed': 'abc' is not a valid integer."),
        ("--limit", "0", "--limit 0: give at least 1, or leave it out for all records"),
        ("--limit", "2.5", "Invalid value for '--limit': '2.5' is not a valid integer."),
        ("--max-inflight", "0", "--max-inflight 0: give at least 1"),
        ("--max-inflight", "-3", "--max-inflight -3: give at least 1"),
        ("--bootstrap-iters", "-1", "--bootstrap-iters -1: give at least 0 (0: no intervals)"),
    ],
)
def test_a_bad_number_is_one_line_and_nothing_runs(tmp_path, option, value, expected):
    assert refused(tmp_path, "--tasks", "demo", "--model", "scripted:echo", option, value).startswith(expected)


def test_an_unknown_option_is_one_line_naming_the_near_ones(tmp_path):
    line = refused(tmp_path, "--tasks", "demo", "--sed", "3")
    assert line.startswith("No such option '--sed'. (Did you mean one of: '--seed'")


def test_numbers_given_through_the_api_are_checked_too(tmp_path):
    with pytest.raises(PreflightError) as caught:
        run_eval("demo", model="scripted:echo", seed=-5, limit="3", output=tmp_path / "r")
    assert caught.value.problems == [
        "--seed -5: give at least 0",
        "--limit 3: give an integer of at least 1, or leave it out for all records",
    ]
    assert not (tmp_path / "r").exists()


def test_compare_refuses_a_negative_seed_in_one_line(tmp_path):
    result = CliRunner().invoke(cli, ["compare", str(tmp_path), str(tmp_path), "--seed", "-1"])
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("ragbench: error: Invalid value for '--seed': -1 is not in the range x>=0.")


# --- engine options, every engine, before any engine loads -------------------------------------------------
def problems(tmp_path: Path, **config) -> list[str]:
    with pytest.raises(PreflightError) as caught:
        run_eval("demo", output=tmp_path / "r", **{"model": None, **config})  # refused before it starts
    return caught.value.problems


@pytest.mark.parametrize(
    "model,options,expected",
    [
        (
            "scripted:echo",
            {"nonsense": 1},
            "--model scripted:echo: unknown option(s) nonsense (accepted: batch_size, "
            "overhead, per_request, per_token, script, tokenizer)",
        ),
        (
            "scripted:echo",
            {"batch_size": 0},
            "--model scripted:echo: --model-arg batch_size=0: the scripted engine takes "
            "an integer >= 1 for batch_size (batch_size=<int >= 1, default 16>)",
        ),
        (
            "scripted:echo",
            {"overhead": "slow"},
            "--model scripted:echo: --model-arg overhead=slow: the scripted engine takes a number >= 0 for overhead",
        ),
        (
            "hf:embedded",
            {"threads": 0},
            "--model hf:embedded: --model-arg threads=0: the hf engine takes an integer >= 1 or null for threads",
        ),
        (
            "hf:embedded",
            {"dtype": "float64"},
            "--model hf:embedded: --model-arg dtype=float64: the hf engine takes one of "
            "float32, float16, bfloat16, auto or null for dtype",
        ),
        (
            "hf:embedded",
            {"batch_size": -2},
            "--model hf:embedded: --model-arg batch_size=-2: the hf engine takes one of "
            "auto or an integer >= 1 or null for batch_size",
        ),
        (
            "openai:m",
            {"concurrency": 0},
            "--model openai:m: --model-arg concurrency=0: the openai engine takes an integer >= 1 for concurrency",
        ),
        (
            "openai:m",
            {"mode": "completions"},
            "--model openai:m: --model-arg mode=completions: the openai engine takes one of auto, chat for mode",
        ),
        (
            "openai:m",
            {"temperature": 0.5},
            "--model openai:m: --model-arg temperature: cannot be an option; it comes "
            "from the request's sampling parameters",
        ),
        (
            "openai:m",
            {"api_key": "sk-x"},
            "--model openai:m: --model-arg api_key: secrets are not accepted as --model-arg",
        ),
        (
            "scripted:echo",
            {"replicas": 0},
            "--model scripted:echo: --model-arg replicas=0: Ray replicas take an integer >= 1 for replicas",
        ),
    ],
)
def test_an_engine_option_is_checked_before_the_engine_loads(tmp_path, model, options, expected):
    with closed_port() as port:
        if model.startswith("openai"):
            options = {"base_url": f"http://127.0.0.1:{port}/v1", **options}
        found = problems(tmp_path, model=model, model_args=options)
    assert any(p.startswith(expected) for p in found), found


def test_a_replay_engine_takes_no_option_of_another_engine(tmp_path):
    calls = write_jsonl(tmp_path / "calls.jsonl", [{"prompt": "x", "response": "y"}])
    assert problems(tmp_path, model=f"replay:{calls}", model_args={"batch_size": 4}) == [
        f"--model replay:{calls}: unknown option(s) batch_size (accepted: cacheable, role)"
    ]


@pytest.mark.usefixtures("fake_vllm")
def test_vllm_options_are_typed_and_named_before_vllm_starts(tmp_path, monkeypatch):
    import vllm

    @dataclasses.dataclass
    class EngineArgs:  # the fields of vLLM's EngineArgs the fake knows
        model: str = ""
        max_logprobs: int = 20
        enforce_eager: bool = False
        kv_cache_dtype: str = "auto"

    monkeypatch.setattr(vllm, "EngineArgs", EngineArgs, raising=False)
    found = problems(
        tmp_path,
        model="vllm:/models/m",
        model_args={
            "gpu_memory_utilization": 1.5,
            "max_logprobs": -5,
            "kv_cache_dtype": "fp8",
            "tensor_paralel_size": 2,
        },
    )
    assert found == [
        "--model vllm:/models/m: unknown option(s) tensor_paralel_size; did you mean 'tensor_parallel_size'? "
        "(accepted: async_engine, cache_dir, cpu_offload_gb, "
        "dtype, enable_lora, enforce_eager, gpu_memory_utilization, max_logprobs, max_lora_rank, max_loras, "
        "max_model_len, max_num_batched_tokens, max_num_seqs, pipeline_parallel_size, quantization, swap_space, "
        "tensor_parallel_size, tool_parser, trust_remote_code, or any other vllm.EngineArgs field)",
        "--model vllm:/models/m: --model-arg gpu_memory_utilization=1.5: the vllm engine takes a number > 0 and <= 1 "
        "for gpu_memory_utilization (gpu_memory_utilization=<float > 0 <= 1>)",
        "--model vllm:/models/m: --model-arg max_logprobs=-5: the vllm engine takes an integer >= -1 for max_logprobs "
        "(max_logprobs=<int >= -1>)",
    ]
    assert FakeLLM.instances == []  # nothing was loaded


def test_each_engine_flag_is_named_in_its_own_problems(tmp_path):
    found = problems(
        tmp_path,
        system="smart",
        model="scripted:echo",
        role_models={"locator": "scripted:echo"},
        role_model_args={"locator": {"batch_size": 0}},
        judges=["scripted:echo"],
        judge_args={"0": {"overhead": -1}},
        metrics=["+llm_judge"],
    )
    assert (
        "--role-model locator=scripted:echo: --role-model-arg locator.batch_size=0: the scripted engine takes an "
        "integer >= 1 for batch_size (batch_size=<int >= 1, default 16>)"
    ) in found
    assert (
        "--judge scripted:echo: --judge-arg 0.overhead=-1: the scripted engine takes a number >= 0 for overhead "
        "(overhead=<float >= 0, default 0.0>)"
    ) in found


def test_an_nli_option_is_checked_when_a_metric_needs_nli(tmp_path):
    with pytest.raises(PreflightError) as caught:
        run_eval(
            "alce_asqa", model="scripted:echo", nli="scripted:echo", nli_args={"per_token": -1}, output=tmp_path / "r"
        )
    assert any(
        p.startswith("--nli scripted:echo: --nli-arg per_token=-1: the scripted engine takes a number >= 0")
        for p in caught.value.problems
    ), caught.value.problems
