"""A conversation's turns held once (issue 97): each turn of a multi-turn task sees the turns before it as a
`History`, a view of the first n turns of one `Conversation`, not a copy of them (CRAG-MM's examples copied every
earlier turn: a 4,000-turn conversation's examples held 16 million references to turns, memory quadratic in its
length). A History reads, compares, copies, pickles and hashes for `--resume` as the list of its turns; the turns
are read-only (`ReadOnlyDict`), as every turn an example hands a plugin.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any, overload

from .._read_only import ReadOnlyDict


class History(Sequence[dict[str, str]]):
    """The first `length` turns of a conversation (`Conversation.history`), read-only; equal to the list of them,
    and copied or pickled as that list."""

    __slots__ = ("_length", "_turns")

    def __init__(self, turns: list[dict[str, str]], length: int) -> None:
        self._turns, self._length = turns, length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> dict[str, str]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, str]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, str] | list[dict[str, str]]:
        positions = range(self._length)[index]  # a negative index, a slice and an IndexError as a list's
        if isinstance(positions, range):
            return [self._turns[position] for position in positions]
        return self._turns[positions]

    def __iter__(self) -> Iterator[dict[str, str]]:
        return itertools.islice(self._turns, self._length)

    def __eq__(self, other: object) -> bool:  # (so unhashable, as the list it stands for)
        if not isinstance(other, (History, list)):
            return NotImplemented
        return len(other) == self._length and all(mine == theirs for mine, theirs in zip(self, other))

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (list(self),)


class Conversation:
    """One conversation's turns, added in order; `history()` views those added so far (a turn added later is not
    in a History given before it)."""

    __slots__ = ("_turns",)

    def __init__(self) -> None:
        self._turns: list[dict[str, str]] = []

    def add(self, role: str, content: str) -> None:
        self._turns.append(ReadOnlyDict({"role": role, "content": content}))

    def history(self) -> History:
        return History(self._turns, len(self._turns))
