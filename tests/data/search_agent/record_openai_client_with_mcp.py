"""Records BrowseComp-Plus's openai_client_with_mcp (search_agent/openai_client_with_mcp.py at commit 97c637c, run
unchanged: the openai SDK's Responses API with a remote `mcp` tool) against the fake server of
tests/search_agent_fake.py, whose Responses side plays OpenAI's servers over the MCP server the request names
(tests/search_agent_fake_messages.py) as record_anthropic_client.py has it play Anthropic's. It saves every request
(path and JSON body) and the run file of each query, by query id, into openai_client_with_mcp.json.

    python -m venv /tmp/cl && /tmp/cl/bin/pip install openai==1.97.0 fastmcp==2.9.2 mcp==1.9.4 \\
        "pydantic<2.12" transformers pyngrok python-dotenv rich tqdm
    /tmp/cl/bin/python tests/data/search_agent/record_openai_client_with_mcp.py BROWSECOMP_PLUS_CHECKOUT [WORK_FOLDER]
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

CLIENT_ARGS = ["--model", "agent", "--max_tokens", "10000", "--query-template", "QUERY_TEMPLATE", "--top_p", "1"]


def record(checkout: Path, work: Path) -> dict[str, Any]:
    sys.path.insert(0, str(TESTS))
    from search_agent_fake import FakeAgentServer
    from search_agent_fake_messages import mcp_call

    questions = [json.loads(line) for line in (HERE / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    questions.append(next(q for q in map(json.loads, (HERE / "questions_mcp.jsonl").open()) if q["id"] == "missing"))
    port = free_port()
    mcp = subprocess.Popen([sys.executable, HERE / "record_qwen_client.py", "--mcp-server", str(checkout), str(port)])
    server = FakeAgentServer(mcp=mcp_call)
    os.environ.update(OPENAI_API_KEY="fake", OPENAI_BASE_URL=server.base_url)
    requests: dict[str, list[dict[str, Any]]] = {}
    bodies: dict[str, list[dict[str, Any]]] = {}
    runs: dict[str, Any] = {}
    try:
        wait_for(port, mcp)
        sys.path[:0] = [str(checkout / "search_agent"), str(checkout)]
        for question in questions:  # one query per invocation: arrival order is its requests' order
            qid, seen = question["id"], len(server.bodies)
            (work / f"{qid}.tsv").write_text(f"{qid}\t{question['question']}\n", encoding="utf-8")
            out = work / "openai_client_with_mcp" / qid
            sys.argv = ["openai_client_with_mcp", "--query", str(work / f"{qid}.tsv"), "--output-dir", str(out)]
            sys.argv += ["--mcp-url", f"http://127.0.0.1:{port}/mcp", *CLIENT_ARGS]
            runpy.run_path(str(checkout / "search_agent" / "openai_client_with_mcp.py"), run_name="__main__")
            bodies[qid], requests[qid] = server.bodies[seen:], server.requests[seen:]
            (run_file,) = out.glob("run_*.json")
            run = json.loads(run_file.read_text(encoding="utf-8"))
            runs[qid] = {key: run[key] for key in ("tool_call_counts", "status", "result", "usage")}
            runs[qid]["retrieved_docids"] = sorted(run["retrieved_docids"])
    finally:
        server.stop()
        mcp.terminate()
        mcp.wait()
    return {"requests": requests, "bodies": bodies, "runs": runs}


def main() -> None:
    checkout, work = prepared_work("/tmp/openai_mcp_record")
    names = ("openai", "fastmcp", "mcp", "transformers")
    save_fixture("openai_client_with_mcp", names, CLIENT_ARGS, record(checkout, work))


if __name__ == "__main__":
    main()
