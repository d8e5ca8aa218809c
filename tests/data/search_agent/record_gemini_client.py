"""Records BrowseComp-Plus's gemini_client (search_agent/gemini_client.py at commit 97c637c, run unchanged:
google-genai's automatic function calling over a fastmcp session of searcher/mcp_server.py, itself run as
record_qwen_client.py runs it) against the fake Gemini API of tests/support/search_agent_fake_gemini.py. Saved into
gemini_client.json: every request (path, JSON body) and the run file of each query, by query id; a query whose
run the client ends without a run file (it prints "[Error] Query id=... failed: ...") saved as that message.

Each query runs as its own invocation with its own output folder (the client names its run files by the time).

    python -m venv /tmp/cl && /tmp/cl/bin/pip install google-genai==1.27.0 fastmcp==2.9.2 mcp==1.9.4 \\
        "pydantic<2.12" transformers pyngrok python-dotenv rich tqdm
    /tmp/cl/bin/python tests/data/search_agent/record_gemini_client.py BROWSECOMP_PLUS_CHECKOUT [WORK_FOLDER]
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

from record_qwen_client import free_port, prepared_work, save_fixture, wait_for
from record_upstream import HERE, TESTS

ARGV = ["--model", "gemini-agent", "--max_tokens", "10000", "--query-template", "QUERY_TEMPLATE"]
NAMES = ("google-genai", "fastmcp", "mcp", "transformers")


def record(checkout: Path, work: Path, port: int) -> dict[str, Any]:
    sys.path.insert(0, str(TESTS))
    from support.search_agent_fake import FakeAgentServer

    questions = [json.loads(line) for line in (HERE / "questions_mcp.jsonl").read_text(encoding="utf-8").splitlines()]
    questions = [question for question in questions if question["id"] != "pause"]  # the Gemini API never pauses
    server = FakeAgentServer()
    os.environ.pop("GOOGLE_API_KEY", None)
    os.environ.update(GEMINI_API_KEY="fake", GOOGLE_GEMINI_BASE_URL=server.base_url.removesuffix("/v1"))
    requests: dict[str, list[dict[str, Any]]] = {}
    bodies: dict[str, list[dict[str, Any]]] = {}
    runs: dict[str, Any] = {}
    try:
        for question in questions:
            qid, seen = question["id"], len(server.bodies)
            (work / f"{qid}.tsv").write_text(f"{qid}\t{question['question']}\n", encoding="utf-8")
            out = work / "gemini_client" / qid
            sys.argv = ["gemini_client", "--query", str(work / f"{qid}.tsv"), "--output-dir", str(out)]
            sys.argv += ["--mcp-url", f"http://127.0.0.1:{port}/mcp", *ARGV]
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                runpy.run_path(str(checkout / "search_agent" / "gemini_client.py"), run_name="__main__")
            sys.stdout.write(printed.getvalue())
            bodies[qid], requests[qid] = server.bodies[seen:], server.requests[seen:]
            files = list(out.glob("run_*.json"))
            if not files:
                (error,) = [line for line in printed.getvalue().splitlines() if line.startswith("[Error]")]
                runs[qid] = {"error": error}
                continue
            run = json.loads(files[0].read_text(encoding="utf-8"))
            runs[qid] = {key: run[key] for key in ("tool_call_counts", "status", "result", "usage")}
            runs[qid]["retrieved_docids"] = sorted(run["retrieved_docids"])
    finally:
        server.stop()
    return {"requests": requests, "bodies": bodies, "runs": runs}


def main() -> None:
    checkout, work = prepared_work("/tmp/gemini_client_record")
    port = free_port()
    mcp = subprocess.Popen([sys.executable, HERE / "record_qwen_client.py", "--mcp-server", str(checkout), str(port)])
    sys.path[:0] = [str(checkout / "search_agent"), str(checkout)]
    try:
        wait_for(port, mcp)
        save_fixture("gemini_client", NAMES, ARGV, record(checkout, work, port))
    finally:
        mcp.terminate()
        mcp.wait()


if __name__ == "__main__":
    main()
