"""Records Search-R1's own inference loops, run unchanged, against the fake model and search server of
tests/support/search_r1_own_fake.py: PeterGriffinJin/Search-R1 `infer.py` at commit a14dc3a (its own question, over
corpus.jsonl here, the FlashRAG form of its wiki-18 corpus) and texttron/BrowseComp-Plus
`search_agent/search_r1_client.py` at commit 97c637c (browsecomp_plus/queries.jsonl over browsecomp_plus/
corpus.jsonl, its hits shown by `format_results_for_api` of its searcher/search_r1_server.py, unchanged, with
snippets of 12 tokens of tests/data/search_agent/tokenizer). Each runs twice: with the chat template of the
tokenizer ("chat") and without one ("plain"). The parity test (tests/systems/reasoning_search/test_search_r1_own_parity.py) runs
ragbench's `search_r1_own` on the same fake and compares.

The model: `AutoTokenizer.from_pretrained` gives SmolLM2-135M-Instruct's tokenizer (the embedded model's
folder), `AutoModelForCausalLM.from_pretrained` a model whose `generate` appends the fake's continuation of the
decoded input one token at a time, calling the script's stopping criteria after each, up to max_new_tokens, and
Qwen2.5's end-of-sequence id (151645, which this tokenizer decodes to nothing) where the fake ends. The server:
hits of ragbench's BM25 for every query (hits.json, from step 1), 500 for a query it has none of.

Step 1, in ragbench's environment: the hits of ragbench's BM25 over each corpus, from a run of ragbench's side
    python tests/data/search_r1_own/record_upstream.py hits
Step 2, in a scratch environment (recorded with Python 3.11, torch 2.13.0+cpu, transformers 5.24.0, pandas,
requests, datasets, tqdm, fastapi, uvicorn, python-dotenv; the versions are written into the fixture):
    python -m venv /tmp/up && /tmp/up/bin/pip install torch==2.13.0 transformers==5.24.0 pandas requests \\
        datasets tqdm fastapi uvicorn python-dotenv
    /tmp/up/bin/python tests/data/search_r1_own/record_upstream.py record SEARCH_R1_CHECKOUT \\
        BROWSECOMP_PLUS_CHECKOUT SMOLLM2_FOLDER
(SMOLLM2_FOLDER: `python -c "from ragbench._engines.local.embedded import embedded_safetensors_dir as d; print(d())"`.)
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import runpy
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parents[1]
sys.path.insert(0, str(TESTS))
from support.search_r1_own_fake import FAILING_QUERY, FakeSearchServer, continuation  # noqa: E402

EOS = 151645  # Qwen2.5's <|im_end|>, one of infer.py's `curr_eos`
SNIPPET_TOKENS = 12
FORMS = ("plain", "chat")


def corpus_rows(path: Path) -> dict[str, dict[str, Any]]:
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return {str(row.get("id", row.get("docid"))): row for row in rows}


def hits() -> None:
    """Step 1: ragbench's side on each fixture, its searches' hits (query -> [{docid, score}]) into hits.json."""
    sys.path.insert(0, str(TESTS))
    from test_search_r1_own_parity import ragbench_run

    found: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for fixture in ("infer", "browsecomp_plus"):
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = ragbench_run(Path(tmp), fixture, "plain", live=True)
            for line in (run_dir / "calls" / "retrieval.jsonl").read_text(encoding="utf-8").splitlines():
                search = json.loads(line)
                if search["query"] == FAILING_QUERY:
                    continue
                found.setdefault(fixture, {})[search["query"]] = [
                    {"docid": docid, "score": score} for docid, score in zip(search["ids"], search["scores"])
                ]
    (HERE / "hits.json").write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")


class FakeModel:
    """`generate` as the module docstring says; every call's input and output recorded in `calls`."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer, self.calls = tokenizer, []

    def generate(self, input_ids: Any, *, max_new_tokens: int, stopping_criteria: Any, **sampling: Any) -> Any:
        import torch

        text = self.tokenizer.decode(input_ids[0], skip_special_tokens=False)
        written, ends = continuation(text)
        ids = self.tokenizer.encode(written, add_special_tokens=False)
        pieces = [self.tokenizer.decode([i]) for i in ids]
        assert "".join(pieces) == written, "the continuation's tokens do not spell it"
        out = input_ids
        for token in ids:
            out = torch.cat([out, torch.tensor([[token]])], dim=1)
            if out.shape[1] - input_ids.shape[1] >= max_new_tokens or stopping_criteria(out, None):
                break
        else:
            if ends and out.shape[1] - input_ids.shape[1] < max_new_tokens:
                out = torch.cat([out, torch.tensor([[EOS]])], dim=1)
        self.calls.append(
            {
                "input": text,
                "continuation": written,
                "tokens": pieces,
                "output": self.tokenizer.decode(out[0][input_ids.shape[1] :], skip_special_tokens=True),
                "ended": out[0][-1].item() == EOS,
                "sampling": {
                    "max_new_tokens": max_new_tokens,
                    "stop": [self.tokenizer.decode(ids) for c in stopping_criteria for ids in c.target_ids],
                    **{k: v for k, v in sampling.items() if k != "attention_mask"},
                },
            }
        )
        return out


