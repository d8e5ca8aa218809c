"""Records BrowseComp-Plus's tongyi_client (search_agent/tongyi_client.py and tongyi_utils/ at commit 97c637c, run
unchanged: Tongyi DeepResearch's ReAct loop over chat completions, the tools in its system prompt, the calls read
from the answer's text) against the fake server of tests/support/search_agent_fake.py: every request body it sends, the
same in the fake's canonical form, and the run file it writes, by query id, into tongyi_client.json.

Its `searcher.searchers` package is replaced as record_upstream.py replaces it (one searcher answering with
ragbench's BM25 hits over fictional_multihop's corpus, `hits.json`); it cuts snippets to 12 tokens of the tokenizer
record_upstream.py saves, loaded as Qwen/Qwen3-0.6B. Each turn it counts the conversation's tokens with the model's
own tokenizer (`AutoTokenizer.from_pretrained` of the model name): the same tokenizer, saved as the model "agent".
MAX_LLM_CALL_PER_RUN=4 (its environment variable, read on import) so that a question the fake never answers with
<answer> tags ("cut short") uses up its calls.

    python -m venv --system-site-packages /tmp/tongyi-venv
    /tmp/tongyi-venv/bin/pip install qwen-agent==0.0.27 openai==1.97.0 json5 tiktoken "pydantic<2.12" tqdm
    /tmp/tongyi-venv/bin/python tests/data/search_agent/record_tongyi_client.py BROWSECOMP_PLUS_CHECKOUT [WORK_FOLDER]
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import json
import os
import sys
import types
from pathlib import Path
from typing import Any

from record_upstream import HERE, TESTS, build_tokenizer, hub_cache, searcher_package

MAX_CALLS = "4"
CLIENT_ARGS = ["--model", "agent", "--searcher-type", "ragbench", "--hits", str(HERE / "hits.json")]
CLIENT_ARGS += ["--snippet-max-tokens", "12", "--k", "5", "--num-threads", "1"]


def record(checkout: Path, work: Path) -> dict[str, Any]:
    sys.path.insert(0, str(TESTS))
    from support.search_agent_fake import FakeAgentServer

    questions = [json.loads(line) for line in (HERE / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = work / "queries.tsv"
    queries.write_text("".join(f"{q['id']}\t{q['question']}\n" for q in questions), encoding="utf-8")
    out = work / "tongyi_client"
    server = FakeAgentServer()
    port = server.base_url.rsplit(":", 1)[1].split("/")[0]
    sys.argv = ["tongyi_client", "--query", str(queries), "--output-dir", str(out), "--port", port, *CLIENT_ARGS]
    try:
        sys.path[:0] = [str(checkout / "search_agent"), str(checkout)]
        sys.modules["searcher"] = types.ModuleType("searcher")
        sys.modules["searcher.searchers"] = searcher_package(checkout)
        importlib.import_module("tongyi_client").main()
    finally:
        server.stop()
    by_question = {q["question"]: q["id"] for q in questions}
    requests: dict[str, list[dict[str, Any]]] = {}
    bodies: dict[str, list[dict[str, Any]]] = {}
    for request, body in zip(server.requests, server.bodies):  # one query at a time: arrival order is its order
        qid = by_question[next(m["content"] for m in request["messages"] if m["role"] == "user")]
        requests.setdefault(qid, []).append(request)
        bodies.setdefault(qid, []).append(body)
    runs: dict[str, Any] = {}
    for path in out.glob("run_*.json"):
        run = json.loads(path.read_text(encoding="utf-8"))
        keys = ("tool_call_counts", "tool_call_counts_all", "status", "retrieved_docids", "result")
        runs[run["query_id"]] = {key: run[key] for key in keys}
    return {"requests": requests, "bodies": bodies, "runs": runs}


def main() -> None:
    checkout = Path(sys.argv[1]).resolve()
    work = Path(sys.argv[2] if len(sys.argv) > 2 else "/tmp/tongyi_record").resolve()
    work.mkdir(parents=True, exist_ok=True)
    # before transformers and the client read them on import
    os.environ.update(HF_HOME=str(work / "hf"), HF_HUB_OFFLINE="1", MAX_LLM_CALL_PER_RUN=MAX_CALLS)
    tokenizer = build_tokenizer()
    hub_cache(tokenizer, work / "hf")
    hub_cache(tokenizer, work / "hf", "agent")
    names = ("qwen-agent", "openai", "transformers", "json5", "tiktoken")
    fixture = {
        "upstream": "texttron/BrowseComp-Plus@97c637c search_agent/tongyi_client.py and tongyi_utils/, unchanged",
        "python": sys.version.split()[0],
        "versions": {name: metadata.version(name) for name in names},
        "argv": CLIENT_ARGS,
        "env": {"MAX_LLM_CALL_PER_RUN": MAX_CALLS},
        **record(checkout, work),
    }
    text = json.dumps(fixture, indent=1, ensure_ascii=False) + "\n"
    (HERE / "tongyi_client.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
