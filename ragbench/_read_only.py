"""Read-only values: what ragbench hands to plugins that other plugins read after them.

One example is handed to the system, then the example and the prediction to every metric in turn, and the
sample records to several reporting hooks: a change one plugin made would be the next one's input (a system
that edits the gold is scored against its edit; a metric that edits the answer changes the next metric's
score). So these values are read-only where they enter plugin code, all the way down: dicts and lists
become `ReadOnlyDict` and `ReadOnlyList` (subclasses of dict and list, so isinstance, equality, JSON and
pickling work as on a dict or list), sets become frozensets, and the contract's records (`ReadOnly` dataclasses:
Example, Document, Prediction, Step, SampleRecord) refuse attribute assignment. A write raises
`ReadOnlyError` (a TypeError) saying how to make a copy to change; `copy.deepcopy`, `dict(x)`, `list(x)` and
`dataclasses.replace` give mutable copies. Other objects (a numpy array, a client) are not copied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any, ClassVar, NoReturn, TypeVar, cast

COPY_HINT = (
    "ragbench hands plugins read-only values, so that no plugin changes another's input or what is "
    "scored; change a copy: dict(x), list(x), copy.deepcopy(x) or dataclasses.replace(record, field=...)"
)


class ReadOnlyError(TypeError):
    """A plugin tried to change a value ragbench handed it read-only."""


def _refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise ReadOnlyError(f"this {type(self).__mro__[1].__name__} is read-only: {COPY_HINT}")


class ReadOnlyDict(dict[Any, Any]):
    """A dict that refuses every change; copies (copy, deepcopy, pickle) are plain dicts."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (dict(self),)


