"""BrowseComp-Plus's tongyi_client (search_agent/tongyi_client.py and tongyi_utils/ at commit 97c637c): Tongyi
DeepResearch's ReAct loop over chat completions. Its requests carry no `tools`: its one tool, `search`, is listed
in the system prompt, the model writes a call between <tool_call> tags (only the first of an answer is made), the
result goes back in a user message between <tool_response> tags, and the model ends with its answer between
<answer> tags. Each request may use up to 100 calls (MAX_LLM_CALL_PER_RUN); after each turn the conversation's
tokens are counted and past 108K the model is asked once for its answer. What it records per query is
tongyi_client's `persist_response`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ragbench.api import ConfigError, Context, Document
from ragbench.api.data import parse_json
from ragbench.api.engines import local_tokenizer
from ragbench.api.retrieval import passage_text

from .prompts import TONGYI_CALLS_EXCEEDED, TONGYI_CONTEXT_EXCEEDED
from .shapes import RunItem, TongyiExtras, TurnSampling

SEARCH = "search"
STOP = ["\n<tool_response>", "<tool_response>"]
SAMPLING = {"temperature": 0.85, "top_p": 0.95, "max_tokens": 10000}  # tongyi_client's defaults, every turn
TRIES = 10  # requests per turn while the answer is empty (call_server's max_tries)
SERVER_ERROR = "vllm server error!!!"  # the turn's text once every try answered nothing
MAX_CONTEXT_TOKENS = 108 * 1024
INVALID_CALL = 'Error: Tool call is not a valid JSON. Tool call must contain a valid "name" and "arguments" field.'
INVALID_REQUEST = "[Search] Invalid request format: Input must be a JSON object containing 'query' field"
NOT_A_STRING = "[Search] Invalid request format: 'query' must be a string, not an array"
# the termination a run file records as its status, beside "completed" for "answer"
CALLS_EXCEEDED = "exceed available llm calls"
NO_ANSWER = "answer not found"
CONTEXT_ANSWER = "generate an answer as token limit reached"
CONTEXT_NO_ANSWER = "format error: generate an answer as token limit reached"

Search = Callable[[str], Awaitable[list[Document]]]


def title_of(text: str) -> str:
    """A hit's title as the search tool shows it: a front matter's `title:` line, else the first line (50
    characters, then "...")."""
    title = ""
    if text.startswith("---\ntitle:"):
        title = text.split("\n")[1].replace("title:", "").strip().strip('"')
    if not title:
        first = text.split("\n")[0].strip()
        title = first[:50] + "..." if len(first) > 50 else first
    return title


def search_text(query: str, docs: list[Document], snippet: Callable[[str], str]) -> str:
    """What a search answers the model: its hits numbered, each its title in brackets and its snippet."""
    if not docs:
        return f"No results found for '{query}'. Try with a more general query."
    hits = [f"{i}. [{title_of(passage_text(doc))}]\n{snippet(passage_text(doc))}" for i, doc in enumerate(docs, 1)]
    return f"A search for '{query}' found {len(hits)} results:\n\n## Web Results\n" + "\n\n".join(hits)


def token_counter(name: str) -> Callable[[str], int]:
    """A text's token count in the tokenizer `name` (a folder, or a hub name already downloaded); a ConfigError
    naming it and the fix where it is not on disk."""
    tokenizer = local_tokenizer(name)
    if tokenizer is None:
        raise ConfigError(
            f"search_agent: tongyi_client counts the conversation in tokens of {name}, whose tokenizer is not on "
            f"disk: download it (huggingface-cli download {name}) or name another (context_tokenizer=PATH)"
        )
    return lambda text: len(tokenizer.encode(text))


def text_prompt(messages: list[dict[str, str]]) -> str:
    """The conversation as the text completion prompt tongyi_client counts (qwen_agent's
    build_text_completion_prompt): each message between <|im_start|>ROLE and <|im_end|>, the last left open, an
    empty assistant message added after any other last role."""
    turns = messages if messages[-1]["role"] == "assistant" else [*messages, {"role": "assistant", "content": ""}]
    return "\n".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>" for m in turns)[: -len("<|im_end|>")]


@dataclass
class TongyiRun:
    """One query's loop: the conversation, the calls per tool (`counts`: those that ran; `counts_all`: every call,
    unreadable ones as "invalid_json"), the docids and documents the searches returned, requests made, output
    tokens, how it ended (`termination`) and its answer."""

    messages: list[dict[str, str]]
    counts: dict[Any, int] = field(default_factory=dict)
    counts_all: dict[Any, int] = field(default_factory=dict)
    docids: set[str] = field(default_factory=set)
    docs: list[Document] = field(default_factory=list)
    requests: int = 0
    output_tokens: int = 0
    termination: str = NO_ANSWER
    answer: str = ""

    def extras(self) -> TongyiExtras:
        """What the example records: the run file's fields (its status "completed" for an answer, else the
        termination), the requests made, output tokens, and the calls that were no JSON object."""
        return {
            "status": "completed" if self.termination == "answer" else self.termination,
            "tool_call_counts": self.counts,
            "tool_call_counts_all": self.counts_all,
            "retrieved_docids": sorted(self.docids),
            "turns": self.requests,
            "output_tokens": self.output_tokens,
            "invalid_tool_calls": self.counts_all.get("invalid_json", 0),
            "result": run_record(self.messages),
        }


async def call_tool(written: str, run: TongyiRun, search: Search, snippet: Callable[[str], str]) -> str:
    """One call, as the text between its tags reads (as JSON; tongyi_client reads JSON5), made as tongyi_client
    makes it: counted under its name, `search` run with its `query` (a list of one query as that query), any other
    name answered as not found; the text the model is answered."""
    try:
        call = parse_json(written)
        name, arguments = call.get("name", ""), call.get("arguments", {})
        run.counts_all[name] = run.counts_all.get(name, 0) + 1
    except (ValueError, AttributeError, TypeError):  # not JSON, not an object, or a name that is no dict key
        run.counts_all["invalid_json"] = run.counts_all.get("invalid_json", 0) + 1
        return INVALID_CALL
    if name != SEARCH:
        return f"Error: Tool {name} not found"
    try:
        query = arguments["query"]
    except (TypeError, KeyError, IndexError):
        return INVALID_REQUEST
    if isinstance(query, list) and len(query) == 1:
        query = query[0]
    elif not isinstance(query, str):
        return NOT_A_STRING
    run.counts[name] = run.counts.get(name, 0) + 1
    try:
        docs = await search(query)
    except Exception as exc:  # tongyi_client answers the model with the searcher's error
        return f"Search error for query '{query}': {exc}"
    run.docids.update(str(doc.id) for doc in docs)
    run.docs += docs
    return search_text(query, docs, snippet)


async def ask(ctx: Context, run: TongyiRun, sampling: TurnSampling) -> str:
    """One turn's answer, stripped: asked again while it is empty, at most TRIES times (then SERVER_ERROR)."""
    for _ in range(TRIES):
        run.requests += 1
        answer = await ctx.llm.chat(run.messages, step="turn", stop=STOP, **sampling)
        run.output_tokens += answer.completion_tokens
        if answer.text.strip():
            return answer.text.strip()
    return SERVER_ERROR


