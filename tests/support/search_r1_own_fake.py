"""The fake Search-R1 model and search server of the `search_r1_own` parity (tests/data/search_r1_own: its
record_upstream.py runs Search-R1's infer.py and BrowseComp-Plus's search_r1_client.py against them, unchanged;
tests/systems/reasoning_search/test_search_r1_own_parity.py runs ragbench's `search_r1_own`). Standard library only: the recorder
imports it in a scratch environment.

The model answers from the text so far: the question is found by a keyword of SCRIPTS, the round by the
"</information>" blocks after the prompt's own; each round's continuation is a text and whether the model ends
after it (its end-of-sequence token). A continuation may run on past a "</search>" (the stop strings cut it) or
past the 1024 new tokens of a round (the limit cuts it).

The server answers POST /retrieve in both forms from recorded hits (`hits`: query -> hits as the server sends
them): Search-R1's retrieval_server.py ({"queries", "topk", "return_scores"} -> {"result": [[{"document":
{"contents"}, "score"}]]}) and BrowseComp-Plus's search_r1_server.py ({"query"} -> {"result": [{"document":
{"title", "text"}, "docid"}]}); FAILING_QUERY, or a query it has no hits for, is answered 500 (a failed search).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAILING_QUERY = " failing search "  # the server answers it 500 (BrowseComp-Plus's client then shows "Search failed")
THINKING = " Hmm, the search did not say it plainly, let me go over it once more." * 120  # past 1024 tokens

# keyword of the question -> the rounds: (continuation, the model ends after it)
SCRIPTS: dict[str, list[tuple[str, bool]]] = {
    # infer.py's own question: a search, a round cut at the token limit with no search tag (the last query
    # searched again), an empty search tag (nothing searched), an answer
    "Mike Barnett": [
        (
            "<think> I need to find who Mike Barnett negotiated for. </think>\n<search> Mike Barnett agent </search>"
            "\n\n<information> made up by the model",
            False,
        ),
        ("<think>" + THINKING, False),
        ("<think> Let me search again. </think>\n<search></search>", False),
        ("<think> Doc 2 names him. </think>\n<answer> Sergei Fedorov </answer>", True),
    ],
    # search_r1_client.py's questions
    "lighthouse keeper": [
        (" <think> Who was the keeper? </think>\n<search> Varnholm lighthouse keeper </search>", False),
        ("<think> Edda Brisk; what did she found? </think>\n<search> Edda Brisk founded </search>", False),
        ("<think> The society. </think>\n<answer> Brisk Astronomical Society </answer>", True),
    ],
    "river Osk": [
        ("<think> A bridge. </think>\n<search>" + FAILING_QUERY + "</search>", False),
        ("<think> The search failed; I guess. </think> The Tallow Span, I believe.", True),
    ],
    "copper-roofed": [
        ("<think>" + THINKING, False),
        ("<think> Now I know. </think>\n<answer> Varnholm </answer>\n<answer> Quellin </answer>", True),
    ],
}


def script(text: str) -> list[tuple[str, bool]]:
    """The rounds of the question of `text` (its prompt's "Question: " line; passages may name other keywords)."""
    question = text.split("Question: ", 1)[1].split("\n", 1)[0]
    return next(rounds for keyword, rounds in SCRIPTS.items() if keyword in question)


def continuation(text: str) -> tuple[str, bool]:
    """The next continuation of `text` (the prompt and what was appended to it) and whether the model ends."""
    rounds = script(text)
    done = text.count("</information>") - 1  # the prompt itself names "<information> and </information>"
    return rounds[min(done, len(rounds) - 1)]


class FakeSearchServer:
    """POST /retrieve on 127.0.0.1:`port` (0: any free port), answered from `hits`; `queries` in arrival order."""

    def __init__(self, hits: dict[str, Any], port: int = 0) -> None:
        self.hits, self.queries = hits, []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                query = body["queries"][0] if "queries" in body else body["query"]
                owner.queries.append(body)
                found = owner.hits.get(query)
                if found is None or query == FAILING_QUERY:
                    self.send_response(500)
                    self.end_headers()
                    self.wfile.write(b"Internal Server Error")
                    return
                result = [found[: body["topk"]]] if "queries" in body else found
                data = json.dumps({"result": result}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
