"""The selfrag system: configuration errors, a whole run on the scripted engine (options recorded,
retrieval statistics, passages batched through the scheduler), and the embedded model without
reflection tokens."""

from __future__ import annotations

import pytest

from ragbench.api import ConfigError
from ragbench.plugins.selfrag.system import SelfRag
from support.helpers import run, samples


def test_adaptive_mode_without_a_threshold_is_a_one_line_config_error():
    with pytest.raises(ConfigError) as caught:
        SelfRag(mode="adaptive_retrieval", threshold=None)
    assert "threshold" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match="mode="):
        SelfRag(mode="default")
    with pytest.raises(ConfigError, match="max_depth"):
        SelfRag(max_depth=1)


def test_run_on_demo_records_options_decisions_and_retrieval_rate(tmp_path):
    results = run(
        tmp_path,
        tasks=["demo"],
        system="selfrag",
        model="scripted:echo",
        limit=4,
        system_args={"threshold": 0.4, "ndocs": 2},
    )
    config = results["config"]["system_config"]["demo"]
    assert (
        config["threshold"] == 0.4 and config["retrieval_ratio"] == "logprob" and config["skip_special_tokens"] is True
    )
    assert config["resolved"] == {
        "form": "short",
        "mode": "adaptive_retrieval",
        "ndocs": 2,
        "w_use": 1.0,
        "closed": False,
    }
    stats = results["system_stats"]["demo"]
    # scripted:echo is certain of every token and never generates [Retrieval] first: both retrieval
    # tokens are missing (-100 each) -> raw log-prob ratio 0.5 > 0.4 -> retrieve
    assert stats["retrieval_rate"] == 1.0 and stats["mean_retrieval_ratio"] == 0.5
    record = samples(tmp_path / "run", "demo")[0]
    trace = record["prediction"]["extras"]["selfrag"]
    assert trace["retrieved"] and len(trace["passages"]) == 2
    steps = [s["name"] for s in record["trace"] if s["kind"] == "llm"]
    assert steps == ["selfrag:decide", "selfrag:passage", "selfrag:passage"]
    passage_request = next(s["request"] for s in record["trace"] if s["name"] == "selfrag:passage")
    assert passage_request["prompt"].startswith("### Instruction:\n")
    assert "[Retrieval]<paragraph>" in passage_request["prompt"] and passage_request["prompt"].endswith("</paragraph>")
    assert "[Relevant]" in passage_request["sampling"]["logprob_tokens"]


def test_no_retrieval_mode_continues_after_the_no_retrieval_token(tmp_path):
    run(
        tmp_path, tasks=["demo"], system="selfrag", model="scripted:echo", limit=1, system_args={"mode": "no_retrieval"}
    )
    record = samples(tmp_path / "run", "demo")[0]
    (step,) = [s for s in record["trace"] if s["kind"] == "llm"]
    assert step["request"]["prompt"].endswith("\n\n### Response:\n[No Retrieval]")
    assert record["prediction"]["extras"]["selfrag"]["retrieved"] is False


def test_passage_generations_of_all_questions_share_batches(tmp_path):
    import asyncio

    from ragbench.tasks.selfrag.demo import Demo
    from ragbench.testing import ScriptedLLM, run_examples

    task = Demo()
    task.prepare()
    examples = [e for e in task.examples()][:6]
    system = SelfRag(mode="always_retrieve", ndocs=3)
    llm = ScriptedLLM("[Relevant]yes", batch_size=512)
    predictions = asyncio.run(run_examples(system, examples, llm, task))
    assert all(p.extras["selfrag"]["retrieved"] for p in predictions)
    assert sum(llm.batch_sizes) == 18 and max(llm.batch_sizes) > 3  # not one question at a time


@pytest.mark.model
def test_embedded_model_without_reflection_tokens_is_refused_before_any_example(tmp_path):
    with pytest.raises(ConfigError) as caught:
        run(
            tmp_path,
            tasks=["demo"],
            system="selfrag",
            model="hf:embedded",
            limit=1,
            system_args={"mode": "always_retrieve", "max_new_tokens": 2, "ndocs": 1},
        )
    message = str(caught.value)
    # refused from the tokenizer before the model loads when its converted copy is on disk, else once loaded
    assert "use a Self-RAG checkpoint such as selfrag/selfrag_llama2_7b" in message and "[Relevant]" in message
    assert "\n" not in message
    assert not (tmp_path / "run" / "samples" / "demo.jsonl").exists()


