"""A large record is parsed in the workers' record lane, not behind the page work queued in the pool."""
from __future__ import annotations

import json
import time

from ragbench.run import workers
from ragbench.tasks.crag.loader import LARGE_RECORD_BYTES, loads


def test_a_large_record_is_parsed_while_every_pool_worker_is_busy():
    line = json.dumps({"page_result": "x" * LARGE_RECORD_BYTES})
    try:
        busy = [workers.executor().submit(time.sleep, 6) for _ in range(workers.pool_size())]
        assert loads(line) == {"page_result": "x" * LARGE_RECORD_BYTES}
        assert not any(future.done() for future in busy)  # parsed before any worker was free
    finally:
        workers.shutdown()
