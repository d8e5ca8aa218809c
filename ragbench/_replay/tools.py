"""Recording and replaying the tools a task gives systems (`ctx.tools`, e.g. CRAG's KG API client).

A tool is any object whose operations are methods (sync or async) taking and returning JSON-like
values, or a callable. During a run
each tool is wrapped in a `RecordingTool`, which writes every call (method, arguments, result or
error) to `calls/tools.jsonl`; `ReplayTool` answers the same calls from that file with no server.
"""

from __future__ import annotations

import difflib
import inspect
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .._storage.jsonl import iter_jsonl, read_json
from .._values.json_values import JsonObject, JsonValue
from .recording import TOOL_NAMES_FILE, TOOLS_FILE, CallRecorder


class ReplayedToolError(RuntimeError):
    """A tool call that failed in the recorded run, failing again the same way."""


def _plain(value: object) -> Any:
    """Arguments as they read back from JSON (tuples become lists), so lookups compare equal."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


class RecordingTool:
    """Forwards every call to `tool` (its methods, or the tool itself when it is callable; sync or
    async) and records it."""

    def __init__(self, tool: Any, task: str, name: str, recorder: CallRecorder) -> None:
        self._tool, self._task, self._name, self._recorder = tool, task, name, recorder

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._recorded(self._tool, "__call__")(*args, **kwargs)

    def __getattr__(self, method: str) -> Any:
        target = getattr(self._tool, method)
        if not callable(target) or method.startswith("_"):
            return target
        return self._recorded(target, method)

    def _recorded(self, target: Any, method: str) -> Any:
        def record(
            args: tuple[object, ...],
            kwargs: Mapping[str, object],
            kind: str,
            result: object = None,
            error: Exception | None = None,
        ) -> None:
            outcome = {"error": f"{type(error).__name__}: {error}"} if error is not None else {"result": _plain(result)}
            self._recorder.tool(
                self._task, self._name, method, _plain(list(args)), _plain(kwargs), kind=kind, **outcome
            )

        async def finish(pending: Any, args: tuple[object, ...], kwargs: Mapping[str, object]) -> Any:
            try:
                result = await pending
            except Exception as exc:
                record(args, kwargs, "async", error=exc)
                raise
            record(args, kwargs, "async", result)
            return result

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                result = target(*args, **kwargs)
            except Exception as exc:
                record(args, kwargs, "sync", error=exc)
                raise
            if inspect.isawaitable(result):  # an async method: recorded when it completes
                return finish(result, args, kwargs)
            record(args, kwargs, "sync", result)
            return result

        return call


class ReplayTool:
    """Answers a tool's calls from recorded lines, sync or async as they were made; a call never
    recorded is an error naming the nearest recorded one."""

    def __init__(self, name: str, records: list[JsonObject], source: Path) -> None:
        self._name, self._source = name, source
        self._answers: dict[str, JsonObject] = {}
        self._kinds: dict[str, str] = {}
        for record in records:
            key = self._key(record["method"], record.get("args") or [], record.get("kwargs") or {})
            self._answers.setdefault(key, record)
            kind = record.get("kind", "async")
            self._kinds.setdefault(str(record["method"]), kind if isinstance(kind, str) else "async")

    @staticmethod
    def _key(method: JsonValue, args: JsonValue, kwargs: JsonValue) -> str:
        return json.dumps([method, args, kwargs], ensure_ascii=False, sort_keys=True)

    def _answer(self, method: str, args: tuple[object, ...], kwargs: Mapping[str, object]) -> JsonValue:
        key = self._key(method, _plain(list(args)), _plain(kwargs))
        record = self._answers.get(key)
        if record is None:
            nearest = difflib.get_close_matches(key, list(self._answers), n=1, cutoff=0.0)
            raise ReplayedToolError(
                f"replay miss in {self._source}: no recorded {self._name} call {key[:300]}; "
                f"nearest recorded call: {nearest[0][:300] if nearest else 'none'}"
            )
        if "error" in record:
            raise ReplayedToolError(record["error"])
        return record["result"]

    def _replayed(self, method: str) -> Any:
        if self._kinds.get(method) == "sync":
            return lambda *args, **kwargs: self._answer(method, args, kwargs)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return self._answer(method, args, kwargs)

        return call

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._replayed("__call__")(*args, **kwargs)

    def __getattr__(self, method: str) -> Any:
        if method.startswith("_"):
            raise AttributeError(method)
        return self._replayed(method)

    async def aclose(self) -> None:
        """Nothing to release (a replayed tool holds no connection)."""


def recording_tools(task: str, tools: Mapping[str, object], recorder: CallRecorder) -> dict[str, RecordingTool]:
    return {name: RecordingTool(tool, task, name, recorder) for name, tool in tools.items()}


def load_replay_tools(calls_dir: str | Path) -> dict[str, dict[str, ReplayTool]]:
    """Per task, one `ReplayTool` per tool the recorded run set up (calls/tools.json), answering
    from calls/tools.jsonl."""
    calls_dir = Path(calls_dir)
    names_file, path = calls_dir / TOOL_NAMES_FILE, calls_dir / TOOLS_FILE
    names: dict[str, list[str]] = (
        read_json(names_file, "the tool names a ragbench run recorded") if names_file.is_file() else {}
    )
    by_tool: dict[tuple[str, str], list[JsonObject]] = {}
    if path.is_file():
        for line, record in iter_jsonl(path):
            if not isinstance(record, dict) or not isinstance(record.get("tool"), str) or "method" not in record:
                raise ConfigError(
                    f"{path}:{line + 1}: not a recorded tool call; expected "
                    '{"task", "tool", "method", "args", "kwargs", "result" | "error"}'
                )
            by_tool.setdefault((record.get("task", ""), record["tool"]), []).append(record)
    return {
        task: {name: ReplayTool(name, by_tool.get((task, name), []), path) for name in tool_names}
        for task, tool_names in names.items()
    }