def tiny_selfrag_model(folder):
    """A random 1-layer GPT-2 whose word-level vocabulary holds Self-RAG's reflection tokens as
    special tokens (as finetune.py adds them), so the hf engine reads real logits for them."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    from ragbench.plugins.selfrag.prompts import REFLECTION_TOKENS

    words = "paris is the capital of france moon bicycle a city river yes no".split()
    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2, **{w: i + 3 for i, w in enumerate(words)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    fast.add_special_tokens({"additional_special_tokens": list(REFLECTION_TOKENS) + ["<paragraph>", "</paragraph>"]})
    fast.save_pretrained(folder)
    torch.manual_seed(3)
    GPT2LMHeadModel(
        GPT2Config(
            vocab_size=len(fast), n_embd=16, n_layer=1, n_head=2, n_positions=512, eos_token_id=1, bos_token_id=1
        )
    ).save_pretrained(folder)
    return folder


def test_real_logits_on_hf_then_rescored_offline_from_the_recorded_calls(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    model = tiny_selfrag_model(tmp_path / "tiny")
    args = {"mode": "adaptive_retrieval", "threshold": 0.0, "ndocs": 3, "max_new_tokens": 6, "retrieval_ratio": "prob"}
    live = run(tmp_path, name="live", tasks=["demo"], system="selfrag", model=f"hf:{model}", limit=4, system_args=args)
    records = samples(tmp_path / "live", "demo")
    assert all(r.get("error") is None for r in records)
    traces = [r["prediction"]["extras"]["selfrag"] for r in records]
    assert all(0.0 <= t["retrieval_ratio"] <= 1.0 for t in traces)
    passages = [p for t in traces for p in t.get("passages", [])]
    assert all(0.0 < p["relevance_score"] < 1.0 for p in passages)  # real, normalised probabilities
    # every generated position carried the named tokens' values from the logits, with token ids
    steps = [s for r in records for s in r["trace"] if s["name"] == "selfrag:passage"]
    assert steps and all(
        len(t["named"]) == 10 and t["token_id"] is not None for s in steps for t in s["response"]["logprobs"]
    )
    replayed = run(
        tmp_path,
        name="replayed",
        tasks=["demo"],
        system="selfrag",
        model=f"replay:{tmp_path / 'live' / 'calls' / 'llm.jsonl'}",
        limit=4,
        system_args=args,
    )
    again = samples(tmp_path / "replayed", "demo")
    assert [r["prediction"]["answer"] for r in again] == [r["prediction"]["answer"] for r in records]
    assert [r["prediction"]["extras"] for r in again] == [r["prediction"]["extras"] for r in records]
    assert replayed["results"] == live["results"]


def test_long_form_on_hf_real_logits_replays_offline(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from conftest import TEST_DATA

    model = tiny_selfrag_model(tmp_path / "tiny")
    data = {"asqa": str(TEST_DATA / "alce" / "asqa_eval_gtr_top100.json")}
    args = {"max_new_tokens": 8, "max_depth": 3, "ndocs": 2, "skip_special_tokens": False}
    live = run(
        tmp_path,
        name="live",
        tasks=["asqa"],
        data=data,
        system="selfrag",
        model=f"hf:{model}",
        limit=2,
        metrics=["str_em"],
        system_args=args,
    )
    records = samples(tmp_path / "live", "asqa")
    assert all(r.get("error") is None for r in records)
    traces = [r["prediction"]["extras"]["selfrag"] for r in records]
    assert all(t["form"] == "long" and t["retrieved"] and len(t["tree"]) >= 3 for t in traces)
    replayed = run(
        tmp_path,
        name="replayed",
        tasks=["asqa"],
        data=data,
        system="selfrag",
        metrics=["str_em"],
        model=f"replay:{tmp_path / 'live' / 'calls' / 'llm.jsonl'}",
        limit=2,
        system_args=args,
    )
    assert [r["prediction"] for r in samples(tmp_path / "replayed", "asqa")] == [r["prediction"] for r in records]
    assert replayed["results"] == live["results"]


def test_citation_numbering_after_a_skipped_duplicate_path_vs_kept():
    from ragbench.plugins.selfrag.prompts import cite_segments

    segments, docs = (
        ["", " Messi scored most.", "Messi scored most.", "Bican scored more.[Relevant]"],
        [None, "d1", "d2", "d3"],
    )
    assert cite_segments(segments, docs) == ("Messi scored most [1]. Bican scored more [3].", ["d1", "d3"])
    assert cite_segments(segments, docs, "kept") == ("Messi scored most [1]. Bican scored more [2].", ["d1", "d3"])


def test_selfrag_warns_when_passage_generations_do_not_open_with_a_relevance_token():
    from ragbench.api import SampleRecord
    from ragbench.plugins.selfrag.system import SelfRag

    def sample(*firsts):
        return SampleRecord(
            "q", extras={"selfrag": {"passages": [{"relevance_token_first": first} for first in firsts]}}
        )

    recorded = SelfRag().declares.recorded  # the format the core counts (it writes no format_adherence of its own)
    [check] = recorded.format_adherence([sample(True, False), sample(False, False), SampleRecord("x", error="x")])
    assert (check["followed"], check["of"]) == (1, 4) and "Self-RAG checkpoint" in check["fix"]
    assert recorded.format_adherence([SampleRecord("q")]) is None
