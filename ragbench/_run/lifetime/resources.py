"""What a run owns beside its engines, in one object: its worker processes, its page caches and the
models its plugins load once. The evaluator creates it when a run starts, binds every task that works
in it (`UsesRunResources.bind`, before anything else starts, so that such a task reaches it in `examples`,
`setup` and its prompting's `passages`), systems and metrics reach it as `ctx.resources`, and the run closes
it whatever way it ends. Nothing of it is module state: two runs in one process, at once or one after another,
each have their own, and one's end never closes the other's.

Outside a run (a plugin's own tests, a benchmark script), make one and close it:

    with RunResources() as resources:
        task.bind(resources)
        ...
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..._storage.page_cache import PageCache, PageCaches
from .workers import Workers

T = TypeVar("T")


class RunResources:
    def __init__(self, page_cache: str | None = None, workers: Workers | None = None) -> None:
        self.workers = workers or Workers()
        self.page_caches = PageCaches(page_cache)
        self._loaded: dict[Any, Any] = {}
        self._loading = threading.Lock()

    async def page_cache(self, path: str | Path | None = None) -> PageCache | None:
        """The run's page cache at `path` (a task option), else the run's `--page-cache`, else the
        default file; None when it is `off`. Opened (file work) in a thread."""
        return await asyncio.to_thread(self.page_caches.open, path)

    def loaded(self, key: Any, load: Callable[[], T]) -> T:
        """One object per `key` for the whole run (a model every task of the run shares), made by
        `load()` on first use (blocking: call it from a thread), closed with the run when it has a
        `close()`."""
        with self._loading:
            if key not in self._loaded:
                self._loaded[key] = load()
            loaded: T = self._loaded[key]  # what `load` made (one loader per key)
            return loaded

    def close(self, wait: bool = True) -> None:
        """End the workers, close the page caches and drop the loaded objects. `wait=False` (an
        interrupted run) does not wait for worker calls still running."""
        try:
            self.workers.close(wait=wait)
        finally:
            self.page_caches.close()
            loaded, self._loaded = list(self._loaded.values()), {}
            for item in loaded:
                if callable(getattr(item, "close", None)):
                    item.close()

    def __enter__(self) -> RunResources:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
