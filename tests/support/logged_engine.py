"""A scripted model that adds a line to the file $RAGBENCH_TEST_CALL_LOG for every call it answers: the calls
a run really made, whatever a killed process recorded of them."""

from __future__ import annotations

import os

from ragbench._engines.scripted import echo


def answer(request) -> str:
    with open(os.environ["RAGBENCH_TEST_CALL_LOG"], "a") as log:
        log.write("call\n")
    return echo(request)
