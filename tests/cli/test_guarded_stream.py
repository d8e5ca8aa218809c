"""A console stream that fails (ragbench._cli.console), a unit: whatever the writes and wherever they begin to fail,
the stream never raises and the exit code says what happened (the command's own, SIGPIPE's for a reader gone,
EX_IOERR for a console that could not be written), with one line on stderr where it can be written. The commands
on a real full disk and a closed pipe: test_console_faults.py."""

from __future__ import annotations

import errno
import os
import signal

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._cli.console import GuardedStream, exit_code
from ragbench._errors import EXIT_CONSOLE, EXIT_INCOMPLETE


class Failing:
    """A console stream whose writes and flushes fail with `error` from the `after`-th call on."""

    def __init__(self, error: int, after: int) -> None:
        self.error, self.after, self.calls, self.written = error, after, 0, []
        self.encoding, self.errors = "utf-8", "strict"

    def _call(self) -> None:
        self.calls += 1
        if self.calls > self.after:
            raise OSError(self.error, os.strerror(self.error))

    def write(self, text: str) -> int:
        self._call()
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        self._call()


ERRNOS = st.sampled_from([errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EBADF, errno.EDQUOT, errno.EAGAIN])


@settings(max_examples=60, deadline=None)
@given(
    error=ERRNOS,
    after=st.integers(0, 6),
    writes=st.lists(st.text(max_size=5), max_size=8),
    command_code=st.sampled_from([0, None, EXIT_INCOMPLETE]),
)
def test_a_failing_stream_never_raises_and_the_exit_code_says_what_happened(error, after, writes, command_code):
    failing, stderr_inner = Failing(error, after), Failing(errno.ENOSPC, 10**6)
    stdout, stderr = GuardedStream(failing, "stdout"), GuardedStream(stderr_inner, "stderr")
    for text in writes:
        assert stdout.write(text) == len(text)
        stdout.flush()
    code = exit_code(command_code, [stdout, stderr])
    if stdout.failure is None:
        assert code == command_code and stderr_inner.written == []
    elif error == errno.EPIPE:
        assert code == (command_code or 128 + signal.SIGPIPE) and stderr_inner.written == []
    else:
        assert code == (command_code or EXIT_CONSOLE)
        [line] = "".join(stderr_inner.written).splitlines()
        assert line.startswith(f"ragbench: error: cannot write to stdout ({os.strerror(error)}")
        assert ("its other work is done" in line) == (not command_code)
