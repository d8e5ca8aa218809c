"""Reading a YAML task file so that every mistake can name its line: mappings and lists remember where
each key and item was written, and a YAML error becomes one `file:line: ...` ConfigError.

Only plain data is read (PyYAML's safe constructors): a tag such as `!function` is refused, duplicate
keys too (PyYAML would silently keep the last one), and aliases (`*name`, `<<: *name`): nine aliases of
nine aliases are a few lines that expand to gigabytes wherever the value is formatted or copied."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from .._errors import ConfigError, did_you_mean
from .values import KINDS, kind


class SpecError(ConfigError):
    """A mistake in a YAML task file: `file:line: key 'a.b': problem`, one line."""

    def __init__(self, source: str, line: int, key: str | None, problem: str) -> None:
        self.source, self.line, self.key = source, line, key
        super().__init__(f"{source}:{line}: " + (f"key '{key}': " if key else "") + problem)


class LocatedDict(dict[Any, Any]):
    """A YAML mapping with the line of each key (`lines`) and of the mapping itself (`line`)."""

    line: int = 0
    lines: dict[Any, int]


class LocatedList(list[Any]):
    """A YAML sequence with the line of each item (`lines`) and of the sequence itself (`line`)."""

    line: int = 0
    lines: list[int]


if TYPE_CHECKING:
    _SafeLoader = yaml.SafeLoader
else:  # libyaml's parser when PyYAML has it
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):
    """libyaml's parser when PyYAML has it: the registry reads the built-in task files' headers at every start-up,
    several times faster than with the pure-Python parser."""


def _once(loader: _Loader, node: yaml.Node) -> Any:
    """The value of a node met for the first time; a node met again is an alias of it (the composer
    hands out the anchored node itself), refused."""
    if node in loader.constructed_objects or node in loader.recursive_objects:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            "an alias (*name) of the value anchored here is not allowed in a task file: write the value out",
            node.start_mark,
        )
    return loader.construct_object(node, deep=True)


def _mapping(loader: _Loader, node: yaml.MappingNode) -> LocatedDict:
    loader.flatten_mapping(node)
    out = LocatedDict()
    out.line, out.lines = node.start_mark.line + 1, {}
    for key_node, value_node in node.value:
        key = _once(loader, key_node)
        if key in out:
            raise yaml.constructor.ConstructorError(None, None, f"key '{key}' is given twice", key_node.start_mark)
        out[key] = _once(loader, value_node)
        out.lines[key] = key_node.start_mark.line + 1
    return out


def _sequence(loader: _Loader, node: yaml.SequenceNode) -> LocatedList:
    out = LocatedList(_once(loader, child) for child in node.value)
    out.line, out.lines = node.start_mark.line + 1, [child.start_mark.line + 1 for child in node.value]
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _sequence)


def read_yaml(path: Path, source: str) -> Any:
    """The file's data with line numbers; any YAML error as one line naming `source` and the line."""
    return read_yaml_bytes(read_file_bytes(path, source), source)


def read_file_bytes(path: Path, source: str) -> bytes:
    """The file's bytes, read once; a file that cannot be read is one line naming `source`."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read it ({exc.strerror or exc})") from exc


def read_yaml_bytes(raw: bytes, source: str) -> Any:
    """`raw` (a file's bytes) read as YAML with line numbers; bytes that are not UTF-8 or any YAML error as one
    line naming `source` and where."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(
            source, 1, None, f"not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        ) from exc
    return read_yaml_text(text, source)


TASK_DATA = "a YAML task is data; logic belongs in a prompt style written in Python (docs/yaml-tasks.md)"


class PlainLoader(_SafeLoader):
    """PyYAML's safe loader (libyaml's where it has it): plain data, aliases and merge keys too, but a key given
    twice in one mapping is refused (PyYAML would silently keep the last: a price table's model priced twice)."""


def _plain_mapping(loader: PlainLoader, node: yaml.MappingNode) -> Any:
    given: list[Any] = []  # the mapping's own keys (a merged `<<: *name`'s may be given again: they yield)
    for key_node, _ in node.value:
        if key_node.tag != "tag:yaml.org,2002:merge":
            key = loader.construct_object(key_node, deep=True)
            if key in given:
                raise yaml.constructor.ConstructorError(None, None, f"key '{key}' is given twice", key_node.start_mark)
            given.append(key)
    return loader.construct_mapping(node, deep=True)


PlainLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _plain_mapping)


