"""Where a shard build's steps run: in this process (`InProcess`: tests, one machine without Ray) or as Ray
tasks (`RayTasks`), one a shard, at most `workers` at once (default: as many as the cluster runs).

A Ray task takes one CPU, and a GPU where its step asks for one (`gpu`: dense's encoding) and the cluster has
GPUs (`task_gpus`); one whose worker or node is lost is run again by Ray (its step starts its shard afresh,
`worker`); a ConfigError a step raises (a corpus shard cut short) ends the build in its one line, and so does an
OSError, as the task raised it (the file it names, and its fix: a link in the build's own folder, `own_trees`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from ...._errors import ConfigError
from ...._ray_connect import join_ray

T = TypeVar("T")


class Runner(Protocol):
    def share(self, value: Any) -> Any: ...

    def map(
        self, function: Callable[..., T], calls: list[tuple[Any, ...]], gpu: bool = False, done: Done | None = None
    ) -> list[T]: ...

    def close(self) -> None: ...


Done = Callable[[], Any]  # called once each call of a `map` has returned (the build's progress)


class InProcess:
    """Each step run here, one after the other."""

    def share(self, value: Any) -> Any:
        return value

    def map(
        self, function: Callable[..., T], calls: list[tuple[Any, ...]], gpu: bool = False, done: Done | None = None
    ) -> list[T]:
        results = []
        for call in calls:
            results.append(function(*call))
            if done is not None:
                done()
        return results

    def close(self) -> None:
        pass


class RayTasks:
    """Each step a Ray task on the Ray at `address` ("" or None: $RAY_ADDRESS's, else one of this process's own,
    shut down by `close`)."""

    def __init__(self, address: str | None, workers: int | None) -> None:
        self.own_ray = join_ray(address, "--ray ")
        self.workers = workers

    def share(self, value: Any) -> Any:
        """`value` put in Ray's object store once, for every task that takes it."""
        import ray

        return ray.put(value)

    def map(
        self, function: Callable[..., T], calls: list[tuple[Any, ...]], gpu: bool = False, done: Done | None = None
    ) -> list[T]:
        import ray

        gpus = task_gpus(gpu, ray.cluster_resources().get("GPU", 0))
        remote: Any = ray.remote(num_cpus=1, num_gpus=gpus, max_retries=3)(function)
        limit = self.workers or len(calls)
        pending: dict[Any, int] = {}
        results: dict[int, T] = {}
        try:
            for number, call in enumerate(calls):
                while len(pending) >= limit:
                    self.collect(pending, results, done)
                pending[remote.remote(*call)] = number
            while pending:
                self.collect(pending, results, done)
        except ray.exceptions.RayTaskError as exc:
            if isinstance(exc.cause, ConfigError):
                raise ConfigError(str(exc.cause)) from None
            if isinstance(exc.cause, OSError):  # as the task raised it: its file, errno and fix (Ray's copy has none)
                raise exc.cause from None
            raise
        return [results[number] for number in range(len(calls))]

    def collect(self, pending: dict[Any, int], results: dict[int, Any], done: Done | None) -> None:
        import ray

        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            results[pending.pop(ref)] = ray.get(ref)
            if done is not None:
                done()

    def close(self) -> None:
        if self.own_ray:
            import ray

            ray.shutdown()
            self.own_ray = False


def task_gpus(wanted: bool, cluster_gpus: float) -> int:
    """The GPUs a step's task takes: one where it wants one and the cluster has any (none else: a task that asks
    for a GPU a cluster lacks waits for ever)."""
    return 1 if wanted and cluster_gpus >= 1 else 0
