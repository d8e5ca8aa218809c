"""A stop signal in the first moments of `ragbench ...` (the command line and the run's modules loading, before
the run's own handlers) ends in one line and 128 + the signal, never in a silent death by the signal."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

FIRST_LIBRARY = "click"  # the first library the command line loads (-X importtime names each import as it ends)


def stopped_early(tmp_path, name: str, delay: float) -> subprocess.CompletedProcess:
    """`python -m ragbench` (as the console script: ragbench._cli.entry) sent the signal `delay` seconds after
    it has loaded click: while the command line, then the run's modules load. Its run would take 12 s (24
    examples, one at a time, 0.5 s each), so that on a loaded machine the signal cannot come after its end."""
    output = tmp_path / f"run-{name}-{delay}"
    command = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "ragbench", "--tasks", "demo", "--system",
                                "closed_book", "--model", "scripted:echo", "--model-arg", "per_request=0.5",
                                "--max-inflight", "1", "--no-progress", "--output", str(output)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in command.stderr:
        lines.append(line)
        if line.startswith("import time:") and line.split("|")[-1].strip() == FIRST_LIBRARY:
            break
    time.sleep(delay)
    command.send_signal(getattr(signal, name))
    stdout, stderr = command.communicate(timeout=60)
    said = [line for line in "".join(lines + [stderr]).splitlines() if line.strip() and
            not line.startswith("import time:")]
    return subprocess.CompletedProcess(command.args, command.returncode, stdout, "\n".join(said))


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP", "SIGINT"])
@pytest.mark.parametrize("delay", [0.0, 0.02, 0.05, 0.1, 0.2])
def test_a_stop_signal_while_the_command_starts_ends_in_one_line_and_128_plus_the_signal(tmp_path, name, delay):
    signum = getattr(signal, name)
    done = stopped_early(tmp_path, name, delay)
    assert done.returncode == 128 + signum, (done.returncode, done.stderr)  # not -signum: killed without a word
    stopped = "interrupted" if name == "SIGINT" else f"stopped by {name}"
    assert done.stderr.startswith(f"ragbench: {stopped}"), done.stderr
    assert "Traceback" not in done.stderr and "Aborted!" not in done.stderr
    if "examples saved in" not in done.stderr:  # else the run had begun: the count and the command to continue
        assert done.stderr == f"ragbench: {stopped} while starting; nothing was written: run the command again"
