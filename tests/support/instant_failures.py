"""Each failure named the moment it is reported, in the run's own output: `FAILED nodeid - reason`.

Under xdist (`-n auto`, the README's test command) the failures are named only in the summary the controller prints
at the end, and a run interrupted or killed before it (Ctrl-C: the workers die first, and the controller's shutdown
ends in `OSError: cannot send`) says only how many `F`s went by. Printed at once by the controller, the failing
tests are named on the screen above wherever the run stopped. A run without workers prints its own summary on
Ctrl-C, and `-v` names every test as it ends: neither gets the line twice.
"""

from __future__ import annotations

import pytest


def reason(report: pytest.TestReport) -> str:
    """The failure's one-line reason: the exception's message as pytest's short summary shows it."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return (lines[0] if crash is not None else lines[-1]) if lines else ""


class InstantFailures:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(tryfirst=True)  # before the terminal's own `F`: a run killed after it still has the name
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not report.failed:
            return
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None:
            return
        stage = "" if report.when == "call" else f" (at {report.when})"
        terminal.write_line(f"FAILED {report.nodeid}{stage} - {reason(report)}")
        terminal.flush()


def register(config: pytest.Config) -> None:
    """On xdist's controller of a run not already naming each test (-v): the workers report to it."""
    controller = bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")
    if controller and config.get_verbosity() < 1:
        config.pluginmanager.register(InstantFailures(config), "instant_failures")


def pytest_configure(config: pytest.Config) -> None:
    """As a plugin of its own (`-p support.instant_failures`)."""
    register(config)
