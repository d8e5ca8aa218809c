"""The `ragbench` command, each run a fork of one process that has its command line's modules loaded (a zygote):
a test that runs many commands as a user types them (tests/project/test_docs_commands.py) pays the import of
the command line once, not once a command (~1 s of CPU of a ~1.5 s demo run on a 2-vCPU VM).

`zygote(env, cwd)` starts the process; `Zygote.environment(env)` is `env` with the shim first on PATH, which
runs every `ragbench` through it: the `ragbench` there is a small client that hands the zygote its argv, working folder,
environment and standard streams (the file descriptors themselves) and exits with the command's exit status.
The fork runs the console script's own entry point (`ragbench` in the package's console_scripts) with
sys.argv and sys.path as the installed `ragbench` script has them (the command's own PYTHONPATH first, as a
fresh interpreter puts it), so the command runs as written; the process is a fork, not a fresh interpreter:
what a command proves only in a fresh process is tested by starting one. Ctrl-C's SIGINT, SIGTERM and SIGHUP
sent to the shim are passed on to its command's fork (a `ragbench view` it serves stops as when started
alone). A command whose fork dies of a signal exits 128 + the signal, as a shell reports it. The zygote and
every command still running from it end with the `with` block. The zygote reaps its forks: a test process's
children CPU time (RUSAGE_CHILDREN) holds their CPU seconds only once the zygote ends, all of them at once,
in whichever test's teardown ends its fixture (a session fixture's: the worker's last test).

Run as a script (`python command_zygote.py SOCKET`) it is the zygote itself; `CLIENT` is the shim's text."""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ADDRESS = "RAGBENCH_TEST_ZYGOTE"  # the variable that names the zygote's socket to the shim
LIMITS = "RAGBENCH_TEST_ZYGOTE_LIMITS"  # resource limits (JSON: resource -> value) the fork sets before the command
LENGTH = struct.Struct("!I")
# The modules every command and every run loads, loaded by the zygote once (a module's import is all it does
# ahead: nothing is run, no state of a command is made before the command is given)
WARM = ("ragbench._cli.main", "ragbench._run.evaluator", "ragbench._run.assemble")

CLIENT = """\
#!{python} -I
# `ragbench` run by the test's zygote (tests/support/command_zygote.py); the installed command where it is not set
import json, os, signal, socket, struct, sys

address = os.environ.get({address!r})
if not address:
    os.execv({real!r}, [{real!r}, *sys.argv[1:]])
message = json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}}).encode()
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as zygote:
    try:
        zygote.connect(address)
    except OSError as exc:
        sys.exit(f"ragbench (the tests' shim): the command zygote at {{address}} does not answer ({{exc}})")
    socket.send_fds(zygote, [struct.pack("!I", len(message))], [0, 1, 2])
    zygote.sendall(message)
    answers = zygote.makefile("rb")
    command = int(answers.readline() or 0)  # the fork's pid, then its exit status

    def pass_on(signum, frame):
        try:
            os.kill(command, signum)
        except ProcessLookupError:  # it has just ended
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) if command > 0 else ():
        signal.signal(signum, pass_on)
    status = answers.read()
sys.exit(int(status) if status else 1)
"""


def console_script() -> Path:
    """The installed `ragbench` command, beside this interpreter."""
    return Path(sys.executable).parent / "ragbench"


def shim_path(folder: Path) -> Path:
    """A folder holding the `ragbench` shim (made once per folder): put it first on PATH."""
    shim = folder / "ragbench"
    if not shim.exists():
        folder.mkdir(parents=True, exist_ok=True)
        shim.write_text(CLIENT.format(python=sys.executable, address=ADDRESS, real=str(console_script())))
        shim.chmod(0o755)
    return folder


