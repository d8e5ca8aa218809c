"""The pre-flight: every problem of a run's options, data and prerequisites listed at once, each one
line naming the option that fixes it, exit 2, and nothing written (no run folder at all)."""

from __future__ import annotations

import bz2
import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write_jsonl
from ragbench.api import Example, Task
from ragbench.testing import PreflightError, Registry, cli, embedded_model, run_eval
from support.crag_helpers import crag_record, tokenizer_dir
from support.helpers import closed_port
from support.run_builders import LoadCounted, counting_registry


def ragbench(*args: str, registry: Registry | None = None):
    """The CLI in-process (its plugins: `registry`'s, else the installed ones); returns (exit code, stdout, stderr)."""
    result = CliRunner().invoke(cli, list(args), obj=registry)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def refused(tmp_path: Path, *args: str, registry: Registry | None = None) -> list[str]:
    """Run with `args`: exit 2, no traceback, nothing written; the error lines."""
    out = tmp_path / "run"
    code, _, err = ragbench(*args, "--no-progress", "--output", str(out), registry=registry)
    assert code == 2, err
    assert "Traceback" not in err
    assert not out.exists(), "the refused run wrote its folder"
    lines = err.strip().splitlines()
    assert lines and all(line.startswith("ragbench: error: ") for line in lines), err
    return lines


