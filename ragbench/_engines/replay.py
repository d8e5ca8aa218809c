"""`replay` engine: answers recorded calls from a JSONL file, so LLM-judge and NLI decisions
can be re-scored offline.

One call per line: {"messages": [{"role", "content"}, ...], "response": "..."} for chat or
{"prompt": "...", "response": "..."} for completion. A line may carry "error": "..." instead
of "response" to replay a failed call, and "sampling": {...} to match only requests with those
sampling parameters (otherwise sampling is ignored). The files a run records (calls/llm.jsonl, see
ragbench._replay.recording) also carry "role" (`--model-arg role=judge:0` reads only that role's lines) and
"response_data", the whole response (token counts, finish reason, logprobs, tool calls), returned as it was. A miss
is an error that shows the nearest recorded request.

Tool calling: a chat record's messages may hold an assistant turn's "tool_calls" and a tool turn's "tool_call_id",
and the record the request's "tools" and "tool_choice" (as `Request.to_dict()` writes them); all are part of what
a request is matched by. A hand-written record answers with tool calls by "tool_calls": [{"id", "name",
"arguments"}, ...] (arguments an object, or the text the model wrote), finish_reason then "tool_calls"; a
record of another shape is refused when the file is read (ragbench._engines.answer_records).

Per-token data (to re-score token-level decisions such as Self-RAG's reflection tokens offline): a
record may add "tokens": [generated token strings], "logprobs": [{token: logprob, ...} per position]
(the chosen token must be in its position's dict), optional "token_ids": [ints], "cumulative_logprob"
(default: the sum of the chosen tokens' log-probabilities) and "ranks": [{token: rank, ...} per
position] (how many vocabulary entries are more likely; a recording from a top-k dict writes k for
"k or more"). A request's `logprob_tokens` are then answered from each position's dict (tokens absent
there are absent from `named`, as a token outside vLLM's top-k is; with `logprob_window=k`, so is one
of rank k or more, its rank from "ranks" or else from the recorded entries above it, unless generated
there), `logprobs=k` from the k largest entries.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import cast

from .._errors import ConfigError, RecordError
from .._replay.call_refs import resolved
from .._values.engine_errors import EngineError
from .._values.json_values import JsonObject, JsonValue, json_object
from .._values.llm_request import Request
from .._values.llm_responses import Response, TokenLogprobs
from .._values.sampling import Sampling
from .._values.tool_calls import ToolCall
from .answer_records import AnswerRecord, RecordedRequest, ReplayRecord, record_problem
from .base import Engine
from .local.content import file_digest


def check_token_record(record: Mapping[str, object]) -> AnswerRecord:
    """`record`, checked: ValueError unless its tool calls, finish reason and per-token fields (if any) are well
    formed (ragbench._engines.answer_records)."""
    problem = record_problem(record)
    if problem is not None:
        raise ValueError(problem)
    return cast(AnswerRecord, record)


def tool_calls(record: AnswerRecord) -> tuple[ToolCall, ...] | None:
    """A checked record's "tool_calls" (`check_token_record`); None without the field."""
    calls = record.get("tool_calls")
    return None if calls is None else tuple(ToolCall.from_dict(call) for call in calls)


def token_response(record: AnswerRecord, sampling: Sampling) -> Response:
    """A Response from a record with text and optional per-token data, keeping only what the request
    asks for (its logprob_tokens and top-k), never the whole recorded dicts."""
    response = record["response"] if "response" in record or "tool_calls" not in record else ""
    texts = [response] if isinstance(response, str) else list(response)
    calls = tool_calls(record)
    finish = str(record.get("finish_reason") or ("tool_calls" if calls else "stop"))
    per_choice = None if calls is None else [calls] * len(texts)
    if "tokens" not in record or (sampling.logprobs is None and not sampling.logprob_tokens):
        return Response(
            texts=texts,
            completion_tokens=len(record.get("tokens") or ()),
            finish_reason=finish,
            choice_tool_calls=per_choice,
        )
    ids = record.get("token_ids") or [None] * len(record["tokens"])
    k = sampling.logprobs or 0
    logprobs = []
    ranks = record.get("ranks") or [{}] * len(ids)
    for token, lps, token_id, known in zip(record["tokens"], record["logprobs"], ids, ranks):
        top = dict(sorted(lps.items(), key=lambda item: item[1], reverse=True)[:k]) if k else {}
        named = {
            name: lps[name]
            for name in sampling.logprob_tokens
            if name in lps and in_window(lps, name, token, sampling.logprob_window, known.get(name))
        }
        logprobs.append(TokenLogprobs(token=token, logprob=float(lps[token]), top=top, named=named, token_id=token_id))
    cumulative = record.get("cumulative_logprob")
    return Response(
        texts=texts,
        logprobs=logprobs,
        completion_tokens=len(logprobs),
        finish_reason=finish,
        choice_tool_calls=per_choice,
        cumulative_logprob=float(cumulative) if cumulative is not None else sum(t.logprob for t in logprobs),
    )


def in_window(lps: dict[str, float], name: str, token: str, window: int | None, rank: int | None = None) -> bool:
    """Whether recorded entry `name` shows in a top-`window` dict: it is the generated token, or its
    rank (the recorded "ranks" entry, else the count of recorded entries more likely than it) is below
    the window. A recording of top-k dicts thus replays any window up to k."""
    if window is None or name == token:
        return True
    if rank is None:
        rank = sum(1 for other in lps.values() if other > lps[name])
    return rank < window