def patched_transformers(smollm2: Path, form: str) -> tuple[FakeModel, Any]:
    """transformers with the fake tokenizer and model; returns the model and the original AutoTokenizer loader."""
    import transformers

    load = vars(transformers.AutoTokenizer).get("unpatched", transformers.AutoTokenizer.from_pretrained)
    transformers.AutoTokenizer.unpatched = load
    tokenizer = load(str(smollm2))
    if form == "plain":
        tokenizer.chat_template = None
    model = FakeModel(tokenizer)
    transformers.AutoTokenizer.from_pretrained = lambda *args, **kwargs: tokenizer
    transformers.AutoModelForCausalLM.from_pretrained = lambda *args, **kwargs: model
    return model, load


def infer_hits(found: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Search-R1's retrieval_server.py's answer per query: the corpus row as `document`, its score."""
    rows = corpus_rows(HERE / "corpus.jsonl")
    return {q: [{"document": rows[h["docid"]], "score": h["score"]} for h in hs] for q, hs in found.items()}


def browsecomp_plus_hits(checkout: Path, found: dict[str, list[dict[str, Any]]], load: Any) -> dict[str, Any]:
    """BrowseComp-Plus's search_r1_server.py's answer per query: `format_results_for_api` (its code, loaded with
    stand-ins for the modules its server needs and this one does not: its searchers) of the searcher's hits."""
    sys.modules["searchers"] = types.ModuleType("searchers")
    sys.modules["searchers"].SearcherType = None  # type: ignore[attr-defined]
    spec = importlib.util.spec_from_file_location("search_r1_server", checkout / "searcher" / "search_r1_server.py")
    assert spec is not None and spec.loader is not None
    server = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(server)
    server.snippet_tokenizer = load(str(TESTS / "data" / "search_agent" / "tokenizer"))
    rows = corpus_rows(HERE / "browsecomp_plus" / "corpus.jsonl")
    return {
        query: server.format_results_for_api(
            [{"docid": h["docid"], "score": h["score"], "text": rows[h["docid"]]["text"]} for h in hs], SNIPPET_TOKENS
        )
        for query, hs in found.items()
    }


def qa_em_prediction(search_r1: Path, text: str) -> str | None:
    """Search-R1's scorer's reading of a run (verl/utils/reward_score/qa_em.py `extract_solution`, unchanged)."""
    spec = importlib.util.spec_from_file_location("qa_em", search_r1 / "verl" / "utils" / "reward_score" / "qa_em.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    prediction: str | None = module.extract_solution(text)
    return prediction


def qa_em_texts(prompt: str) -> list[str]:
    """Texts qa_em.py's reading is recorded on: the prompt with no answer, with one, with two; answers alone."""
    return [
        prompt + "<think> I cannot tell. </think>",
        prompt + "<answer> Oslo </answer>",
        prompt + "<answer> Oslo </answer> or rather <answer>\n Bergen\n</answer>",
        "<answer> Oslo </answer>",
        "<answer> Oslo </answer><answer> Bergen </answer>",
        "",
    ]


def record_infer(search_r1: Path, smollm2: Path, form: str, found: dict[str, Any]) -> dict[str, Any]:
    model, _ = patched_transformers(smollm2, form)
    server = FakeSearchServer(infer_hits(found), port=8000)  # infer.py posts to 127.0.0.1:8000
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(str(search_r1 / "infer.py"), run_name="__main__")
    finally:
        server.stop()
    last = model.calls[-1]
    return {
        "calls": model.calls,
        "searches": server.queries,
        "prediction": qa_em_prediction(search_r1, last["input"] + last["output"]),
    }


def record_browsecomp_plus(
    checkout: Path, smollm2: Path, form: str, found: dict[str, Any], work: Path
) -> dict[str, Any]:
    model, load = patched_transformers(smollm2, form)
    server = FakeSearchServer(browsecomp_plus_hits(checkout, found, load))
    queries = [json.loads(line) for line in (HERE / "browsecomp_plus" / "queries.jsonl").read_text().splitlines()]
    tsv = work / "queries.tsv"
    tsv.write_text("".join(f"{q['query_id']}\t{q['query']}\n" for q in queries), encoding="utf-8")
    out = work / f"runs_{form}"
    sys.argv = ["search_r1_client.py", "--query", str(tsv), "--output-dir", str(out), "--port", str(server.port)]
    sys.argv += ["--model", "fake"]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(str(checkout / "search_agent" / "search_r1_client.py"), run_name="__main__")
    finally:
        server.stop()
    runs = {}
    for path in sorted(out.glob("run_*.json")):
        run = json.loads(path.read_text(encoding="utf-8"))
        run["retrieved_docids"] = sorted(run["retrieved_docids"])
        runs[run["query_id"]] = {k: run[k] for k in ("status", "tool_call_counts", "retrieved_docids", "result")}
    return {"calls": model.calls, "searches": server.queries, "runs": runs}


def record(search_r1: Path, browsecomp_plus: Path, smollm2: Path) -> None:
    import importlib.metadata as metadata

    found = json.loads((HERE / "hits.json").read_text(encoding="utf-8"))
    versions = {name: metadata.version(name) for name in ("torch", "transformers", "pandas", "requests", "fastapi")}
    common = {"python": sys.version.split()[0], "versions": versions, "tokenizer": "SmolLM2-135M-Instruct"}
    infer = {
        "upstream": "PeterGriffinJin/Search-R1@a14dc3a infer.py, unchanged; verl/utils/reward_score/qa_em.py",
        **common,
        "forms": {form: record_infer(search_r1, smollm2, form, found["infer"]) for form in FORMS},
    }
    prompt = infer["forms"]["plain"]["calls"][0]["input"]
    infer["qa_em"] = {text: qa_em_prediction(search_r1, text) for text in qa_em_texts(prompt)}
    (HERE / "infer.json").write_text(json.dumps(infer, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        client = {
            "upstream": "texttron/BrowseComp-Plus@97c637c search_agent/search_r1_client.py and "
            "searcher/search_r1_server.py format_results_for_api, unchanged",
            **common,
            "snippet_max_tokens": SNIPPET_TOKENS,
            "forms": {
                form: record_browsecomp_plus(browsecomp_plus, smollm2, form, found["browsecomp_plus"], Path(tmp))
                for form in FORMS
            },
        }
    (HERE / "browsecomp_plus.json").write_text(
        json.dumps(client, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    if sys.argv[1] == "hits":
        hits()
    else:
        record(*(Path(arg).resolve() for arg in sys.argv[2:5]))