def test_every_problem_is_listed_at_once_each_naming_its_option(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    lines = refused(
        tmp_path,
        "--tasks",
        "demo,popqa",
        "--data",
        f"popqa={empty}",
        "--model",
        "hff:embedded",
        "--task-arg",
        "nope=1",
        "--metrics",
        "+llm_judge",
    )
    text = "\n".join(lines)
    assert len(lines) == 4, text
    assert "--task-arg nope=...: no selected task accepts 'nope'" in text
    assert f"task popqa: {empty} holds no record; pass --data popqa=PATH" in text
    assert "--model hff:embedded: unknown engine 'hff'; did you mean 'hf'?" in text
    assert "need a judge model; pass --judge ENGINE:MODEL" in text


def crag_refused(tmp_path: Path, task: str, path: Path, tokenizer: str | Path, *task_args: str) -> list[str]:
    """The error lines of a refused run of the CRAG task `task` on the data file `path` with the tokenizer
    `tokenizer` and the task options `task_args` (KEY=VALUE), scored by crag_human."""
    options = [part for arg in (f"tokenizer={tokenizer}", *task_args) for part in ("--task-arg", arg)]
    return refused(
        tmp_path,
        "--tasks",
        task,
        "--data",
        f"{task}={path}",
        "--model",
        "scripted:echo",
        *options,
        "--metrics",
        "crag_human",
    )


def test_a_non_utf8_byte_is_refused_with_its_line_and_byte_offset(tmp_path, popqa_records):
    path = write_jsonl(tmp_path / "popqa.jsonl", popqa_records[:2])
    path.write_bytes(path.read_bytes() + b'{"question": "caf\xe9"}\n')
    [line] = refused(tmp_path, "--tasks", "popqa", "--data", f"popqa={path}", "--model", "scripted:echo")
    offset = path.read_bytes().index(b"\xe9")
    assert line == (
        f"ragbench: error: task popqa: {path}: line 3 (byte offset {offset}) is not UTF-8 "
        "(invalid continuation byte, byte 0xe9); fix the file or pass --data popqa=PATH"
    )


def test_an_empty_data_file_is_refused(tmp_path):
    path = tmp_path / "popqa.jsonl"
    path.write_text("\n\n")
    [line] = refused(tmp_path, "--tasks", "popqa", "--data", f"popqa={path}", "--model", "scripted:echo")
    assert line == f"ragbench: error: task popqa: {path} holds no record; pass --data popqa=PATH to a file with records"


def test_a_file_that_is_not_json_is_refused_before_the_model_loads(tmp_path):
    path = tmp_path / "popqa.jsonl"
    path.write_text("question,answers\nwho?,me\n")
    args = ["--tasks", "popqa", "--data", f"popqa={path}", "--model", "counted:echo"]
    [line] = refused(tmp_path, *args, registry=counting_registry())
    assert LoadCounted.loads == 0  # no model was loaded
    assert f"task popqa: none of the first 2 record(s) of {path} is usable" in line and "not valid JSON" in line


def test_crag_task3_given_plain_jsonl_is_refused_as_not_its_archive(tmp_path):
    path = write_jsonl(tmp_path / "crag.jsonl", [crag_record(0)])
    [line] = crag_refused(tmp_path, "crag_t3", path, tokenizer_dir(), "kg=false")
    assert "not a readable .tar.bz2 archive" in line and "Tasks 1 and 2's format: --tasks crag_t1/crag_t2" in line


def test_a_crag_file_with_no_record_in_the_split_is_refused(tmp_path):
    path = tmp_path / "crag.jsonl.bz2"
    path.write_bytes(
        bz2.compress("".join(json.dumps({**crag_record(i), "split": 0}) + "\n" for i in range(3)).encode())
    )
    [line] = crag_refused(tmp_path, "crag_t1", path, tokenizer_dir())
    assert "none of its 3 records is in split=public_test (split 1; splits found: 0 (validation))" in line
    assert "--task-arg split=validation, public_test or all" in line


def _word_tokenizer(folder: Path, size: int) -> Path:
    """A tokenizer.json that is not Llama-2's (of SmolLM2's vocabulary size, 49152)."""
    from tokenizers import Tokenizer, models

    folder.mkdir()
    Tokenizer(models.WordLevel(vocab={f"t{i}": i for i in range(size)}, unk_token="t0")).save(
        str(folder / "tokenizer.json")
    )
    return folder


def test_a_tokenizer_that_is_not_llama2_is_refused_whatever_its_folder_is_called(tmp_path):
    folder = _word_tokenizer(tmp_path / "llama2_tokenizer", 49152)
    path = write_jsonl(tmp_path / "crag.jsonl", [crag_record(1)])
    [line] = crag_refused(tmp_path, "crag_t1", path, folder)
    assert f"task crag_t1: {folder} is not the Llama-2 tokenizer (a vocabulary of 49152 entries" in line
    assert "pass --task-arg tokenizer=DIR" in line


def test_a_tokenizer_file_is_parsed_once_until_it_changes(tmp_path, monkeypatch):
    """Every CRAG run checks the tokenizer: an unchanged tokenizer.json is parsed once a process, and one
    replaced in place (here by Llama-2's, then by another vocabulary) is read again."""
    import shutil

    import tokenizers

    from ragbench.tasks.crag.preflight import llama2_tokenizer_problem

    parsed, real = [], tokenizers.Tokenizer

    class Counted:
        @staticmethod
        def from_file(path: str):
            parsed.append(path)
            return real.from_file(path)

    folder = _word_tokenizer(tmp_path / "tok", 49152)
    with monkeypatch.context() as patched:
        patched.setattr(tokenizers, "Tokenizer", Counted)
        for _ in range(3):
            assert "a vocabulary of 49152 entries" in llama2_tokenizer_problem(folder)
    assert len(parsed) == 1
    shutil.copyfile(Path(tokenizer_dir()) / "tokenizer.json", folder / "tokenizer.json")
    assert llama2_tokenizer_problem(folder) is None
    _word_tokenizer(tmp_path / "other", 100)
    (tmp_path / "other" / "tokenizer.json").replace(folder / "tokenizer.json")
    assert "a vocabulary of 100 entries" in llama2_tokenizer_problem(folder)


@pytest.mark.model
def test_smollm2s_tokenizer_passed_as_llama2s_is_refused(tmp_path):
    from transformers import AutoTokenizer

    from ragbench.tasks.crag.preflight import llama2_tokenizer_problem

    # from the session's converted copy (tests/conftest.py): reading it from the GGUF parses the whole file
    AutoTokenizer.from_pretrained(embedded_model()).save_pretrained(tmp_path / "tok")
    assert "is not the Llama-2 tokenizer (a vocabulary of 49152 entries" in llama2_tokenizer_problem(tmp_path / "tok")


def test_a_kg_api_that_does_not_answer_is_refused(tmp_path):
    path = write_jsonl(tmp_path / "crag.jsonl", [crag_record(1)])
    with closed_port() as port:
        url = f"http://127.0.0.1:{port}"
        [line] = crag_refused(tmp_path, "crag_t2", path, tokenizer_dir(), f"kg_url={url}")
    assert f"task crag_t2: the mock KG API gives no answer from {url}/ within 3 s" in line
    assert "--task-arg kg=false" in line


def test_a_server_that_does_not_answer_is_refused_within_seconds(tmp_path):
    with closed_port() as port:
        url = f"http://127.0.0.1:{port}/v1"
        started = time.monotonic()
        [line] = refused(tmp_path, "--tasks", "demo", "--model", "openai:some-model", "--base-url", url)
    assert time.monotonic() - started < 15
    assert f"--model openai:some-model: no answer from {url}/models within 3 s" in line
    assert "correct --base-url" in line


def test_an_unknown_engine_is_refused(tmp_path):
    [line] = refused(tmp_path, "--tasks", "demo", "--model", "hff:embedded")
    assert line == (
        "ragbench: error: --model hff:embedded: unknown engine 'hff'; did you mean 'hf'? "
        "(`ragbench list engines` shows them all)"
    )


def test_an_engine_option_the_engine_does_not_take_is_refused_before_it_loads(tmp_path):
    [line] = refused(tmp_path, "--tasks", "demo", "--model", "hf:embedded", "--model-arg", "nonsense=1")
    assert line == (
        "ragbench: error: --model hf:embedded: unknown option(s) nonsense "
        "(accepted: batch_size, cudnn_attention, device, dtype, max_batch_size, max_batch_tokens, prefix_cache_mb, "
        "threads, tool_parser, trust_remote_code)"
    )


def test_a_judge_option_names_the_judge_flag(tmp_path):
    [line] = refused(
        tmp_path,
        "--tasks",
        "demo",
        "--model",
        "scripted:echo",
        "--judge",
        "hf:embedded",
        "--judge-arg",
        "0.nonsense=1",
        "--metrics",
        "+llm_judge",
    )
    assert line.startswith("ragbench: error: --judge hf:embedded: unknown option(s) nonsense")


def test_max_inflight_zero_is_refused(tmp_path):
    out = tmp_path / "run"
    code, _, err = ragbench("--tasks", "demo", "--model", "scripted:echo", "--max-inflight", "0", "--output", str(out))
    assert code == 2 and err == "ragbench: error: --max-inflight 0: give at least 1\n"
    assert not out.exists()
    with pytest.raises(PreflightError, match=r"^--max-inflight 0: give at least 1$"):  # through the API too
        run_eval("demo", model="scripted:echo", max_inflight=0, output=out)


def test_output_naming_an_existing_file_is_refused_and_the_file_kept(tmp_path):
    taken = tmp_path / "notes.txt"
    taken.write_text("mine")
    code, _, err = ragbench("--tasks", "demo", "--model", "scripted:echo", "--no-progress", "--output", str(taken))
    assert code == 2 and err == (
        f"ragbench: error: --output {taken}: is a file, not a folder; choose a folder "
        "(new, or a run's with --resume / --overwrite)\n"
    )
    assert taken.read_text() == "mine"


def test_compare_output_naming_an_existing_file_is_refused(tmp_path):
    taken = tmp_path / "notes.txt"
    taken.write_text("mine")
    code, _, err = ragbench("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--output", str(taken))
    assert code == 2 and err.startswith(f"ragbench: error: compare --output {taken}: is a file, not a folder")
    assert taken.read_text() == "mine"


def test_a_model_the_system_cannot_use_is_refused_before_the_run_folder_exists(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(PreflightError, match=r"^selfrag: model echo lacks Self-RAG's reflection tokens"):
        run_eval("demo", "selfrag", "tokenless:echo", output=out, registry=counting_registry())
    assert not out.exists()


def test_ragbench_check_prints_what_it_checked_and_writes_nothing(tmp_path):
    out = tmp_path / "run"
    code, stdout, err = ragbench("check", "--tasks", "demo", "--model", "scripted:echo", "--output", str(out))
    assert code == 0, err
    assert "ok  task demo: " in stdout and "read (a record parsed)" in stdout
    assert "ok  --model scripted:echo" in stdout and "ok  system vanilla can use model echo (demo)" in stdout
    assert stdout.strip().endswith(f"ragbench check: ready to run (the run folder will be {out})")
    assert not out.exists()


def test_ragbench_check_lists_every_problem_and_exits_2(tmp_path):
    out = tmp_path / "run"
    code, stdout, err = ragbench(
        "check", "--tasks", "demo", "--model", "hff:x", "--task-arg", "nope=1", "--output", str(out)
    )
    assert code == 2 and len(err.strip().splitlines()) == 2 and not out.exists()


class FussyTask(Task):
    """A third-party task with a prerequisite of its own (an environment variable)."""

    name = "fussy"

    def preflight(self, check) -> None:
        super().preflight(check)
        check.problem("task fussy: $FUSSY_HOME is not set; export FUSSY_HOME=DIR")

    def examples(self):
        yield Example(id="1", question="q", gold={"answers": ["a"]})


def test_a_plugin_adds_its_own_checks_through_its_preflight_hook(tmp_path):
    registry = Registry.discover()
    registry.add_catalog({"tasks": {"fussy": {"target": "test_preflight:FussyTask"}}}, "tests")
    out = tmp_path / "run"
    with pytest.raises(PreflightError) as caught:
        run_eval("fussy", model="hff:x", output=out, registry=registry)
    assert caught.value.problems == [
        "task fussy: $FUSSY_HOME is not set; export FUSSY_HOME=DIR",
        "--model hff:x: unknown engine 'hff'; did you mean 'hf'? (`ragbench list engines` shows them all)",
    ]
    assert not out.exists()


@settings(max_examples=6, deadline=None)
@given(order=st.permutations(["nosuch", "demo", "fictional_multihop"]))
def test_every_data_key_is_checked_whatever_the_order_of_the_keys(tmp_path_factory, order) -> None:
    """A --data key that names no task used to end the reading of the others (their tasks were then neither
    built nor checked): now each key is said, in any order, with every other problem of the run."""
    tmp_path = tmp_path_factory.mktemp("order")
    paths = {"nosuch": "x.jsonl", "demo": str(tmp_path / "missing.jsonl"), "fictional_multihop": "y.jsonl"}
    args = [arg for key in order for arg in ("--data", f"{key}={paths[key]}")]
    lines = refused(tmp_path, "--tasks", "demo", "--model", "scripted:echo", *args)
    assert sorted(lines) == sorted(
        [
            "ragbench: error: unknown task 'nosuch' (`ragbench list tasks` shows them all)",
            f"ragbench: error: --data demo={paths['demo']}: no such file or folder",
            "ragbench: error: --data fictional_multihop=...: task 'fictional_multihop' is not among --tasks",
        ]
    )


def test_a_task_that_fails_to_load_leaves_the_other_tasks_their_data(tmp_path) -> None:
    """Each task's --data is read once for the run, before the tasks load: a task whose plugin fails to import
    is one problem, and the other tasks are still checked on the files given to them."""
    registry = Registry.discover()
    registry.add_catalog({"tasks": {"broken": {"target": "tests_no_such_module:Task"}}}, "tests")
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(PreflightError) as refused:
        run_eval(["broken", "demo"], data={"demo": missing}, output=tmp_path / "run", registry=registry)
    problems = refused.value.problems
    assert f"--data demo={missing}: no such file or folder" in problems
    assert any("failed to load tests_no_such_module:Task" in problem for problem in problems), problems
