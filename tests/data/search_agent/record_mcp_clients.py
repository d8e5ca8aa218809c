"""Records BrowseComp-Plus's clients whose tools the API's own servers call, each run unchanged at commit 97c637c
against the fake server of tests/support/search_agent_fake.py: search_agent/anthropic_client.py (the anthropic SDK's beta
Messages API with the MCP connector) and search_agent/openai_client_with_mcp.py (the openai SDK's Responses API
with a remote `mcp` tool). The fake plays those servers (tests/support/search_agent_fake_messages.py): it calls the tools
of searcher/mcp_server.py (unchanged, its `searchers` package replaced as record_upstream.py replaces it, run as
record_qwen_client.py runs it) through the `mcp` library's SSE client. Saved per client, into CLIENT.json: every
request (path, beta header, JSON body) and the run file of each query, by query id.

The clients name their run files by the time they end, so each query runs as its own invocation with its own
output folder. anthropic_client gets questions_mcp.jsonl (questions.jsonl's, a docid the corpus lacks, and a first
answer the API pauses), openai_client_with_mcp all but the pause, which the Responses API has not.

    python -m venv /tmp/cl && /tmp/cl/bin/pip install anthropic==0.58.2 openai==1.97.0 fastmcp==2.9.2 mcp==1.9.4 \\
        "pydantic<2.12" transformers pyngrok python-dotenv rich tqdm
    /tmp/cl/bin/python tests/data/search_agent/record_mcp_clients.py BROWSECOMP_PLUS_CHECKOUT [WORK_FOLDER]
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

from record_qwen_client import free_port, prepared_work, save_fixture, wait_for
from record_upstream import HERE, TESTS

RUNS = {  # client -> its arguments besides --query, --output-dir and --mcp-url; the packages it ran on
    "anthropic_client": (
        ["--model", "claude-agent", "--max_tokens", "10000", "--query-template", "QUERY_TEMPLATE"]
        + ["--thinking-budget", "2048"],
        ("anthropic", "fastmcp", "mcp", "transformers"),
    ),
    "openai_client_with_mcp": (
        ["--model", "agent", "--max_tokens", "10000", "--query-template", "QUERY_TEMPLATE", "--top_p", "1"],
        ("openai", "fastmcp", "mcp", "transformers"),
    ),
}


def record(checkout: Path, work: Path, client: str, port: int) -> dict[str, Any]:
    sys.path.insert(0, str(TESTS))
    from support.search_agent_fake import FakeAgentServer
    from support.search_agent_fake_messages import mcp_call

    questions = [json.loads(line) for line in (HERE / "questions_mcp.jsonl").read_text(encoding="utf-8").splitlines()]
    if client == "openai_client_with_mcp":
        questions = [question for question in questions if question["id"] != "pause"]
    server = FakeAgentServer(mcp=mcp_call)
    os.environ.update(ANTHROPIC_API_KEY="fake", ANTHROPIC_BASE_URL=server.base_url.removesuffix("/v1"))
    os.environ.update(OPENAI_API_KEY="fake", OPENAI_BASE_URL=server.base_url)
    requests: dict[str, list[dict[str, Any]]] = {}
    bodies: dict[str, list[dict[str, Any]]] = {}
    runs: dict[str, Any] = {}
    try:
        for question in questions:  # one query per invocation: arrival order is its requests' order
            qid, seen = question["id"], len(server.bodies)
            (work / f"{qid}.tsv").write_text(f"{qid}\t{question['question']}\n", encoding="utf-8")
            out = work / client / qid
            sys.argv = [client, "--query", str(work / f"{qid}.tsv"), "--output-dir", str(out)]
            sys.argv += ["--mcp-url", f"http://127.0.0.1:{port}/mcp", *RUNS[client][0]]
            runpy.run_path(str(checkout / "search_agent" / f"{client}.py"), run_name="__main__")
            bodies[qid], requests[qid] = server.bodies[seen:], server.requests[seen:]
            (run_file,) = out.glob("run_*.json")
            run = json.loads(run_file.read_text(encoding="utf-8"))
            runs[qid] = {key: run[key] for key in ("tool_call_counts", "status", "result", "usage")}
            runs[qid]["retrieved_docids"] = sorted(run["retrieved_docids"])
            if "pause_restarts" in run["metadata"]:
                runs[qid]["pause_restarts"] = run["metadata"]["pause_restarts"]
    finally:
        server.stop()
    return {"requests": requests, "bodies": bodies, "runs": runs}


def main() -> None:
    checkout, work = prepared_work("/tmp/mcp_clients_record")
    port = free_port()
    mcp = subprocess.Popen([sys.executable, HERE / "record_qwen_client.py", "--mcp-server", str(checkout), str(port)])
    sys.path[:0] = [str(checkout / "search_agent"), str(checkout)]
    try:
        wait_for(port, mcp)
        for client, (argv, names) in RUNS.items():
            save_fixture(client, names, argv, record(checkout, work, client, port))
    finally:
        mcp.terminate()
        mcp.wait()


if __name__ == "__main__":
    main()
