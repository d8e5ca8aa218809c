"""One copy of every LLM exchange per run: call records refer to where the exchange already is.

A sample's `trace` (and `judge_trace`) is the one copy of the prompts and replies of the system's
and the judges' calls; `nli_calls.jsonl` is the one copy of the NLI model's. The run's other
records of such a call (calls/llm.jsonl, judgeN_calls.jsonl) carry a reference instead:

  {"ref": sha256 of the request (prompt or messages, and sampling) and of the reply the holder
   gives back, "error"?: ..., "response_data"?: {the response's fields the holder does not give
   back as they were}}

plus their own fields (role, engine). `resolved` reads such a file back as full records (request,
"response" and the whole "response_data", or "error"), looking the references up in the run folder
the file lies in, so the files stay `replay` files. A reference is resolved streaming: the
references wanted are collected first, then the samples are read one at a time. A call whose
example never reached the samples (a run killed before it finished) cannot be resolved: `--resume`
the run first.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TypeAlias

from .._errors import RecordError
from .._records import read_samples
from .._storage.jsonl import iter_jsonl
from .._values.json_values import JsonObject, JsonValue
from .._values.llm_responses import PROMPT_CACHE_COUNTS

NLI_LOG = "nli_calls.jsonl"
_REQUEST_FIELDS = ("prompt", "messages", "tools", "tool_choice", "sampling")  # a request without tools: no key
Held: TypeAlias = (
    "tuple[JsonObject, JsonObject | None]"  # an exchange's request and the response data its holder gives back
)


def call_ref(request: JsonObject, held: JsonObject | None) -> str:
    """The reference of an exchange: sha256 of its request (`Request.to_dict()`, or the same read back
    from JSON) and of the response data its holder gives back (None for a failed call), so two
    judges asked the same question and answering differently are told apart."""
    text = json.dumps(
        [{k: request[k] for k in _REQUEST_FIELDS if k in request}, held],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def step_response_data(step: JsonObject) -> JsonObject:
    """What a trace step gives back of its response (`Response.to_dict()` fields)."""
    response = step.get("response")
    response = response if isinstance(response, dict) else {}
    texts = response.get("texts")
    data: JsonObject = {
        "texts": list(texts) if isinstance(texts, list) else [],
        "logprobs": response.get("logprobs"),
        "prompt_tokens": step.get("prompt_tokens", 0),
        "completion_tokens": step.get("completion_tokens", 0),
        "finish_reason": response.get("finish_reason", "stop"),
        "cumulative_logprob": None,
    }
    if "tool_calls" in response:
        data["tool_calls"] = response["tool_calls"]
    data.update({name: step[name] for name in PROMPT_CACHE_COUNTS if step.get(name)})  # the step keeps them too
    return data


def log_response_data(line: JsonObject) -> JsonObject:
    """What an exchange log line ({"prompt" | "messages", "sampling", "response"}) gives back."""
    response = line["response"]
    return {
        "texts": [response] if isinstance(response, str) else list(response) if isinstance(response, list) else [],
        "logprobs": None,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "finish_reason": "stop",
        "cumulative_logprob": None,
    }


def response_texts(response: JsonObject) -> list[JsonValue]:
    """A response's texts (`Response.to_dict()`'s "texts"); [""] where it has none."""
    texts = response.get("texts")
    return texts if isinstance(texts, list) and texts else [""]


def reply_of(texts: Sequence[JsonValue]) -> JsonValue:
    """A replay record's "response": the text, or the list of texts of an n > 1 request."""
    return texts[0] if len(texts) == 1 else list(texts)


def reference(
    request: JsonObject, response: JsonObject | None, held: JsonObject | None, error: str | None = None
) -> JsonObject:
    """The reference record of a call whose request is held elsewhere and whose response the holder
    gives back as `held`; the fields of `response` that differ from it are carried."""
    if response is None:
        return {"ref": call_ref(request, None), "error": error or "failed"}
    out: JsonObject = {"ref": call_ref(request, held)}
    differing = {k: v for k, v in response.items() if (held or {}).get(k) != v}
    if differing:
        out["response_data"] = differing
    return out


def run_folder_of(path: Path) -> Path:
    """The run folder a call file lies in: its own folder (judgeN_calls.jsonl) or the one above (calls/)."""
    return path.parent if (path.parent / "samples").is_dir() else path.parent.parent


def _holders(folder: Path) -> Iterator[Held]:
    """(request, response data or None for a failed call) of every exchange held in a run folder:
    its samples' LLM steps (read by the samples' one reader), then the NLI log's lines, one at a time."""
    for sample_file in sorted((folder / "samples").glob("*.jsonl")):
        for record in read_samples(sample_file):  # a line that is no sample record holds nothing to refer to
            for step in (*record.trace, *record.judge_trace):
                if step.kind == "llm":
                    yield step.request, (None if step.response is None else step_response_data(step.to_dict()))
    log = folder / NLI_LOG
    if log.is_file():
        for _, line in iter_jsonl(log):
            if isinstance(line, dict) and "response" in line and ("prompt" in line or "messages" in line):
                yield {k: line[k] for k in _REQUEST_FIELDS if k in line}, log_response_data(line)


def _resolve(record: JsonObject, held: Held) -> JsonObject:
    request, data = held
    out = {k: v for k, v in record.items() if k not in ("ref", "response_data")}
    out.update(request)
    if data is not None:
        carried = record.get("response_data")
        out["response_data"] = data = {**data, **(carried if isinstance(carried, dict) else {})}
        texts = data["texts"]
        out["response"] = reply_of(texts if isinstance(texts, list) else [])
    return out


def resolved(path: str | Path) -> Iterator[tuple[int, JsonObject | RecordError | None]]:
    """(line index, record) of a call file with its references resolved; None for a reference that
    the run folder does not hold (see the module's docstring), a RecordError for a bad line."""
    path = Path(path)
    wanted = {record["ref"] for _, record in iter_jsonl(path) if isinstance(record, dict) and "ref" in record}
    held: dict[str, Held] = {}
    if wanted:
        for request, data in _holders(run_folder_of(path)):
            key = call_ref(request, data)
            if key in wanted and key not in held:
                held[key] = (request, data)
    for index, record in iter_jsonl(path):
        if isinstance(record, dict) and "ref" in record:
            found = held.get(record["ref"])
            yield index, None if found is None else _resolve(record, found)
        else:
            yield index, record
