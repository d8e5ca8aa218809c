"""Every connection of ragbench to Ray (`join_ray`: `index build --ray`, `shards=` runs, `replicas=` engines): a
cluster's address probed first, within a deadline, and each way joining or starting Ray fails said in one line (a
ConfigError) naming the address and what answered there, never a wait without end nor Ray's traceback.

ray.init waits minutes, or for ever, at an address where nothing listens or something else does (an HTTP server,
a socket that accepts and never answers), with only Ray's C++ warnings naming other addresses. So HOST:PORT (or
ray://HOST:PORT) first gets a TCP connection and the opening of an HTTP/2 connection, which Ray's servers (its GCS,
its client server: gRPC both) answer at once with their settings. The deadline, for each of the two, is
$RAGBENCH_RAY_TIMEOUT seconds (default 10). A local Ray that does not start (Ray gives it a fixed 30 s: a loaded
machine, a memory limit) is one line with the fixes. A local Ray is started in token authentication, as Ray starts
one by default, the mode stated (`stated_token_mode`) so that Ray prints no warning of its choice.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import time

from ._children import running_children
from ._errors import ConfigError, shown_value
from ._values.environment import seconds_in_environment

TIMEOUT_VARIABLE = "RAGBENCH_RAY_TIMEOUT"
AUTH_MODE_VARIABLE = "RAY_AUTH_MODE"  # Ray's authentication mode: token (a new local Ray's default), disabled
DEFAULT_TIMEOUT = 10.0  # seconds for a cluster's address to accept a connection, and again to answer on it
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # an HTTP/2 frame: length 0, type SETTINGS, stream 0
END_SECONDS = 5.0  # for the processes of a local Ray that failed to start to end
SETTINGS_TYPE = 4  # the frame type byte of an HTTP/2 SETTINGS frame, a gRPC server's first answer


def join_ray(address: str | None, named: str) -> bool:
    """Connect this process to Ray, unless it is already: at `address` (HOST:PORT, ray://HOST:PORT, auto, local),
    else $RAY_ADDRESS's, else a local Ray of its own (not whichever cluster runs on the machine: ray.init's default
    joins the latest one found). True where this call connected (the caller shuts it down with its work). `named`:
    the option the user gave the address with, as the line names it (`--ray `, `--retriever-arg ray_address=`)."""
    import ray

    if ray.is_initialized():
        return False
    given, label, local = check_address(address, named)
    if given in (None, "local"):
        stated_token_mode()
    before = set(running_children())
    try:
        ray.init(address=given or "local", include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    except BaseException as exc:
        end_processes(set(running_children()) - before)  # a local Ray's, half started: ray.shutdown knows none
        if isinstance(exc, Exception) and not isinstance(exc, MemoryError):  # (out of memory: the command line's)
            raise ConfigError(init_failure(label, given, named, local, exc)) from None
        raise
    return True


def stated_token_mode() -> None:
    """A new local Ray in token authentication, the mode Ray gives one by default, stated as Ray's own
    `_enable_token_auth` states it (RAY_AUTH_MODE=token, its configuration read again): Ray then starts it as it
    would have, without the timestamped warning that it chose the mode (printed before every --ray command's own
    lines). A mode the user set (RAY_AUTH_MODE) is left as it is; a Ray without token authentication has none."""
    if os.environ.get(AUTH_MODE_VARIABLE) is not None:
        return
    try:
        from ray._private.authentication.authentication_token_setup import _enable_token_auth
    except ImportError:
        return
    _enable_token_auth()


def end_processes(pids: set[int]) -> None:
    """End `pids` (Ray's gcs_server, raylet, monitor, reaper ...) as ray.shutdown ends a Ray's processes: SIGTERM,
    then SIGKILL for those still running END_SECONDS later."""
    for kill in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids & set(running_children()):
            try:
                os.kill(pid, kill)
            except OSError:  # ended meanwhile
                pass
        deadline = time.monotonic() + END_SECONDS
        while pids & set(running_children()) and time.monotonic() < deadline:
            time.sleep(0.05)


def check_address(address: str | None, named: str) -> tuple[str | None, str, str]:
    """Refuse (a ConfigError) a cluster's address, `address` or else $RAY_ADDRESS's, that `probe` finds wrong,
    before ray.init waits on it. (That address, or None for a local Ray; the line's name of it; how the user asks
    for a Ray of this machine instead.)"""
    given = address or os.environ.get("RAY_ADDRESS") or None
    label = f"{named}{address}" if address else f"RAY_ADDRESS={given}" if given else "a local Ray"
    local = f"leave {named.split()[-1].rstrip('=')} out" if named.endswith("=") else f"pass {named.strip()} alone"
    local = local if address or not given else "unset RAY_ADDRESS"
    problem = probe(given or "local", ray_timeout())
    if problem is not None:
        raise ConfigError(
            f"{label}: {problem}; start the cluster (`ray start --head`) and pass its address (HOST:6379, or "
            f"ray://HOST:10001), or {local} for a Ray of this machine"
        )
    return given, label, local


def ray_timeout() -> float:
    """$RAGBENCH_RAY_TIMEOUT's seconds, else DEFAULT_TIMEOUT."""
    return seconds_in_environment(TIMEOUT_VARIABLE, DEFAULT_TIMEOUT)


def probe(address: str, seconds: float) -> str | None:
    """What is wrong at a cluster's `address` (HOST:PORT, ray://HOST:PORT), in words: nothing listens, nothing
    answers within `seconds`, something that is not a Ray server answers; None where a gRPC server answers (or the
    address names no port: auto, local, which ray.init resolves)."""
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not port.isdigit():
        return None
    host = host.strip("[]")  # an IPv6 address's brackets
    try:
        connection = socket.create_connection((host, int(port)), timeout=seconds)
    except ConnectionRefusedError:
        return "nothing listens there (connection refused)"
    except TimeoutError:
        return (
            f"no connection within {seconds:g} s (a firewall, a host that is down; ${TIMEOUT_VARIABLE} sets the wait)"
        )
    except OSError as exc:  # an unknown host, no route
        return f"it cannot be reached ({exc.strerror or exc})"
    with connection:
        return answer_problem(connection, seconds)


def answer_problem(connection: socket.socket, seconds: float) -> str | None:
    """None where the peer answers the opening of an HTTP/2 connection with an HTTP/2 SETTINGS frame, as a gRPC
    server does; else what it did."""
    deadline = time.monotonic() + seconds
    answer = b""
    try:
        connection.sendall(HTTP2_PREFACE + EMPTY_SETTINGS)
        while len(answer) < len(EMPTY_SETTINGS):
            connection.settimeout(max(deadline - time.monotonic(), 1e-3))
            chunk = connection.recv(256)
            if not chunk:
                break
            answer += chunk
    except TimeoutError:
        if not answer:
            return (
                f"something accepted the connection there but never answered within {seconds:g} s: not a Ray "
                f"server, or one too loaded to answer (${TIMEOUT_VARIABLE} sets the wait)"
            )
    except OSError as exc:  # reset as it read the opening
        if not answer:
            return f"something accepted the connection there and dropped it ({exc.strerror or exc}): not a Ray server"
    if len(answer) >= len(EMPTY_SETTINGS) and answer[3] == SETTINGS_TYPE:
        return None
    if not answer:
        return "something accepted the connection there and closed it without answering: not a Ray server"
    said = answer.decode("latin-1").strip().splitlines()[0] if answer.strip() else repr(answer)
    return f"something that is not a Ray server answers there ({shown_value(said, 60)!r})"


def init_failure(label: str, address: str | None, named: str, local: str, exc: Exception) -> str:
    """The line for ray.init's `exc`: a local Ray (`address` None or local) that did not start, or a cluster not
    joined; `local`: how to ask for a Ray of this machine instead."""
    cause = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"
    if address in (None, "local"):
        timed_out = "timed out during startup" in str(exc)
        return (
            f"{label} {'did not start within the 30 s Ray allows' if timed_out else 'failed to start'} ({cause}); "
            "retry on a less loaded machine, raise the memory limit (ulimit -v), or start a cluster with "
            f"`ray start --head` and pass its address ({named}HOST:6379)"
        )
    return (
        f"{label}: no Ray cluster to join there ({cause}); start one with `ray start --head` and pass its address, "
        f"or {local} for a Ray of this machine"
    )
