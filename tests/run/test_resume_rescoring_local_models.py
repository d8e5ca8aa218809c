"""--resume of a finished run whose only work left is metrics that failed: the system's model is not loaded,
yet a model kept in local files (a `scripted:` rules file, a local `hf:` folder) is told by its files. The
same files re-score; files that changed since the run started are refused."""

from __future__ import annotations

import json

import pytest

from ragbench.api import ConfigError
from ragbench.testing import run_eval
from support import scoring_plugin
from support.scoring_plugin import plugin_state  # noqa: F401 (an autouse fixture)


def rules_model(folder):
    (folder / "rules.json").write_text(json.dumps([{"response": "Paris"}]))
    return f"scripted:{folder / 'rules.json'}"


def change_rules(folder):
    (folder / "rules.json").write_text(json.dumps([{"response": "Lyon"}]))


def hf_model(folder):
    pytest.importorskip("transformers")
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from support.tiny_models import word_tokenizer

    model = folder / "tiny"
    tokenizer, size = word_tokenizer(model, eos_suffix=False)
    tokenizer.chat_template = "{% for message in messages %}{{ message['content'] }} {% endfor %}"
    tokenizer.save_pretrained(model)
    torch.manual_seed(0)
    GPT2LMHeadModel(
        GPT2Config(vocab_size=size, n_embd=16, n_layer=1, n_head=2, n_positions=256, eos_token_id=1, bos_token_id=1)
    ).save_pretrained(model)
    return f"hf:{model}"


def change_weights(folder):
    import torch
    from transformers import GPT2LMHeadModel

    weights = GPT2LMHeadModel.from_pretrained(folder / "tiny")
    with torch.no_grad():
        for parameter in weights.parameters():
            parameter.add_(1.0)
    weights.save_pretrained(folder / "tiny")  # trained further, saved over the same folder


MODELS = {"scripted rules file": (rules_model, change_rules), "local hf folder": (hf_model, change_weights)}


def evaluate(tmp_path, model: str, resume: bool = False):
    return run_eval(
        "demo",
        "closed_book",
        model,
        system_args={"max_tokens": 3},
        metrics=["match", "scored:raise"],
        limit=4,
        output=tmp_path / "run",
        resume=resume,
        bootstrap_iters=0,
        registry=scoring_plugin.registry(),
    )


def failed_metric_run(tmp_path, make_model) -> str:
    model = make_model(tmp_path)
    scoring_plugin.FAILING.add("9001")
    first = evaluate(tmp_path, model)
    assert first.results["counts"]["demo"]["metric_failures"] == 1
    scoring_plugin.FAILING.clear()  # the metric fixed
    return model


@pytest.mark.parametrize("kind", MODELS)
def test_a_fixed_metric_rescores_with_resume_for_a_model_kept_in_local_files(tmp_path, kind):
    model = failed_metric_run(tmp_path, MODELS[kind][0])
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())["config"]["model_contents"]
    assert recorded["model"].startswith(f"{model} ")
    resumed = evaluate(tmp_path, model, resume=True)
    assert resumed.complete and resumed.results["counts"]["demo"]["metric_failures"] == 0
    assert resumed.results["cost"]["this_attempt"]["examples"] == 0  # the system did not run again
    assert resumed.results["config"]["model_contents"] == recorded


@pytest.mark.parametrize("kind", MODELS)
def test_a_fixed_metric_is_refused_with_resume_when_the_models_files_changed(tmp_path, kind):
    make_model, change = MODELS[kind]
    model = failed_metric_run(tmp_path, make_model)
    saved = (tmp_path / "run" / "samples" / "demo.jsonl").read_bytes()
    change(tmp_path)
    with pytest.raises(ConfigError, match=r"the files of a model changed since the run started \(model: "):
        evaluate(tmp_path, model, resume=True)
    assert (tmp_path / "run" / "samples" / "demo.jsonl").read_bytes() == saved