@dataclass(frozen=True)
class Zygote:
    """A started zygote: its socket, and the folder of the shim that runs `ragbench` through it."""

    address: Path
    shims: Path

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        """`env` for commands whose `ragbench` runs through this zygote: the shim first on PATH, its address."""
        return {**env, ADDRESS: str(self.address), "PATH": os.pathsep.join([str(self.shims), env.get("PATH", "")])}

    def run(
        self,
        args: list[str],
        env: dict[str, str],
        cwd: Path | None = None,
        timeout: float = 300,
        limits: dict[int, int] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """`ragbench ARGS` run through this zygote in `env` (and `cwd`, else this process's), under `limits`
        (resource -> soft and hard limit, set in the fork before the command starts): its exit status and text, as
        `subprocess.run` gives them for the installed command."""
        return subprocess.run(
            ["ragbench", *args],
            env=self.environment({**env, LIMITS: json.dumps(limits)} if limits else env),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def popen(self, args: list[str], env: dict[str, str], **options: Any) -> subprocess.Popen[str]:
        """`ragbench ARGS` started through this zygote in `env` (text streams, `options` as Popen takes them): a
        stop signal sent to it reaches the command."""
        return subprocess.Popen(["ragbench", *args], env=self.environment(env), text=True, **options)


@contextlib.contextmanager
def zygote(env: dict[str, str], cwd: Path) -> Iterator[Zygote]:
    """The zygote started in `env` and `cwd` (its socket and the shim in a short-named temporary folder: a
    socket's path has ~100 bytes at most), until the block ends, with every command still running from it. What
    it loads reads neither the environment nor the folder (each command has its own, given by the shim), so one
    zygote serves commands of any folder and environment."""
    with tempfile.TemporaryDirectory(prefix="ragbench-zygote-") as folder:
        address = Path(folder) / "zygote.sock"
        server = subprocess.Popen(
            [sys.executable, __file__, str(address)],
            env=env,
            cwd=cwd,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        try:
            while not address.exists():  # named once its modules are loaded and it listens
                if server.poll() is not None:
                    raise RuntimeError(f"the command zygote exited {server.returncode} before it listened")
                time.sleep(0.05)
            yield Zygote(address, shim_path(Path(folder) / "bin"))
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)  # the zygote and the commands still running from it
            server.wait()


@dataclass(frozen=True)
class Request:
    """What the shim hands the zygote: the command's arguments, working folder and environment."""

    argv: list[str]
    cwd: str
    env: dict[str, str]


def received(connection: socket.socket) -> tuple[Request, list[int]]:
    """A client's request: its argv, working folder and environment, and its stdin, stdout and stderr."""
    head, fds, _, _ = socket.recv_fds(connection, LENGTH.size, 3)
    while len(head) < LENGTH.size:
        head += connection.recv(LENGTH.size - len(head))
    (size,) = LENGTH.unpack(head)
    body = b""
    while len(body) < size:
        chunk = connection.recv(size - len(body))
        if not chunk:
            raise EOFError("the client hung up")
        body += chunk
    return Request(**json.loads(body)), fds


def reopen_standard_streams() -> None:
    """sys.stdin, sys.stdout and sys.stderr made anew on fds 0-2 (now the client's) as Python's start makes them
    (stderr line-buffered, both written through under PYTHONUNBUFFERED): the zygote's were made on its own
    (a file where the client's is a pipe: their buffers would seek)."""
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    made = []
    for fd, old, mode in ((0, sys.__stdin__, "r"), (1, sys.__stdout__, "w"), (2, sys.__stderr__, "w")):
        assert old is not None
        stream = open(fd, mode, encoding=old.encoding, errors=old.errors, closefd=False, newline="\n")  # noqa: SIM115
        assert isinstance(stream, io.TextIOWrapper)
        if mode == "w":
            stream.reconfigure(line_buffering=os.isatty(fd) or fd == 2, write_through=unbuffered)
        made.append(stream)
    for name, stream in zip(("stdin", "stdout", "stderr"), made):
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)  # as at a start: the original streams are these


def python_path(env: dict[str, str]) -> list[str]:
    """The folders PYTHONPATH in `env` puts on a fresh interpreter's sys.path (after the script's folder)."""
    return [os.path.abspath(folder) for folder in env.get("PYTHONPATH", "").split(os.pathsep) if folder]


def run_command(request: Request, fds: list[int], command: Callable[[], object], base_path: list[str]) -> None:
    """In the fork: the command as the installed script runs it, on the client's streams, with sys.path the
    script's folder, the command's PYTHONPATH and `base_path` (the interpreter's own); never returns."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request.cwd)
        os.environ.clear()
        os.environ.update(request.env)
        for kind, value in json.loads(os.environ.pop(LIMITS, "{}")).items():
            resource.setrlimit(int(kind), (value, value))
        sys.path[:] = [str(console_script().parent), *python_path(request.env), *base_path]
        reopen_standard_streams()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        sys.argv = [str(console_script()), *request.argv]
        try:
            command()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
            if not isinstance(exc.code, int) and exc.code is not None:
                print(exc.code, file=sys.stderr)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def serve(address: Path) -> None:
    """Load the command line's modules, listen at `address`, fork a command per client."""
    import importlib.metadata

    sys.path[0] = str(console_script().parent)  # as the installed script has it: its folder, not tests/support
    own = python_path(dict(os.environ))  # the zygote's PYTHONPATH: each command has its own instead
    base_path = [folder for folder in sys.path[1:] if folder not in own]
    (entry,) = importlib.metadata.entry_points(group="console_scripts", name="ragbench")
    command = entry.load()
    for module in WARM:
        importlib.import_module(module)
    for plugin in importlib.metadata.entry_points(group="ragbench"):  # the installed plugins' own modules
        plugin.load()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(address) + ".new")
    listener.listen(16)
    os.rename(str(address) + ".new", address)  # the test waits for the name: bound and listening
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is listener:
                connection, _ = listener.accept()
                request, fds = received(connection)
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    connection.close()
                    run_command(request, fds, command, base_path)
                for fd in fds:
                    os.close(fd)
                with contextlib.suppress(OSError):
                    connection.sendall(f"{pid}\n".encode())  # the shim passes stop signals on to it
                selector.register(os.pidfd_open(pid), selectors.EVENT_READ, (pid, connection))
            else:
                pid, connection = key.data
                selector.unregister(key.fileobj)
                os.close(key.fd)
                _, status = os.waitpid(pid, 0)
                code = os.waitstatus_to_exitcode(status)
                with contextlib.suppress(OSError):
                    connection.sendall(str(code if code >= 0 else 128 - code).encode())
                connection.close()


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
