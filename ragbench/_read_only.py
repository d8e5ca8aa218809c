"""Read-only values: what ragbench hands to plugins that other plugins read after them.

One example is handed to the system, then the example and the prediction to every metric in turn, and the
sample records to several reporting hooks: a change one plugin made would be the next one's input (a system
that edits the gold is scored against its edit; a metric that edits the answer changes the next metric's
score). So these values are read-only where they enter plugin code, all the way down: dicts and lists
become `ReadOnlyDict` and `ReadOnlyList` (subclasses of dict and list, so isinstance, equality, JSON and
pickling work as before), sets become frozensets, and the contract's records (`ReadOnly` dataclasses:
Example, Document, Prediction, Step, SampleRecord) refuse attribute assignment. A write raises
`ReadOnlyError` (a TypeError) saying how to make a copy to change; `copy.deepcopy`, `dict(x)`, `list(x)` and
`dataclasses.replace` give mutable copies. Other objects (a numpy array, a client) are not copied.
"""
from __future__ import annotations

from typing import Any, NoReturn

COPY_HINT = ("ragbench hands plugins read-only values, so that no plugin changes another's input or what is "
             "scored; change a copy: dict(x), list(x), copy.deepcopy(x) or dataclasses.replace(record, field=...)")


class ReadOnlyError(TypeError):
    """A plugin tried to change a value ragbench handed it read-only."""


def _refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise ReadOnlyError(f"this {type(self).__mro__[1].__name__} is read-only: {COPY_HINT}")


class ReadOnlyDict(dict):
    """A dict that refuses every change; copies (copy, deepcopy, pickle) are plain dicts."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (dict(self),)


class ReadOnlyList(list):
    """A list that refuses every change; copies (copy, deepcopy, pickle) are plain lists."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = sort = \
        reverse = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (list(self),)


def read_only(value: Any) -> Any:
    """`value` with every dict, list, tuple and set in it read-only (new containers: `value` itself is not
    changed) and every `ReadOnly` record a read-only copy; other values as they are."""
    if isinstance(value, (str, int, float, type(None), ReadOnlyDict, ReadOnlyList)):
        return value
    if isinstance(value, ReadOnly):
        return value.read_only()
    if isinstance(value, dict):
        return ReadOnlyDict({key: read_only(item) for key, item in value.items()})
    if isinstance(value, list):
        return ReadOnlyList([read_only(item) for item in value])
    if isinstance(value, tuple):
        items = [read_only(item) for item in value]
        return type(value)._make(items) if hasattr(value, "_make") else tuple(items)
    if isinstance(value, (set, frozenset)):
        return frozenset(value)  # the items of a set are hashable, hence (as a rule) immutable
    return value


class ReadOnly:
    """A dataclass whose `read_only()` copy refuses attribute assignment and holds its values read-only.
    A record built by its constructor (or `dataclasses.replace`, `copy.copy`) is mutable as ever."""

    __slots__ = ("_sealed",)  # a slot, not in vars(record): `Document(**vars(doc))` still works

    def read_only(self, **changes: Any) -> Any:
        """A read-only copy of this record with `changes` to its fields (itself when it is read-only already
        and nothing changes)."""
        if not changes and getattr(self, "_sealed", False):
            return self
        copy = object.__new__(type(self))
        copy.__dict__.update({name: read_only(value) for name, value in {**self.__dict__, **changes}.items()})
        object.__setattr__(copy, "_sealed", True)
        return copy

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_sealed", False):
            raise ReadOnlyError(f"this {type(self).__name__} is read-only (setting {name!r}): {COPY_HINT}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if getattr(self, "_sealed", False):
            raise ReadOnlyError(f"this {type(self).__name__} is read-only (deleting {name!r}): {COPY_HINT}")
        object.__delattr__(self, name)

    def __getstate__(self) -> dict[str, Any]:
        """Its fields only: a copy or an unpickled record is mutable."""
        return dict(self.__dict__)