def answer_between_tags(text: str) -> str:
    return text.split("<answer>")[1].split("</answer>")[0]


async def run_agent(
    ctx: Context,
    run: TongyiRun,
    sampling: TurnSampling,
    max_calls: int,
    search: Search,
    snippet: Callable[[str], str],
    count_tokens: Callable[[str], int],
) -> TongyiRun:
    """MultiTurnReactAgent._run: at most `max_calls` turns, each answer's first call made, until an answer holds
    <answer> tags; past MAX_CONTEXT_TOKENS (`count_tokens` of the conversation's text) the last message is replaced
    by the request for an answer and one more turn ends the query."""
    messages, left = run.messages, max_calls
    while left > 0:
        left -= 1
        with ctx.group(f"turn {max_calls - left}"):
            content = (await ask(ctx, run, sampling)).split("<tool_response>")[0]
            messages.append({"role": "assistant", "content": content.strip()})
            if "<tool_call>" in content and "</tool_call>" in content:
                written = content.split("<tool_call>")[1].split("</tool_call>")[0]
                output = await call_tool(written, run, search, snippet)
                ctx.record_step("tool call", inputs={"call": written}, outputs={"output": output})
                messages.append({"role": "user", "content": f"<tool_response>\n{output}\n</tool_response>"})
            if "<answer>" in content and "</answer>" in content:
                break
            if left <= 0 and "<answer>" not in content:
                messages[-1]["content"] = TONGYI_CALLS_EXCEEDED
            if count_tokens(text_prompt(messages)) > MAX_CONTEXT_TOKENS:
                messages[-1]["content"] = TONGYI_CONTEXT_EXCEEDED
                content = await ask(ctx, run, sampling)
                messages.append({"role": "assistant", "content": content.strip()})
                answered = "<answer>" in content and "</answer>" in content
                run.termination = CONTEXT_ANSWER if answered else CONTEXT_NO_ANSWER
                run.answer = answer_between_tags(content.strip()) if answered else ""
                return run
    if "<answer>" in messages[-1]["content"]:
        run.termination, run.answer = "answer", answer_between_tags(messages[-1]["content"])
    else:
        run.termination = CALLS_EXCEEDED if left == 0 else NO_ANSWER
    return run


def run_record(messages: list[dict[str, str]]) -> list[RunItem]:
    """tongyi_client's `result` list from the conversation (parse_messages_to_result_array): per assistant message
    a reasoning item per <think> block, a tool_call item per <tool_call> block that is a JSON object (its output:
    the first <tool_response> of the next message, when a user message), an output_text item per <answer> block."""
    result: list[RunItem] = []

    def item(kind: str, output: str, name: Any = None, arguments: str | None = None) -> None:
        result.append({"type": kind, "tool_name": name, "arguments": arguments, "output": output})

    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        content = message["content"]
        for thought in re.findall(r"<think>(.*?)</think>", content, re.S):
            item("reasoning", thought.strip())
        following = messages[i + 1] if i + 1 < len(messages) else {}
        response = re.search(r"<tool_response>\n(.*?)\n</tool_response>", following.get("content", ""), re.S)
        output = response.group(1).strip() if response and following["role"] == "user" else ""
        for written in re.findall(r"<tool_call>(.*?)</tool_call>", content, re.S):
            try:
                call = json.loads(written)
            except ValueError:
                continue
            if isinstance(call, dict):
                item("tool_call", output, call.get("name", ""), json.dumps(call.get("arguments", {})))
        for answer in re.findall(r"<answer>(.*?)</answer>", content, re.S):
            item("output_text", answer.strip())
    return result
