"""The run's record reader: the items of a task's stream in order, and once the stream has ended, every worker
asking is answered None without reading (or starting a thread) again."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._run.reading import RecordReader


class Counted:
    """An iterator over `items` that counts how often it is asked for its next item."""

    def __init__(self, items: list[int]) -> None:
        self._items, self.asked = iter(items), 0

    def __iter__(self) -> Counted:
        return self

    def __next__(self) -> int:
        self.asked += 1
        return next(self._items)


@settings(max_examples=50, deadline=None)
@given(items=st.lists(st.integers(), max_size=40), most=st.integers(1, 9), workers=st.integers(1, 30))
def test_workers_get_every_item_once_and_the_ended_stream_is_not_read_again(items, most, workers):
    stream = Counted(items)

    async def run() -> list[int]:
        reader = RecordReader(stream, most=most)
        got: list[int] = []

        async def worker() -> None:
            while (item := await reader.next()) is not None:
                got.append(item)
            for _ in range(3):  # asking again at the end
                assert await reader.next() is None

        await asyncio.gather(*(worker() for _ in range(workers)))
        return got

    assert sorted(asyncio.run(run())) == sorted(items)
    assert stream.asked == len(items) + 1  # every item, then the one ask that found the end
