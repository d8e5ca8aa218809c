"""Records BrowseComp-Plus's qwen_client (search_agent/qwen_client.py at commit 97c637c, run unchanged: Qwen's
agent library, qwen_agent's `Assistant`, with the search tools served over MCP by searcher/mcp_server.py, also
unchanged) against the fake server of tests/support/search_agent_fake.py: every request body it sends, the same in the
fake's canonical form, and the run file it writes, by query id, into qwen_client.json.

The MCP server runs in a process of its own (this script with --mcp-server), its `searchers` package replaced as
record_upstream.py replaces it (one searcher answering with ragbench's BM25 hits over fictional_multihop's corpus,
`hits.json`); it cuts snippets to 12 tokens of the tokenizer record_upstream.py saves, loaded as Qwen/Qwen3-0.6B.
qwen_client names its run file by the second it ends in, so each query runs as its own invocation of the client's
main() with its own output folder (two queries ending in the same second would overwrite one file).

    python -m venv /tmp/qw && /tmp/qw/bin/pip install "qwen-agent[mcp]==0.0.27" fastmcp==2.9.2 mcp==1.9.4 openai==1.97.0 \\
        "pydantic<2.12" python-dateutil transformers pyngrok python-dotenv rich tqdm
    /tmp/qw/bin/python tests/data/search_agent/record_qwen_client.py BROWSECOMP_PLUS_CHECKOUT [WORK_FOLDER]
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from record_upstream import HERE, TESTS, build_tokenizer, hub_cache, searcher_package

MCP_ARGS = ["--searcher-type", "ragbench", "--hits", str(HERE / "hits.json"), "--snippet-max-tokens", "12"]
MCP_ARGS += ["--k", "5", "--get-document", "--transport", "sse"]
CLIENT_ARGS = ["--model", "agent", "--query-template", "QUERY_TEMPLATE", "--max_tokens", "10000"]


def serve_mcp(checkout: Path, port: int) -> None:
    """searcher/mcp_server.py's main() with the replaced `searchers` package (it imports `searchers` and
    `tools` from its own folder)."""
    package = searcher_package(checkout)
    sys.modules["searchers"], sys.modules["searchers.base"] = package, package.base
    sys.path.insert(0, str(checkout / "searcher"))
    sys.argv = ["mcp_server", *MCP_ARGS, "--port", str(port)]
    importlib.import_module("mcp_server").main()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    """Until the MCP server accepts connections (it loads a tokenizer and starts uvicorn first)."""
    for _ in range(600):
        if process.poll() is not None:
            raise RuntimeError(f"the MCP server exited with {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError("the MCP server did not start")


def record(checkout: Path, work: Path) -> dict[str, Any]:
    sys.path.insert(0, str(TESTS))
    from support.search_agent_fake import FakeAgentServer

    questions = [json.loads(line) for line in (HERE / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    port = free_port()
    mcp = subprocess.Popen([sys.executable, __file__, "--mcp-server", str(checkout), str(port)])
    server = FakeAgentServer()
    bodies: dict[str, list[dict[str, Any]]] = {}
    requests: dict[str, list[dict[str, Any]]] = {}
    runs: dict[str, Any] = {}
    try:
        wait_for(port, mcp)
        sys.path[:0] = [str(checkout / "search_agent"), str(checkout)]
        client = importlib.import_module("qwen_client")
        for question in questions:  # one query per invocation: arrival order is its requests' order
            qid, seen = question["id"], len(server.bodies)
            (work / f"{qid}.tsv").write_text(f"{qid}\t{question['question']}\n", encoding="utf-8")
            out = work / "qwen_client" / qid
            sys.argv = ["qwen_client", "--query", str(work / f"{qid}.tsv"), "--output-dir", str(out)]
            sys.argv += ["--model-server", server.base_url, "--mcp-url", f"http://127.0.0.1:{port}/mcp", *CLIENT_ARGS]
            client.main()
            bodies[qid], requests[qid] = server.bodies[seen:], server.requests[seen:]
            (run_file,) = out.glob("run_*.json")
            run = json.loads(run_file.read_text(encoding="utf-8"))
            runs[qid] = {key: run[key] for key in ("tool_call_counts", "status", "result")}
            runs[qid]["retrieved_docids"] = sorted(run["retrieved_docids"])
    finally:
        server.stop()
        mcp.terminate()
        mcp.wait()
    return {"requests": requests, "bodies": bodies, "runs": runs}


def prepared_work(default: str) -> tuple[Path, Path]:
    """The checkout (argv 1) and the work folder (argv 2, else `default`), its Hugging Face home holding the
    small tokenizer as Qwen/Qwen3-0.6B (the MCP server's process inherits the environment)."""
    checkout = Path(sys.argv[1]).resolve()
    work = Path(sys.argv[2] if len(sys.argv) > 2 else default).resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.environ.update(HF_HOME=str(work / "hf"), HF_HUB_OFFLINE="1")
    hub_cache(build_tokenizer(), work / "hf")
    return checkout, work


def save_fixture(client: str, names: tuple[str, ...], argv: list[str], recorded: dict[str, Any]) -> None:
    """CLIENT.json beside this script: what ran (the client and mcp_server.py, unchanged), the package versions,
    the arguments, and what was recorded."""
    fixture = {
        "upstream": f"texttron/BrowseComp-Plus@97c637c search_agent/{client}.py and searcher/mcp_server.py, unchanged",
        "python": sys.version.split()[0],
        "versions": {name: metadata.version(name) for name in names},
        "argv": argv,
        "mcp_server_argv": MCP_ARGS,
        **recorded,
    }
    text = json.dumps(fixture, indent=1, ensure_ascii=False) + "\n"
    (HERE / f"{client}.json").write_text(text, encoding="utf-8")


def main() -> None:
    if sys.argv[1] == "--mcp-server":
        serve_mcp(Path(sys.argv[2]).resolve(), int(sys.argv[3]))
        return
    checkout, work = prepared_work("/tmp/qwen_record")
    names = ("qwen-agent", "fastmcp", "mcp", "openai", "transformers", "json5")
    save_fixture("qwen_client", names, CLIENT_ARGS, record(checkout, work))


if __name__ == "__main__":
    main()