class ReadOnlyList(list[Any]):
    """A list that refuses every change; copies (copy, deepcopy, pickle) are plain lists."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = sort = (
        reverse
    ) = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (list(self),)


IMMUTABLE = frozenset({str, int, float, bool, type(None), bytes, complex})  # taken as they are, with no call


DEEPEST = 200  # levels made read-only; what lies deeper (or inside a cycle) is refused when the sample is written


def read_only(value: Any, _within: frozenset[int] = frozenset()) -> Any:
    """`value` with every dict, list, tuple and set in it read-only (new containers: `value` itself is not
    changed) and every `ReadOnly` record a read-only copy; other values as they are. A container met again
    inside itself (a cycle), or deeper than DEEPEST levels, is left as it is: JSON cannot hold it, so the
    sample that holds it is refused by name when it is written (ragbench._run.plugin_values)."""
    kind = type(value)
    if kind in IMMUTABLE or kind is ReadOnlyDict or kind is ReadOnlyList:
        return value
    if id(value) in _within or len(_within) >= DEEPEST:
        return value
    if kind is dict and IMMUTABLE.issuperset(map(type, value.values())):  # nothing inside to walk (most are so)
        return ReadOnlyDict(value)
    if kind is list and IMMUTABLE.issuperset(map(type, value)):
        return ReadOnlyList(value)
    within = _within | {id(value)}
    if isinstance(value, dict):
        return ReadOnlyDict(
            {key: item if type(item) in IMMUTABLE else read_only(item, within) for key, item in value.items()}
        )
    if isinstance(value, list):
        return ReadOnlyList([item if type(item) in IMMUTABLE else read_only(item, within) for item in value])
    if isinstance(value, ReadOnly):
        return value._sealed({}, within)
    if isinstance(value, tuple):
        items = [read_only(item, within) for item in value]
        return kind._make(items) if hasattr(value, "_make") else tuple(items)
    if isinstance(value, (set, frozenset)):
        return frozenset(value)  # the items of a set are hashable, hence (as a rule) immutable
    return value


Sealed = TypeVar("Sealed", bound="ReadOnly")  # the record class `sealed` is called on


class ReadOnly:
    """A dataclass whose `read_only()` copy refuses attribute assignment and holds its values read-only.

    The copy is an instance of a subclass made with the class (`_read_only_class`, same name and repr, equal to
    the mutable record it copies), so that the records plugins build themselves cost what a plain dataclass
    costs. Building from a read-only record (`dataclasses.replace`), `copy.copy`, `copy.deepcopy` and pickling
    give a mutable record of the class."""

    __slots__ = ()
    _read_only_class: ClassVar[type[ReadOnly]]  # set on each subclass
    _mutable_class: ClassVar[type[ReadOnly]]  # set on the read-only class only

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_mutable_class" not in cls.__dict__:  # not a read-only class itself
            cls._read_only_class = type(
                cls.__name__,
                (cls,),
                {
                    "__slots__": (),
                    "__qualname__": cls.__qualname__,
                    "__module__": cls.__module__,
                    "_mutable_class": cls,
                    "__new__": _built_mutable,
                    "__setattr__": _refuse_field,
                    "__delattr__": _refuse_field,
                    "__eq__": _fields_equal,
                    "__hash__": None,
                    "__reduce_ex__": _reduced,
                },
            )

    def read_only(self: Sealed, **changes: Any) -> Sealed:
        """A read-only copy of this record with `changes` to its fields (itself when it is read-only already
        and nothing changes)."""
        return cast(Sealed, self._sealed(changes, frozenset({id(self)})))  # an instance of the read-only subclass

    @classmethod
    def sealed(cls: type[Sealed], **values: Any) -> Sealed:
        """A read-only record made straight from `values` (by field; a field not given takes its default): each
        value is copied read-only once (the record holds none of the given containers), with no mutable record
        built and copied first (`read_only()`), so records read in bulk (a parsed line's) cost one copy."""
        copy = object.__new__(cls._read_only_class)
        within = frozenset({id(copy)})
        state = copy.__dict__
        for name, default, factory in cls._defaults():
            value = values[name] if name in values else default if factory is None else factory()
            kind = type(value)
            if kind in IMMUTABLE:
                state[name] = value
            elif kind is dict and not value:  # most of a record's containers (no errors, no extras): no walk
                state[name] = ReadOnlyDict()
            elif kind is list and not value:
                state[name] = ReadOnlyList()
            else:
                state[name] = read_only(value, within)
        return cast(Sealed, copy)  # an instance of the read-only subclass of `cls`

    @classmethod
    def _defaults(cls) -> list[tuple[str, Any, Any]]:
        """(name, default, default factory or None) of each field, in order: read from the dataclass once a class
        (`dataclasses.fields` costs more than the rest of a small record's `sealed`)."""
        known = cls.__dict__.get("_field_defaults")
        if known is None:
            known = [
                (spec.name, spec.default, None if spec.default is not MISSING else spec.default_factory)
                for spec in fields(cls)  # type: ignore[arg-type]  # every ReadOnly subclass is a dataclass
            ]
            type.__setattr__(cls, "_field_defaults", known)
        return known

    def _field_values(self) -> dict[str, object]:
        """The record's fields by name, as copies are made of them (a record that makes a field when it is first
        read makes it here)."""
        return self.__dict__

    def _sealed(self, changes: dict[str, object], within: frozenset[int]) -> Any:
        sealed = type(self)._read_only_class
        if not changes and type(self) is sealed:
            return self
        copy = object.__new__(sealed)
        fields_now = {**self._field_values(), **changes} if changes else self._field_values()
        state = copy.__dict__
        for name, value in fields_now.items():
            kind = type(value)
            if kind in IMMUTABLE:
                state[name] = value
            elif kind is dict and not value:  # as `sealed`: an empty container, with no walk
                state[name] = ReadOnlyDict()
            elif kind is list and not value:
                state[name] = ReadOnlyList()
            else:
                state[name] = read_only(value, within)
        return copy


def is_read_only(record: object) -> bool:
    """Whether `record` is a read-only copy of a `ReadOnly` record (nothing in it can change)."""
    return "_mutable_class" in type(record).__dict__


KEPT_VALUES = "_kept_values"  # in a read-only record's __dict__: what `kept` made of it; never a field
Derived = TypeVar("Derived")


def kept(record: object, name: str, make: Callable[[], Derived]) -> Derived:
    """`make()`, made once for a read-only record and kept by the record itself (nothing in it can change, so
    nothing made of it can), outside its fields: never compared, copied, pickled or written. Made again each time
    for a mutable record, which may have changed since."""
    if not is_read_only(record):
        return make()
    values: dict[str, object] = vars(record).setdefault(KEPT_VALUES, {})
    if name not in values:
        values[name] = make()
    return cast("Derived", values[name])


def _built_mutable(cls: type[ReadOnly], *args: Any, **kwargs: Any) -> Any:
    """A read-only class called (as `dataclasses.replace` calls it) builds a mutable record."""
    return cls._mutable_class(*args, **kwargs)


def _refuse_field(self: Any, name: str, *value: Any) -> NoReturn:
    raise ReadOnlyError(
        f"this {type(self).__name__} is read-only ({'setting' if value else 'deleting'} {name!r}): {COPY_HINT}"
    )


def _fields_equal(self: Any, other: Any) -> Any:
    """As the dataclass compares: field by field, with a record of the same class, read-only or not."""
    mutable = type(self)._mutable_class
    if type(other) not in (mutable, mutable._read_only_class):
        return NotImplemented
    return all(getattr(self, f.name) == getattr(other, f.name) for f in fields(mutable) if f.compare)


def _reduced(self: Any, protocol: int) -> tuple[Any, ...]:
    """Copied or pickled: a mutable record of the class, with the same fields."""
    fields_only = {name: value for name, value in self._field_values().items() if name != KEPT_VALUES}
    return _mutable_record, (type(self)._mutable_class, fields_only)


def _mutable_record(cls: type, state: dict[str, object]) -> Any:
    record: Any = object.__new__(cls)
    record.__dict__.update(state)
    return record
