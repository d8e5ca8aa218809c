"""A conversation's turns held once per run (issue 97): a sample records its history as the last turn of a chain
in turns/<task>.jsonl, not as a copy of every earlier turn (a 10,000-turn conversation's samples held each turn's
whole history, in `turns` and again in its prompts: quadratic, 1 GB for 4,518 turns).

turns/<task>.jsonl holds one turn a line, `[parent, turn]`: the turn (`{"role", "content"}` as the example held it)
and the line of the turn before it (-1: the first). A sample line whose example has turns is written with
`turns_node`, the line of its last turn, in place of `turns`, and in each prompt of its trace that holds those turns
in a row, one `{"turns": NODE}` in their place; its `schema_version` is `SHARED_TURNS_VERSION` (an older ragbench
refuses the line in one line). Two examples sharing earlier turns (the turns of one conversation) share their lines:
a sample adds only the turns its history has beyond the longest one written before of the same first turn. Read
back (`TurnsReader.with_turns`: the reading's reader, which reads the turns file once), the line is the one the
run made, turns and prompts as they were (byte-equal values). A line whose chain is not in the turns file (removed,
cut short, another run's) is a RecordError naming both files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import RecordError
from .._read_only import read_only
from .files import file_there, open_file
from .jsonl import Appender, dumps, open_append, parse_json

if TYPE_CHECKING:
    from .._values.json_values import JsonObject

SHARED_TURNS_VERSION = 3  # the schema_version of a sample line whose turns are in the turns file
NODE, MARK = "turns_node", "turns"  # a line's key for its last turn; a prompt's placeholder for the turns


def turns_file(samples_file: Path) -> Path:
    """turns/<task>.jsonl beside samples/<task>.jsonl (a folder of its own: samples/*.jsonl are the tasks)."""
    return samples_file.parent.parent / "turns" / samples_file.name


@dataclass
class WrittenConversation:
    """The longest history written of one first turn: its turns and the line of each in the turns file."""

    turns: list[Any]
    nodes: list[int]


@dataclass
class TurnsWriter:
    """The turns file of one task's samples, appended to as its samples are written (`shared`)."""

    path: Path
    lines: int = 0  # lines in the file: the next turn's node
    conversations: dict[str, WrittenConversation] = field(default_factory=dict)
    _handle: Appender | None = None

    def shared(self, line: JsonObject) -> JsonObject:
        """`line` (a sample line) with its turns in the turns file, their lines appended first; as it is where it
        has no turns."""
        turns = line.get("turns")
        if not isinstance(turns, list) or not turns:
            return line
        node = self.node_of(turns)
        out = {**line, "schema_version": SHARED_TURNS_VERSION, NODE: node}
        del out["turns"]
        out["trace"] = [_step_with_mark(step, turns, node) for step in _steps(line)]
        return out

    def shared_text(self, text: str) -> str:
        """`shared` of a line given as its JSON text (`dumps`'s), read and written again only where it may hold
        turns (a line without them is most lines, written as it came)."""
        if '"turns": [' not in text:
            return text
        line = json.loads(text)
        out = self.shared(line)
        return text if out is line else dumps(out)

    def node_of(self, turns: list[Any]) -> int:
        key = json.dumps(turns[0], sort_keys=True)
        known = self.conversations.get(key)
        shared = _common_prefix(turns, known.turns) if known is not None else 0
        nodes = known.nodes[:shared] if known is not None else []
        for turn in turns[shared:]:
            self.append([nodes[-1] if nodes else -1, turn])
            nodes.append(self.lines - 1)
        if known is None or len(turns) >= len(known.turns):
            self.conversations[key] = WrittenConversation(list(turns), nodes)
        return nodes[-1]

    def append(self, entry: list[Any]) -> None:
        if self._handle is None:
            self.path.parent.mkdir(exist_ok=True)
            self._handle = open_append(self.path)  # a line a killed run cut short stays alone, never glued to
            self.lines = _line_count(self.path)
        self._handle.write(entry)
        self.lines += 1

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _common_prefix(turns: list[Any], known: list[Any]) -> int:
    """How many first turns the two lists share (list comparisons, halving: no Python loop over the turns)."""
    low, high = 0, min(len(turns), len(known))
    if turns[:high] == known[:high]:
        return high
    while low < high:  # turns[:low] equal; turns[:high] not
        middle = (low + high + 1) // 2
        if turns[:middle] == known[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _step_with_mark(step: Any, turns: list[Any], node: int) -> Any:
    """An LLM step whose prompt holds `turns` in a row (as JSON, key order and all), with `{"turns": node}` there."""
    request = step.get("request") if isinstance(step, dict) else None
    if not isinstance(request, dict):
        return step
    messages = request.get("messages")
    if not isinstance(messages, list) or len(messages) < len(turns):
        return step
    text = json.dumps(turns)
    for start in range(len(messages) - len(turns) + 1):
        if messages[start] == turns[0] and json.dumps(messages[start : start + len(turns)]) == text:
            marked = [*messages[:start], {MARK: node}, *messages[start + len(turns) :]]
            return {**step, "request": {**request, "messages": marked}}
    return step


def _line_count(path: Path) -> int:
    with open_file(path) as handle:
        return sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))


class TurnsReader:
    """Reads sample lines back with their turns (`with_turns`): each turns file read once while it stays as it is
    (its size, time and inode; appended to, it is read again), held by this reader only. A reading of samples owns
    one (a file's lines read in a row read its turns file once); nothing is kept past it."""

    def __init__(self) -> None:
        self._read: dict[Path, tuple[tuple[int, int, int], Chains]] = {}  # the last reading of each turns file

    def chains(self, path: Path) -> Chains:
        stat = path.stat()
        state = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
        held = self._read.get(path)
        if held is None or held[0] != state:
            held = self._read[path] = (state, _chains(path))
        return held[1]

    def with_turns(self, record: JsonObject, samples_file: str, line: int) -> JsonObject | RecordError:
        """A sample line as the run made it: its turns and its prompts' turns read back from the turns file; a
        line without `turns_node` as it is."""
        node = record.get(NODE)
        if node is None:
            return record
        path = turns_file(Path(samples_file))
        try:
            if not isinstance(node, int) or isinstance(node, bool):
                raise ValueError(f"`{NODE}` {node!r} is no line number")
            turns = self.chains(path).turns(node)
        except (OSError, ValueError) as exc:
            return RecordError(
                samples_file,
                line + 1,
                f"its conversation's turns are in {path}, which cannot give turn line {node} ({exc}); a run's turns/ "
                "folder stays beside its samples/: --resume runs the example again",
            )
        out = {**record, "turns": turns}
        del out[NODE]
        out["trace"] = [_step_unmarked(step, node, turns) for step in _steps(record)]
        return out


def _steps(line: JsonObject) -> list[Any]:
    trace = line.get("trace")
    return trace if isinstance(trace, list) else []


def _step_unmarked(step: Any, node: int, turns: list[Any]) -> Any:
    request = step.get("request") if isinstance(step, dict) else None
    if not isinstance(request, dict):
        return step
    messages = request.get("messages")
    if not isinstance(messages, list) or {MARK: node} not in messages:
        return step
    at = messages.index({MARK: node})
    return {**step, "request": {**request, "messages": [*messages[:at], *turns, *messages[at + 1 :]]}}


@dataclass
class Chains:
    """A turns file's lines: (parent, turn) each, or None for a line that cannot be read (cut short)."""

    entries: list[tuple[int, Any] | None]

    def turns(self, node: Any) -> list[Any]:
        """The turns of the chain that ends at line `node`, first to last: a new list (the caller's) of the
        reading's read-only turns, each turn one object however many samples hold it (a copy per sample made the
        samples of one long conversation quadratic in memory where a run's end holds them: 650 MB for 1,000 turns)."""
        out: list[Any] = []
        while node != -1:
            entry = self.entries[node] if isinstance(node, int) and 0 <= node < len(self.entries) else None
            if entry is None or not (entry[0] == -1 or 0 <= entry[0] < node):
                raise ValueError(f"line {node + 1 if isinstance(node, int) else node} missing or damaged")
            out.append(entry[1])
            node = entry[0]
        out.reverse()
        return out


def _chains(path: Path) -> Chains:
    """The lines of the turns file at `path` as it is."""
    entries: list[tuple[int, Any] | None] = []
    if not file_there(path):
        raise ValueError("no such file")
    with open_file(path) as handle:
        for text in handle:
            try:
                parent, turn = parse_json(text)  # too deep: NestedTooDeep, a ValueError, not a RecursionError
                entries.append((int(parent), read_only(turn)))
            except (ValueError, TypeError):
                entries.append(None)
    return Chains(entries)
