"""Records BrowseComp-Plus's anthropic_client (search_agent/anthropic_client.py at commit 97c637c, run unchanged:
the anthropic SDK's beta Messages API with the MCP connector) against the fake server of tests/search_agent_fake.py,
its Messages side (tests/search_agent_fake_messages.py) calling the tools of searcher/mcp_server.py (unchanged,
its `searchers` package replaced as record_upstream.py replaces it, run as record_qwen_client.py runs it) through
the `mcp` library's SSE client, as Anthropic's servers call the MCP server a request names. It saves every request
(path, beta header and JSON body) and the run file of each query, by query id, into anthropic_client.json.

The client names its run file by the second it ends in, so each query runs as its own invocation with its own
output folder. The questions are questions.jsonl's and one whose first answer pauses (questions_mcp.jsonl).

    python -m venv /tmp/cl && /tmp/cl/bin/pip install anthropic==0.58.2 fastmcp==2.9.2 mcp==1.9.4 \\
        "pydantic<2.12" transformers pyngrok python-dotenv rich tqdm
    /tmp/cl/bin/python tests/data/search_agent/record_anthropic_client.py BROWSECOMP_PLUS_CHECKOUT [WORK_FOLDER]
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

CLIENT_ARGS = ["--model", "claude-agent", "--max_tokens", "10000", "--query-template", "QUERY_TEMPLATE"]
CLIENT_ARGS += ["--thinking-budget", "2048"]


def record(checkout: Path, work: Path) -> dict[str, Any]:
    sys.path.insert(0, str(TESTS))
    from search_agent_fake import FakeAgentServer
    from search_agent_fake_messages import mcp_call

    questions = [json.loads(line) for line in (HERE / "questions_mcp.jsonl").read_text(encoding="utf-8").splitlines()]
    port = free_port()
    mcp = subprocess.Popen([sys.executable, HERE / "record_qwen_client.py", "--mcp-server", str(checkout), str(port)])
    server = FakeAgentServer(mcp=mcp_call)
    os.environ.update(ANTHROPIC_API_KEY="fake", ANTHROPIC_BASE_URL=server.base_url.removesuffix("/v1"))
    requests: dict[str, list[dict[str, Any]]] = {}
    bodies: dict[str, list[dict[str, Any]]] = {}
    runs: dict[str, Any] = {}
    try:
        wait_for(port, mcp)
        sys.path[:0] = [str(checkout / "search_agent"), str(checkout)]
        for question in questions:  # one query per invocation: arrival order is its requests' order
            qid, seen = question["id"], len(server.bodies)
            (work / f"{qid}.tsv").write_text(f"{qid}\t{question['question']}\n", encoding="utf-8")
            out = work / "anthropic_client" / qid
            sys.argv = ["anthropic_client", "--query", str(work / f"{qid}.tsv"), "--output-dir", str(out)]
            sys.argv += ["--mcp-url", f"http://127.0.0.1:{port}/mcp", *CLIENT_ARGS]
            runpy.run_path(str(checkout / "search_agent" / "anthropic_client.py"), run_name="__main__")
            bodies[qid], requests[qid] = server.bodies[seen:], server.requests[seen:]
            (run_file,) = out.glob("run_*.json")
            run = json.loads(run_file.read_text(encoding="utf-8"))
            runs[qid] = {key: run[key] for key in ("tool_call_counts", "status", "result", "usage")}
            runs[qid]["retrieved_docids"] = sorted(run["retrieved_docids"])
            runs[qid]["pause_restarts"] = run["metadata"]["pause_restarts"]
    finally:
        server.stop()
        mcp.terminate()
        mcp.wait()
    return {"requests": requests, "bodies": bodies, "runs": runs}


def main() -> None:
    checkout, work = prepared_work("/tmp/anthropic_record")
    save_fixture(
        "anthropic_client", ("anthropic", "fastmcp", "mcp", "transformers"), CLIENT_ARGS, record(checkout, work)
    )


if __name__ == "__main__":
    main()
