"""One local multi-node Ray cluster a test process shares among the tests that need it (`ray_cluster`): three nodes
of one CPU each, so actors of one CPU land on distinct nodes. A test of another module that shuts its own Ray down
(test_sharded_node_death's cluster) disconnects this process: each module that asks connects again.

The cluster lives while this process's tests need it, not to the session's end: started by the first test that asks,
stopped after a test whose next one (`nextitem`, xdist's worker knows it too) is in a module that does not ask
(`stop_when_not_needed_next`). Idle, its processes cost ~3 s of CPU a minute (below). The modules that ask run
first, one after another (`cluster_modules_first`): xdist's worksteal gives each worker a run of the collection
and steals from a run's end, so they stay on one worker, which starts the cluster once (~12 s of CPU and ~11 s each
start), not each worker several times, two or three clusters at once on a 2-core machine.

Its nodes start only what the tests use (`QUIET_NODE`): no dashboard, no log monitor (every driver here, the
tests' and ragbench's own `ray.init`, connects with `log_to_driver=False`, so nothing reads what it gathers) and no
autoscaler monitor (a local cluster of fixed nodes). Its processes' CPU on a 2-vCPU VM at a load of ~5: a start
13.7 -> 11.9 s, an idle minute 4.0 -> 3.1 s. A worker of a job with a runtime environment (the store modules'
variables, `workers_environment`) is set up by `light_setup_worker.py`, as Ray's own script would set it up but
without importing Ray a first time (~1.3 s of CPU less a worker process)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

NODES = 3
QUIET_NODE = {
    "include_dashboard": False,
    "include_log_monitor": False,
    "no_monitor": True,  # the autoscaler's (a head's only)
    "setup_worker_path": str(Path(__file__).with_name("light_setup_worker.py")),  # Ray's, without importing Ray
}


class SharedCluster:
    """The cluster (`ray.cluster_utils.Cluster`) while it runs, None while it does not; the files of the modules
    asking for it (`cluster_modules_first`); the variables the workers of this process's jobs on it are given
    (`workers_environment`)."""

    def __init__(self) -> None:
        self.cluster: Any = None
        self.modules: set[Path] = set()
        self.worker_env: dict[str, str] = {}
        self.folder = Path()  # the working folder its raylets were started in: every task's and actor's

    def started(self) -> Any:
        if self.cluster is None:
            import ray
            from ray.cluster_utils import Cluster

            if ray.is_initialized():
                ray.shutdown()
            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, **QUIET_NODE})
            for _ in range(NODES - 1):
                cluster.add_node(num_cpus=1, **QUIET_NODE)
            cluster.wait_for_nodes()
            self.cluster, self.folder = cluster, Path.cwd()
        return self.cluster

    def disconnect(self) -> None:
        """This process's connection to the cluster ended (not another module's own Ray): the next module's
        `ray_cluster` joins it again, as a new job."""
        if self.cluster is None:
            return
        import ray

        if ray.is_initialized() and ray.get_runtime_context().gcs_address == self.cluster.address:
            ray.shutdown()

    def stop(self) -> None:
        if self.cluster is None:
            return
        self.disconnect()
        self.cluster.shutdown()
        self.cluster = None

    @contextmanager
    def workers_environment(self, variables: dict[str, str]) -> Iterator[None]:
        """While the block runs, the jobs this process joins the cluster with (`ray_cluster`) give their workers
        `variables` (Ray's runtime_env env_vars), as nodes started in that environment would, without starting the
        cluster again: the connection is ended before and after, so the next `ray_cluster` joins with them, then
        without them."""
        self.disconnect()
        self.worker_env = dict(variables)
        try:
            yield
        finally:
            self.disconnect()
            self.worker_env = {}

    def joined(self) -> Any:
        """The cluster, started if it was not, this process connected to it with the workers' variables of now."""
        import ray

        cluster = self.started()
        if ray.is_initialized() and ray.get_runtime_context().gcs_address != cluster.address:
            ray.shutdown()  # another module's local Ray
        if not ray.is_initialized():
            environment = {"env_vars": self.worker_env} if self.worker_env else None
            ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False, runtime_env=environment)
        return cluster


SHARED = SharedCluster()


@pytest.fixture(scope="module")
def ray_cluster():
    pytest.importorskip("ray")
    return SHARED.joined()


def stop_when_not_needed_next(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After `item`: the shared cluster stopped unless the next test is of a module asking for it (its tests that do
    not ask run while it idles, cheaper than a start again); at the session's end (no next test) stopped."""
    if SHARED.cluster is None:
        return
    if nextitem is None or nextitem.path not in SHARED.modules:
        SHARED.stop()


def cluster_modules_first(items: list[pytest.Item]) -> None:
    """`items` (the collected tests) reordered in place: those of the modules asking for `ray_cluster` (kept in
    `SHARED.modules`) first, then the others; each module's tests stay together and in order, as do the modules of
    each group."""
    SHARED.modules = {item.path for item in items if "ray_cluster" in getattr(item, "fixturenames", ())}
    items.sort(key=lambda item: item.path not in SHARED.modules)


def killed(actor: Any) -> None:
    """`actor` killed for good, returning once the kill has landed: `ray.kill` is asynchronous (a call sent right
    after it was answered 4 times in 40 here), so a test that sends a batch next would otherwise race it. Each try
    waits for the actor's answer or its death, never for a time."""
    import ray

    ray.kill(actor, no_restart=True)
    for _ in range(10_000):
        try:
            ray.get(actor.__ray_ready__.remote())
        except ray.exceptions.RayActorError:
            return
    raise AssertionError(f"{actor} still answers 10,000 calls after ray.kill")
