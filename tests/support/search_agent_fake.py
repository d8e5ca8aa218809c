"""A fake OpenAI-compatible server for search agents, on 127.0.0.1 (port 0): it answers both the Responses API
(`POST /v1/responses`, what BrowseComp-Plus's openai_client and oss_client send) and chat completions
(`POST /v1/chat/completions`, what ragbench's `openai` engine sends) from the request text alone, with tool
calls, and records every request in one form common to both APIs (`canonical`), so that two agents speaking
different APIs can be compared call for call.

Standard library only: tests/data/search_agent/record_upstream.py runs it in a scratch environment beside
BrowseComp-Plus's client, the parity test in ragbench's.

The agent it plays, from the conversation so far (the question is the "Question: " line of the first user
message; a "result" is a tool message):
- no result yet: a question holding "malformed" calls the search tool with arguments that are not JSON, one
  holding "unknown" calls a tool `browse` nobody offered, one holding "twice" calls search twice in one turn
  (the question, then its last three words, "for, asked twice?", which holds no word of the corpus: bm25 finds
  nothing), any other calls search with the question;
- one result, get_document offered and the last result a list of hits: get_document of its first docid (of
  "no-such-doc" where the question holds "missing");
- else it answers, citing the first docid any result names, with the first five words after it; where the
  question holds "cut short", that answer is cut short by the token limit (Responses status "incomplete",
  incomplete_details "max_output_tokens"; chat finish_reason "length").
A Responses answer starts with a reasoning item (chat completions have none), with the fields a server that
keeps no encrypted reasoning sends (id, type, summary): a client's SDK adds the others when it dumps the item.

Qwen's agent library (qwen_agent, BrowseComp-Plus's qwen_client) sends no `tools`: its system message lists them
between <tools></tools>, each result comes back in a user message between <tool_response></tool_response>, and it
reads the calls from the answer's text between <tool_call></tool_call>; the fake plays the same agent over that
text form (`text_form`), and answers a request with `"stream": true` as server-sent events. Where that system
text asks for the answer between <answer></answer> tags (Tongyi DeepResearch's prompt), the answer comes as
"<think>...</think>" then the text between those tags; an answer cut short has no tags.
Token counts are a quarter of the characters: a request's input, an answer's output (at least 1).

As a simulated server (benchmarks/agent_speed.py) each answer first waits `delay` seconds (the network and
the server's queue, overlapping other requests), then holds the one simulated device for `per_request` plus
`per_token` seconds per output token (requests computed one after another). `served` holds each answered
request's (arrival, answer sent) on the server's clock, `time.perf_counter()`, so a benchmark can time a
client from its first request to its last answer, without its start-up.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DOCID = re.compile(r'"docid": "([^"]+)"')
TOOLS = re.compile(r"<tools>\n(.*?)\n</tools>", re.S)
TOOL_RESPONSE = re.compile(r"<tool_response>\n(.*?)\n</tool_response>", re.S)


def _text(content: Any) -> str | None:
    """A message's text: a string, or the text parts of a Responses content list."""
    if content is None or isinstance(content, str):
        return content or None
    return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict)) or None