def read_yaml_text(text: str, source: str, loader: type[_SafeLoader] = _Loader, data_is: str = TASK_DATA) -> Any:
    """`text`'s data with line numbers, as `read_yaml` reads a file's; `loader`: a safe loader of other data
    (`PlainLoader`: no line numbers, aliases allowed), whose refusal of a tag says `data_is`. Nesting deeper than
    Python follows, or a value its type cannot hold (`!!int 0b2`, a year 0), is one line too."""
    try:
        return yaml.load(text, Loader=loader)  # a SafeLoader
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        problem = exc.problem or str(exc)
        if "could not determine a constructor for the tag" in problem:
            problem = f"the tag {problem.rsplit(' ', 1)[-1]} is not allowed: {data_is}"
        raise SpecError(source, mark.line + 1 if mark else 1, None, problem) from exc
    except yaml.reader.ReaderError as exc:  # a character YAML does not take (NUL, a control character)
        line_start = text.rfind("\n", 0, exc.position) + 1
        raise SpecError(
            source,
            text.count("\n", 0, exc.position) + 1,
            None,
            f"not valid YAML (character #x{exc.character:04x} at column {exc.position - line_start + 1}: {exc.reason})",
        ) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        parts = (getattr(exc, "context", None), getattr(exc, "problem", None))
        problem = " ".join(part for part in parts if part) or " ".join(str(exc).split())  # one line
        raise SpecError(
            source,
            mark.line + 1 if mark else 1,
            None,
            f"not valid YAML ({problem}" + (f", column {mark.column + 1})" if mark else ")"),
        ) from exc
    except RecursionError:
        raise SpecError(source, 1, None, "nested too deeply to read: not valid YAML for ragbench") from None
    except (ValueError, OverflowError) as exc:  # raised by a constructor (int(), float(), datetime()) with no line
        raise SpecError(source, 1, None, f"a value YAML cannot read ({exc})") from None


class Section:
    """One mapping of the file being checked: typed access to its keys, every problem a SpecError at
    the key's line."""

    def __init__(self, source: str, data: Any, key: str, line: int) -> None:
        self.source, self.key = source, key
        self.line = getattr(data, "line", line)
        if not isinstance(data, dict):
            raise SpecError(source, self.line, key or None, f"expected a mapping, got {_kind(data)}")
        self.data = data

    def at(self, name: str) -> tuple[str, int]:
        """The dotted key of `name` and its line (the section's line when it is not given)."""
        return (f"{self.key}.{name}" if self.key else name), getattr(self.data, "lines", {}).get(name, self.line)

    def error(self, name: str | None, problem: str) -> SpecError:
        key, line = self.at(name) if name is not None else (self.key, self.line)
        return SpecError(self.source, line, key or None, problem)

    def only(self, allowed: Iterable[str]) -> None:
        allowed = list(allowed)
        for name in self.data:
            if name not in allowed:
                raise self.error(
                    str(name),
                    "unknown key" + (did_you_mean(name, allowed) or f" (expected one of {', '.join(allowed)})"),
                )

    def get(
        self,
        name: str,
        types: type | tuple[type, ...],
        default: Any = None,
        required: bool = False,
        choices: tuple[str, ...] | None = None,
    ) -> Any:
        if name not in self.data or self.data[name] is None:
            if required:
                raise self.error(None, f"'{name}' is required" if self.key else f"key '{name}' is required")
            return default
        value = self.data[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in _tuple(types)):
            raise self.error(name, f"expected {_names(types)}, got {_kind(value)}")
        if choices is not None and value not in choices:
            raise self.error(name, f"'{value}' is not one of {', '.join(choices)}" + did_you_mean(str(value), choices))
        return value

    def strings(self, name: str) -> list[str]:
        """A list of strings (a single string is a list of one)."""
        value = self.get(name, (list, str), [])
        items = [value] if isinstance(value, str) else value
        for i, item in enumerate(items):
            if not isinstance(item, str):
                line = value.lines[i] if isinstance(value, LocatedList) else self.at(name)[1]
                raise SpecError(
                    self.source, line, self.at(name)[0], f"item {i + 1}: expected a string, got {_kind(item)}"
                )
        return list(items)

    def section(self, name: str) -> Section | None:
        if name not in self.data or self.data[name] is None:
            return None
        key, line = self.at(name)
        return Section(self.source, self.data[name], key, line)


def _tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _names(types: type | tuple[type, ...]) -> str:
    return " or ".join(KINDS.get(t, t.__name__) for t in _tuple(types))


# a YAML file's mappings and lists read as located ones; an empty value is nothing
YAML_KINDS: dict[type, str] = {**KINDS, LocatedDict: "a mapping", LocatedList: "a list", type(None): "nothing"}


def _kind(value: Any) -> str:
    return kind(value, YAML_KINDS)