def _request_text(request: RecordedRequest) -> str:
    """What a recorded request (`Request.to_dict()` fields) is looked up by: the prompt, or the messages' roles
    and contents, and, where a chat used tools, the turns' tool calls and results and the tools offered (JSON)."""
    if request.get("prompt") is not None:
        images = request.get("images")  # a prompt's images by digest (`Request.to_dict`), never their paths
        return str(request["prompt"]) + ("\n[images] " + " ".join(str(i["sha256"]) for i in images) if images else "")
    lines = [f"[{m['role']}] {_content(m['content'])}" + _tool_parts(m) for m in request.get("messages") or []]
    if request.get("tools") or request.get("tool_choice") is not None:
        lines.append("[tools] " + json.dumps([request.get("tools"), request.get("tool_choice")], ensure_ascii=False))
    return "\n".join(lines)


def _content(content: JsonValue) -> str:
    """A turn's content as matched: its text, or its parts as JSON (an image part by its digest: a run's record
    writes `{"sha256", "media_type", "bytes"}`, a hand-written one may give `{"sha256"}` alone)."""
    if not isinstance(content, list):
        return str(content)
    return json.dumps([_digest_part(part) for part in content], ensure_ascii=False)


def _digest_part(part: JsonValue) -> JsonValue:
    image = part.get("image") if isinstance(part, dict) and part.get("type") == "image" else None
    return {"type": "image", "sha256": image.get("sha256")} if isinstance(image, dict) else part


def _tool_parts(message: JsonObject) -> str:
    parts = {k: message[k] for k in ("tool_calls", "tool_call_id") if k in message}
    return " " + json.dumps(parts, ensure_ascii=False) if parts else ""


class ReplayEngine(Engine):
    kind = "replay"
    starts_processes = False
    takes_images = True  # matched by their digests (`_request_text`)
    calls_tools = True  # a recorded answer's tool calls are in its "response_data" (or a record's "tool_calls")
    connects_mcp = True  # a request offering a remote MCP server gets the recorded answer, its servers' calls in it
    cacheable = False  # the file is the cache
    max_batch_size = 1024

    def __init__(self, model: str, role: str | None = None, cacheable: bool = False) -> None:
        super().__init__(model)
        self.path = Path(model)
        # --replay caches like the recorded run did, so repeated calls are marked cached as they were
        self.cacheable = bool(cacheable)
        self.role = role  # only lines of this role (a run's calls/llm.jsonl holds the model, judges and NLI)
        self.records: dict[str, list[ReplayRecord]] = {}
        self.unresolved = 0  # references to calls of examples the run never wrote (a killed run): skipped
        self._recorded_engine: JsonValue = None  # the engine a run's recording names on its lines ("openai:o3;api=...")
        self._load()

    @property
    def served_model(self) -> str:
        """The recorded engine's model, where the file names one (a run's calls/llm.jsonl does), so a system that
        decides by the model's name decides as it did in the recorded run; else the file."""
        engine = self._recorded_engine
        return engine.split(":", 1)[1].split(";", 1)[0] if isinstance(engine, str) and ":" in engine else self.model

    @classmethod
    def content_of(cls, model: str) -> str | None:
        return file_digest(model)

    @property
    def engine_id(self) -> str:
        """The cache's key: the file's content (not its name: an edited file, or another folder's file of
        the same name, never gets the old answers) and the role read from it. A run's recording refers
        to its samples by a hash of request and reply (ragbench._replay.call_refs), so the file alone
        decides every answer."""
        return f"{self.kind}:{self.model};role={self.role};sha256={self._content}"

    def _load(self) -> None:
        if not self.path.is_file():
            raise ConfigError(f"replay file not found: {self.path} (use replay:PATH to a JSONL of recorded calls)")
        self._content = hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]  # the records are all held too
        expected = (
            'expected {"prompt" or "messages", "response" or "error"} (optionally "tokens", '
            '"logprobs", "token_ids", "cumulative_logprob", "ranks", "finish_reason")'
        )
        for index, record in resolved(self.path):  # a run's files refer to its samples (ragbench._replay.call_refs)
            if record is None:
                self.unresolved += 1
                continue
            if isinstance(record, RecordError):
                raise ConfigError(f"{record}; {expected}")
            try:
                key = _request_text(cast(RecordedRequest, record))
                if "response" not in record and "error" not in record and "tool_calls" not in record:
                    raise KeyError("response")
                checked = cast(ReplayRecord, check_token_record(record))
            except (ValueError, KeyError, TypeError) as exc:
                raise ConfigError(f"{self.path}:{index + 1}: not a replay record ({exc}); {expected}") from exc
            if self.role is None or checked.get("role", self.role) == self.role:
                self.records.setdefault(key, []).append(checked)
                self._recorded_engine = self._recorded_engine or checked.get("engine")

    def generate(self, requests: list[Request]) -> list[Response | EngineError]:
        return [self._answer(request) for request in requests]

    def _answer(self, request: Request) -> Response | EngineError:
        asked = request.to_dict()
        key, sampling = _request_text(cast(RecordedRequest, asked)), json_object(asked["sampling"])
        for record in self.records.get(key, []):
            wanted = record.get("sampling") or {}
            if all(sampling.get(name) == value for name, value in wanted.items()):
                if "error" in record:
                    return EngineError(f"replayed error: {record['error']}")
                if "response_data" in record:  # a run's own recording: the response as it was
                    return Response.from_dict(record["response_data"])
                return token_response(record, request.sampling)
        return EngineError(self._miss_message(key))

    def _miss_message(self, key: str) -> str:
        nearest = difflib.get_close_matches(key, list(self.records), n=1, cutoff=0.0)
        shown = json.dumps(nearest[0][:300], ensure_ascii=False) if nearest else "none"
        return (
            f"replay miss in {self.path}: no recorded call for {json.dumps(key[:300], ensure_ascii=False)}; "
            f"nearest recorded request: {shown}"
        )