def canonical_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation of a Responses or chat completions request as a list of turns: {"role", "content"}
    for system and user, {"role": "assistant", "content", "tool_calls": [{"id", "name", "arguments"}]} and
    {"role": "tool", "tool_call_id", "content"}; an assistant's empty text is None."""
    turns: list[dict[str, Any]] = []
    if "messages" in body:
        for message in body["messages"]:
            if message["role"] == "assistant":
                calls = [
                    {"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                    for c in message.get("tool_calls") or []
                ]
                turns.append({"role": "assistant", "content": _text(message.get("content")), "tool_calls": calls})
            elif message["role"] == "tool":
                turns.append({"role": "tool", "tool_call_id": message["tool_call_id"], "content": message["content"]})
            else:
                turns.append({"role": message["role"], "content": message["content"]})
        return turns
    if body.get("instructions") is not None:
        turns.append({"role": "system", "content": body["instructions"]})
    for item in body["input"]:
        kind = item.get("type", "message")
        last = turns[-1] if turns else {}
        if kind == "function_call":
            call = {"id": item["call_id"], "name": item["name"], "arguments": item["arguments"]}
            if last.get("role") == "assistant":
                last["tool_calls"].append(call)
            else:
                turns.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            turns.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
        elif kind == "message" and item["role"] == "assistant":
            turns.append({"role": "assistant", "content": _text(item.get("content")), "tool_calls": []})
        elif kind == "message":
            turns.append({"role": item["role"], "content": item["content"]})
    return turns


def canonical_tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Each tool as {"name", "description", "parameters", "strict"}, from either API's form."""
    return [tool.get("function", tool) | {"type": "function"} for tool in body.get("tools") or []]


def canonical_tool_choice(choice: Any) -> Any:
    """ "auto", "none", "required", None, or a named function's name (either API's form)."""
    return choice.get("function", choice).get("name") if isinstance(choice, dict) else choice


def canonical(body: dict[str, Any]) -> dict[str, Any]:
    """A request as both APIs can send it: model, conversation, tools, tool choice, the output-token limit
    and the sampling arguments sent (None where not sent)."""
    return {
        "model": body["model"],
        "messages": canonical_messages(body),
        "tools": canonical_tools(body),
        "tool_choice": canonical_tool_choice(body.get("tool_choice")),
        "max_tokens": body.get("max_output_tokens", body.get("max_tokens")),
        "temperature": body.get("temperature"),
        "top_p": body.get("top_p"),
    }


def question_of(request: dict[str, Any]) -> str:
    """The question: the "Question: " line of the first user message (the message itself without one)."""
    first_user: str = next(m["content"] for m in request["messages"] if m["role"] == "user")
    return next((line[10:] for line in first_user.splitlines() if line.startswith("Question: ")), first_user)


def cut_short(request: dict[str, Any], calls: list[tuple[str, str]]) -> bool:
    """Whether the answer is cut short by the token limit: an answer that calls nothing, to a "cut short" question."""
    return not calls and "cut short" in question_of(request)


def decide(request: dict[str, Any]) -> tuple[str | None, list[tuple[str, str]]]:
    """The fake agent's turn: (answer text, None for none; tool calls as (name, arguments text))."""
    messages, tools = request["messages"], [tool["name"] for tool in request["tools"]]
    question = question_of(request)
    results = [m["content"] for m in messages if m["role"] == "tool"]
    search = request["tools"][0]
    argument = search["parameters"]["required"][0]
    if not results:
        if "malformed" in question:
            return None, [(search["name"], '{"' + argument + '": unquoted')]
        if "unknown" in question:
            return None, [("browse", json.dumps({"url": "https://example.org"}))]
        queries = [question, " ".join(question.split()[-3:])] if "twice" in question else [question]
        return None, [(search["name"], json.dumps({argument: query})) for query in queries]
    hits = DOCID.findall(results[-1])
    get_document = next((name for name in tools if name.endswith("get_document")), None)
    if len(results) == 1 and get_document and results[-1].lstrip().startswith("[") and hits:
        return None, [(get_document, json.dumps({"docid": "no-such-doc" if "missing" in question else hits[0]}))]
    cited = next((found[0] for found in map(DOCID.findall, results) if found), "none")
    pattern = re.compile(r'"docid": "' + re.escape(cited) + r'",\s*(?:"score": [^,]+,\s*)?"(?:snippet|text)": "([^"]*)')
    texts = [found.group(1) for found in map(pattern.search, results) if found]
    words = " ".join(re.findall(r"[A-Za-z0-9']+", texts[0].replace("\\n", " "))[:5]) if texts else ""
    return f"Explanation: it is in the documents [{cited}].\nExact Answer: {words}\nConfidence: 80%", []


def text_form(request: dict[str, Any]) -> dict[str, Any] | None:
    """A request whose tools are in its system text (Qwen's function-calling prompt) as the fake agent reads a
    native one: the tools from the <tools> lines, each <tool_response> a tool message; None for any other."""
    messages = request["messages"]
    found = TOOLS.search(messages[0]["content"] or "") if messages and messages[0]["role"] == "system" else None
    if request["tools"] or found is None:
        return None
    turns: list[dict[str, Any]] = []
    for message in messages:
        results = TOOL_RESPONSE.findall(message["content"] or "") if message["role"] == "user" else []
        turns += [{"role": "tool", "content": result} for result in results] or [message]
    tools = [json.loads(line)["function"] for line in found.group(1).splitlines()]
    return request | {"messages": turns, "tools": tools}


def asks_answer_tags(request: dict[str, Any]) -> bool:
    """Whether the system text asks for the final answer between <answer></answer> tags (Tongyi DeepResearch's
    prompt, BrowseComp-Plus's tongyi_client)."""
    return "<answer></answer>" in (request["messages"][0]["content"] or "")


def text_calls(calls: list[tuple[str, str]]) -> str:
    """Tool calls written as Qwen's prompt asks: a JSON object of name and arguments between <tool_call> tags (the
    arguments as given where they are not JSON)."""
    written = []
    for name, arguments in calls:
        try:
            call = json.dumps({"name": name, "arguments": json.loads(arguments)}, ensure_ascii=False)
        except ValueError:
            call = '{"name": ' + json.dumps(name) + ', "arguments": ' + arguments + "}"
        written.append(f"<tool_call>\n{call}\n</tool_call>")
    return "\n".join(written)


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


def responses_payload(request: dict[str, Any], turn: int) -> dict[str, Any]:
    text, calls = decide(request)
    cut = cut_short(request, calls)
    # a reasoning item first, as reasoning models answer
    summary = [{"type": "summary_text", "text": f"Turn {turn}: deciding."}]
    output: list[dict[str, Any]] = [{"type": "reasoning", "id": f"rs_{turn}", "summary": summary}]
    if text is not None:
        part = {"type": "output_text", "text": text, "annotations": []}
        status = "incomplete" if cut else "completed"
        output.append(
            {"type": "message", "id": f"msg_{turn}", "role": "assistant", "status": status, "content": [part]}
        )
    for i, (name, arguments) in enumerate(calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{turn}_{i}",
                "call_id": f"call_{turn}_{i}",
                "name": name,
                "arguments": arguments,
                "status": "completed",
            }
        )
    used_in, used_out = tokens(json.dumps(request["messages"])), tokens(text or json.dumps(calls))
    return responses_answer(f"resp_{turn}", request["model"], cut, output, request["tool_choice"], (used_in, used_out))


