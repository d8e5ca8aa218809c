"""One local multi-node Ray cluster for the whole test session, shared by the tests that need it (`ray_cluster`):
three nodes of one CPU each, so actors of one CPU land on distinct nodes. A module with a Ray of its own
(test_sharded_node_death's `own_cluster`, whose nodes it kills) disconnects this process: each use connects again.

One cluster for the session, not one per xdist worker (each start is some 12 s of CPU and 4 Ray processes a node):
the first worker that needs it starts this file as a process of its own (`python tests/ray_cluster.py`), which
holds the cluster until the session's first process ends it (`stop_shared_cluster`, at the session's finish) or
is gone; every worker joins it at the address that process writes. Two workers' tests on it at once wait for its
CPUs as two jobs on one cluster do (a build's actors, a shard pool's)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

NODES = 3
CONTROLLER_ENV = "RAGBENCH_TESTS_PID"  # the session's first process (xdist's controller), set by conftest.py
HOME_ENV = "RAGBENCH_TESTS_HOME"  # the session's HOME (conftest.py), which its xdist workers share
POLL = 0.2  # seconds between looks at a file or a process: a poll, not a deadline
STARTS = 3  # tries at starting the cluster where Ray gave up on a node's start


@dataclass(frozen=True)
class SharedCluster:
    address: str  # the head node's GCS address, for ray.init and --ray


def folder(make: bool = True) -> Path:
    """The cluster's files (lock, address, the holding process's id and log), in the session's HOME."""
    path = Path(os.environ[HOME_ENV]) / "ray-cluster"
    if make:
        path.mkdir(exist_ok=True)
    return path


def running(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, ended but not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError, IndexError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


HOLDER: list[subprocess.Popen] = []  # this process's child holding the cluster, kept so it is never collected


def shared_address() -> str:
    """The session's cluster's address, the cluster started here if no worker started it yet. A start that Ray
    gave up (a node not registered within Ray's fixed 30 s, which a loaded 2-core machine can take) is tried again
    in a fresh process (the processes of the one that gave up end with it)."""
    files = folder()
    with (files / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker starting it: wait, then read its address
        address = files / "address"
        for _ in range(STARTS):
            if address.is_file():
                break
            with (files / "log").open("wb") as log:
                holder = subprocess.Popen(
                    [sys.executable, __file__, os.environ.get(CONTROLLER_ENV, str(os.getpid())), str(files)],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                )  # fmt: skip
            HOLDER.append(holder)
            while not address.is_file() and holder.poll() is None:
                time.sleep(POLL)
            if not address.is_file() and "timed out during startup" not in (files / "log").read_text():
                break
        if not address.is_file():
            pytest.fail(f"the shared Ray cluster did not start:\n{(files / 'log').read_text()[-3000:]}")
        return address.read_text(encoding="utf-8")


def stop_shared_cluster() -> None:
    """In the session's first process, at its finish: the holding process shuts the cluster down, waited for."""
    if os.environ.get(CONTROLLER_ENV) != str(os.getpid()) or not folder(make=False).is_dir():
        return
    with contextlib.suppress(OSError, ValueError):
        pid = int((folder() / "pid").read_text(encoding="utf-8"))
        os.kill(pid, signal.SIGTERM)
        while running(pid) and (folder() / "pid").exists():
            time.sleep(POLL)
    for holder in HOLDER:  # started by this process (a session without xdist): reaped
        holder.wait()


def hold(controller: int, files: Path) -> None:
    """The holding process: starts the cluster, writes its address, and shuts it down on SIGTERM or when the
    session's first process is gone (a session killed before its finish leaves nothing running)."""
    from ray.cluster_utils import Cluster

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    (files / "pid").write_text(str(os.getpid()), encoding="utf-8")
    try:
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        try:
            for _ in range(NODES - 1):
                cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
            (files / "address.part").write_text(cluster.address, encoding="utf-8")
            (files / "address.part").rename(files / "address")
            while not stop.wait(POLL * 5) and running(controller):
                pass
        finally:
            cluster.shutdown()
    finally:
        (files / "pid").unlink()


@pytest.fixture(scope="session")
def ray_cluster_session():
    ray = pytest.importorskip("ray")

    if ray.is_initialized():
        ray.shutdown()
    yield SharedCluster(shared_address())
    ray.shutdown()  # this process leaves it; the session's first process ends it


@pytest.fixture(scope="module")
def ray_cluster(ray_cluster_session):
    import ray

    if ray.is_initialized() and ray.get_runtime_context().gcs_address != ray_cluster_session.address:
        ray.shutdown()  # another module's local Ray
    if not ray.is_initialized():
        ray.init(address=ray_cluster_session.address, include_dashboard=False, log_to_driver=False)
    return ray_cluster_session


if __name__ == "__main__":
    hold(int(sys.argv[1]), Path(sys.argv[2]))
