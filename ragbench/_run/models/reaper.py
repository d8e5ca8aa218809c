"""Ends the processes a run's engines started once the run's process has ended, however it ended
(kill -9 included, which no handler of the run can catch): vLLM's EngineCore and its workers lived
on after a killed run, reparented to init, holding gigabytes.

A run starts a `Reaper` before its engines: a small process of its own (this file, run as a script:
standard library only, so started without site-packages, `-I -S`: no `.pth` file of the environment runs,
the start costs a run little), in a session of its own so that a Ctrl-C at the terminal reaches the run
alone. It waits on a pidfd of the run's process (Linux 5.3+; else it looks every second whether its
parent changed). When the run has ended, it ends every process that carries the run's mark and
every descendant of those: first all stopped (SIGSTOP, so none forks meanwhile), then killed. The
mark, which a process cannot have unless the run started it (directly or not):

- `RAGBENCH_RUN_MARKER=<token>` in the environment a process was started with (/proc/PID/environ):
  set in the run's environment before its engines start, so every process they start with exec
  (multiprocessing's spawn and forkserver, subprocess, Ray) carries it; the token is new per run;
- an open descriptor of the run's marker pipe (/proc/PID/fd): a process forked without exec
  (multiprocessing's fork, vLLM's default on CPU) keeps the environment the run was started with,
  not the marker, but it inherits every descriptor of the run.

`prctl(PR_SET_PDEATHSIG)` cannot do this: it acts on the one process that set it, only when its own
parent ends, and vLLM's workers' parent is EngineCore, not the run.

A process is signalled through a pidfd opened before its mark is read again, so a pid reused by
another process meanwhile is never signalled. A process started with an environment of its own
that drops the marker, and that closed the inherited descriptors, is not found. A run that ends
normally stops the reaper (`close`) after its engines have closed: nothing is killed then.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

TYPE_CHECKING = False  # typing's, which the reaper process would import for nothing (mypy reads either as True)
if TYPE_CHECKING:
    import subprocess

MARKER_ENV = "RAGBENCH_RUN_MARKER"
_PROC = "/proc"  # paths as text, no pathlib: the reaper process imports only what it uses (its start is a run's)


class Reaper:
    """Started by a run before its engines; `close()` at its end (then nothing is killed)."""

    def __init__(self) -> None:
        import subprocess  # here, not in the reaper process, which needs neither
        import uuid

        self.token = uuid.uuid4().hex
        self._process: subprocess.Popen[bytes] | None = None
        self._marker: int | None = None
        self._previous = os.environ.get(MARKER_ENV)
        if not os.path.isfile(f"{_PROC}/self/environ"):  # no /proc (not Linux): nothing to find processes by
            return
        self._marker, write = os.pipe()  # not inheritable: a fork keeps it, an exec drops it
        os.close(write)
        inode = os.fstat(self._marker).st_ino
        env = {key: value for key, value in os.environ.items() if key != MARKER_ENV}
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-S", __file__, str(os.getpid()), self.token, str(inode)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
        os.environ[MARKER_ENV] = self.token

    def close(self) -> None:
        """The run has closed its engines: stop the reaper, unmark the run's environment."""
        if self._previous is None:
            os.environ.pop(MARKER_ENV, None)
        else:
            os.environ[MARKER_ENV] = self._previous
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None
        if self._marker is not None:
            os.close(self._marker)
            self._marker = None


def _wait_until_gone(pid: int) -> None:
    """Return once process `pid` (this process's parent) has ended."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):  # no pidfd here: the parent changes when it ends
        while os.getppid() == pid:
            time.sleep(1.0)
        return
    if os.getppid() == pid:  # else it had ended before the pidfd was opened (the pid may be another's now)
        select.select([handle], [], [])  # readable when the process has ended
    os.close(handle)


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError:  # gone, or another user's
        return None


def _parent(pid: int) -> int | None:
    stat = _read(f"{_PROC}/{pid}/stat")
    return int(stat.rsplit(b")", 1)[1].split()[1]) if stat else None


def _pids() -> list[int]:
    return [int(entry) for entry in os.listdir(_PROC) if entry.isdigit()]


def _marked(pid: int, token: str, inode: int) -> bool:
    environ = _read(f"{_PROC}/{pid}/environ")
    if environ is not None and f"{MARKER_ENV}={token}".encode() in environ.split(b"\0"):
        return True
    pipe = f"pipe:[{inode}]"
    try:
        return any(os.readlink(f"{_PROC}/{pid}/fd/{fd}") == pipe for fd in os.listdir(f"{_PROC}/{pid}/fd"))
    except OSError:
        return False


def _started(pid: int) -> bytes | None:
    stat = _read(f"{_PROC}/{pid}/stat")
    return stat.rsplit(b")", 1)[1].split()[19] if stat else None


class _Held:
    """One process to end: through a pidfd where there is one, else by pid once its start time is
    read again (the same process, not a later one given its pid)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.started = pid, _started(pid)
        try:
            self.handle: int | None = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.handle = None

    def signal(self, signum: int) -> None:
        try:
            if self.handle is not None:
                signal.pidfd_send_signal(self.handle, signum)
            elif _started(self.pid) == self.started:
                os.kill(self.pid, signum)
        except ProcessLookupError:
            pass

    def close(self) -> None:
        if self.handle is not None:
            os.close(self.handle)


def reap(token: str, inode: int) -> int:
    """Stop, then kill, every process carrying the mark and every descendant of one. Returns how many."""
    held: dict[int, _Held] = {}
    looked: set[int] = {os.getpid()}
    while True:
        table = {pid: _parent(pid) for pid in _pids() if pid not in looked}
        found = [pid for pid, parent in table.items() if parent in held or _marked(pid, token, inode)]
        if not found:
            break
        for pid in found:
            looked.add(pid)
            process = _Held(pid)
            # read again once the process is held: the pid may have been another's when it was read
            if process.started is not None and (_parent(pid) in held or _marked(pid, token, inode)):
                process.signal(signal.SIGSTOP)  # no more forks while the rest are found
                held[pid] = process
            else:
                process.close()
    for process in held.values():
        process.signal(signal.SIGKILL)
        process.close()
    return len(held)


def main(argv: list[str]) -> None:
    run_pid, token, inode = int(argv[0]), argv[1], int(argv[2])
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    _wait_until_gone(run_pid)
    reap(token, inode)


if __name__ == "__main__":
    main(sys.argv[1:])