def responses_answer(
    answer_id: str, model: str, cut: bool, output: list[dict[str, Any]], tool_choice: Any, used: tuple[int, int]
) -> dict[str, Any]:
    """A Responses answer of `output` items, "incomplete" (max_output_tokens) where `cut`, with its token counts."""
    return {
        "id": answer_id,
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "incomplete" if cut else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": tool_choice or "auto",
        "tools": [],
        "usage": {
            "input_tokens": used[0],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": used[1],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": sum(used),
        },
    }


def chat_payload(request: dict[str, Any], turn: int) -> dict[str, Any]:
    in_text = text_form(request)
    text, calls = decide(in_text or request)
    cut = cut_short(in_text or request, calls)
    if in_text is not None and calls:
        text, calls = text_calls(calls), []
    elif in_text is not None and text is not None and asks_answer_tags(in_text) and not cut:
        text = f"<think>Turn {turn}: answering.</think>\n<answer>{text}</answer>"
    tool_calls = [
        {"id": f"call_{turn}_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
        for i, (name, arguments) in enumerate(calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text}
    finish = "tool_calls" if calls else "length" if cut else "stop"
    if tool_calls:
        message["tool_calls"] = tool_calls
    used_in, used_out = tokens(json.dumps(request["messages"])), tokens(text or json.dumps(calls))
    return {
        "id": f"chatcmpl-{turn}",
        "object": "chat.completion",
        "created": 0,
        "model": request["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": used_in, "completion_tokens": used_out, "total_tokens": used_in + used_out},
    }


class FakeAgentServer:
    """The server: `base_url`, `requests` (canonical, in arrival order), `bodies` (each request's JSON body as
    sent, in the same order), `served` ((arrived, sent) of each answered request, in the order answered);
    `stop()` when done."""

    def __init__(self, delay: float = 0.0, per_request: float = 0.0, per_token: float = 0.0, mcp: Any = None) -> None:
        self.delay, self.per_request, self.per_token = delay, per_request, per_token
        self.mcp = mcp  # Messages requests' MCP connector (search_agent_fake_messages.McpCaller)
        self.requests: list[dict[str, Any]] = []
        self.bodies: list[dict[str, Any]] = []
        self.served: list[tuple[float, float]] = []
        self.lock = threading.Lock()
        self.device = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.fake = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def simulate(self, output_tokens: int) -> None:
        """The time a server takes to answer with `output_tokens` (nothing unless costs were given)."""
        if self.delay:
            time.sleep(self.delay)
        if self.per_request or self.per_token:
            with self.device:
                time.sleep(self.per_request + self.per_token * output_tokens)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out in two writes: with Nagle's algorithm the body waits for the client's delayed ACK
    # of the headers (40 ms on Linux), on every answer; servers that agents talk to send at once
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        arrived = time.perf_counter()
        fake: FakeAgentServer = self.server.fake  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        from support.search_agent_fake_messages import remote_mcp  # it imports this module

        if self.path.split("?")[0].endswith(":generateContent"):
            self.gemini_turn(fake, body)
            return
        if self.path.split("?")[0].endswith("/messages") or fake.mcp is not None and remote_mcp(body):
            self.server_side_agent(fake, body)
            return
        request = canonical(body)
        with fake.lock:
            fake.requests.append(request)
            fake.bodies.append(body)
        turn = 1 + sum(m["role"] == "assistant" for m in request["messages"])
        chat = self.path.endswith("/chat/completions")
        payload = (chat_payload if chat else responses_payload)(request, turn)
        fake.simulate(payload["usage"]["completion_tokens" if chat else "output_tokens"])
        if chat and body.get("stream"):
            self.stream(payload)
        else:
            self.send(200, payload)
        with fake.lock:
            fake.served.append((arrived, time.perf_counter()))

    def server_side_agent(self, fake: FakeAgentServer, body: dict[str, Any]) -> None:
        """A request whose agent loop the API's side runs over a remote MCP server (the Messages API's
        connector, a Responses `mcp` tool): recorded as sent, its path and beta header in `requests`."""
        from support.search_agent_fake_messages import messages_payload, responses_mcp_payload

        messages = self.path.split("?")[0].endswith("/messages")
        with fake.lock:
            fake.requests.append({"path": self.path, "anthropic-beta": self.headers.get("anthropic-beta")})
            fake.bodies.append(body)
        self.send(200, (messages_payload if messages else responses_mcp_payload)(body, fake.mcp))

    def gemini_turn(self, fake: FakeAgentServer, body: dict[str, Any]) -> None:
        """A Gemini generateContent request (the client runs the tools): recorded as sent, its path in
        `requests`."""
        from support.search_agent_fake_gemini import gemini_payload

        path = self.path.split("?")[0]
        with fake.lock:
            fake.requests.append({"path": path})
            fake.bodies.append(body)
        self.send(200, gemini_payload(body, path.rsplit("/", 1)[-1].split(":")[0]))

    def do_GET(self) -> None:
        self.send(200, {"object": "list", "data": [{"id": "agent", "object": "model", "created": 0, "owned_by": "me"}]})

    def stream(self, payload: dict[str, Any]) -> None:
        """A chat completion as server-sent events: the whole message in one chunk, then its finish reason."""
        choice = payload["choices"][0]
        chunk = {key: payload[key] for key in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
        events = [
            chunk | {"choices": [{"index": 0, "delta": choice["message"], "finish_reason": None}]},
            chunk | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        ]
        data = "".join(f"data: {json.dumps(event)}\n\n" for event in events).encode() + b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
