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


def test_a_run_reads_as_many_records_a_trip_as_it_has_workers(tmp_path, monkeypatch):
    """12 examples in flight: each trip to the thread reads 12 records (one for each worker), not 8, so that the
    workers' next calls wait on one trip a round."""
    from conftest import write_jsonl
    from ragbench.plugins.vanilla.system import Vanilla
    from ragbench.testing import ScriptedLLM, run_eval

    read_some = RecordReader._read_some
    trips: list[int] = []

    def counted(self):
        items = read_some(self)
        trips.append(len(items))
        return items

    monkeypatch.setattr(RecordReader, "_read_some", counted)
    rows = [{"id": f"e{i}", "question": "Q?", "answers": ["A"], "ctxs": []} for i in range(30)]
    data = write_jsonl(tmp_path / "q.jsonl", rows)
    run_eval("demo", Vanilla, ScriptedLLM("A"), metrics=["em"], data=data, output=tmp_path / "run", max_inflight=12)
    assert trips == [12, 12, 6]
