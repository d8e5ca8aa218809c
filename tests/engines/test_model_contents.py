"""A local model is identified by its files, not its name: weights saved over a model folder get no answers
from a shared cache made with the old ones, and a run started on the old weights is not resumed on the new."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ragbench._engines.local.content import BLOCK, content_digest
from support.helpers import cli_here, cli_run_args
from support.tiny_models import tiny_gpt2


def write_model(folder, weights: bytes):
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "llama"}')
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def test_the_digest_follows_the_bytes_of_the_weights_not_the_folder_name_or_time(tmp_path):
    weights = bytearray(os.urandom(3 * 1024 * 1024))  # past the whole-file size: blocks are sampled
    model = write_model(tmp_path / "m", bytes(weights))
    digest = content_digest(model)
    copy = tmp_path / "copy"
    shutil.copytree(model, copy)  # another name, other times
    (copy / ".cache").mkdir()
    (copy / ".cache" / "lock").write_text("x")  # hidden: huggingface_hub's bookkeeping
    assert content_digest(copy) == digest
    weights[len(weights) // 3 : len(weights) // 3 + 40 * BLOCK] = os.urandom(40 * BLOCK)  # 160 kB retrained
    write_model(copy, bytes(weights))
    assert content_digest(copy) != digest
    write_model(copy, bytes(weights[:-1]))  # the size alone
    assert content_digest(copy) != content_digest(write_model(tmp_path / "n", bytes(weights)))
    (tmp_path / "n" / "config.json").write_text('{"model_type": "mistral"}')  # a small file: every byte
    assert content_digest(tmp_path / "n") != content_digest(write_model(tmp_path / "o", bytes(weights)))
    assert content_digest(tmp_path / "nowhere") is None and content_digest(model / "config.json") is not None


def test_the_hf_engine_keys_its_cache_by_the_weights_of_a_local_folder(tmp_path):
    pytest.importorskip("transformers")
    from ragbench._engines.hf.engine import HFEngine

    model = tiny_gpt2(tmp_path / "m")
    before = HFEngine(str(model), device="cpu")
    import torch
    from transformers import AutoModel

    weights = AutoModel.from_pretrained(model)
    with torch.no_grad():
        for parameter in weights.parameters():
            parameter.add_(1.0)
    weights.save_pretrained(model)  # trained further, saved over the same folder
    after = HFEngine(str(model), device="cpu")
    assert before.engine_id.startswith(f"hf:{model};dtype=float32;content=")
    assert after.engine_id != before.engine_id and after.content_id != before.content_id


def demo_args(rules: Path, out: Path) -> list[str]:
    """The command line of a closed-book run of four demo examples on the scripted model of `rules`."""
    return cli_run_args(
        f"scripted:{rules}", "--limit", "4", "--no-progress", "--bootstrap-iters", "0", "--output", str(out)
    )


def test_resume_is_refused_in_one_line_when_the_models_files_changed(tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"pattern": "France", "response": "Paris"}]))  # 3 of 4 fail: a run to resume
    args = demo_args(rules, tmp_path / "run")
    first = cli_here(*args)
    assert "3 failed" in first.stderr + first.stdout, first.stderr
    saved = (tmp_path / "run" / "samples" / "demo.jsonl").read_bytes()
    rules.write_text(json.dumps([{"response": "Paris"}]))  # the same file name, another model
    resumed = cli_here(*args, "--resume")
    assert resumed.returncode == 2
    line = resumed.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert f'the files of a model changed since the run started (model: "scripted:{rules} ' in line
    assert "--overwrite runs it again" in line
    assert (tmp_path / "run" / "samples" / "demo.jsonl").read_bytes() == saved
    rules.write_text(json.dumps([{"pattern": "France", "response": "Paris"}]))  # back as it was: resumes
    again = cli_here(*args, "--resume")
    assert again.returncode == 1 and "incomplete run (demo: 3 failed" in again.stderr, again.stderr


@pytest.mark.parametrize("damage", [{"model_contents": ["x"]}, {"task_configs": "x"}])
def test_a_run_json_whose_recorded_inputs_were_changed_by_hand_is_named_in_one_line(tmp_path, damage):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"pattern": "France", "response": "Paris"}]))
    args = demo_args(rules, tmp_path / "run")
    cli_here(*args)
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    meta["config"].update(damage)
    (tmp_path / "run" / "run.json").write_text(json.dumps(meta))
    saved = (tmp_path / "run" / "samples" / "demo.jsonl").read_bytes()
    resumed = cli_here(*args, "--resume")
    assert resumed.returncode == 2 and "Traceback" not in resumed.stderr
    assert f"run.json: its config.{next(iter(damage))} is not what ragbench writes" in resumed.stderr.strip()
    assert (tmp_path / "run" / "samples" / "demo.jsonl").read_bytes() == saved
