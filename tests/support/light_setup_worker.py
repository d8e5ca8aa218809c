"""The tests' Ray nodes' worker setup (`ray_cluster.QUIET_NODE`'s `setup_worker_path`): what Ray's own
`ray/_private/workers/setup_worker.py` does for the runtime environments the tests give (`env_vars`: the store
modules' endpoint and keys, the plugin kind's path), without importing Ray first.

A raylet starts a Python worker of a job with a runtime environment as `python setup_worker.py default_worker.py
ARGS --language=PYTHON --serialized-runtime-env-context=JSON` (without one, it drops the script: its name must end
in setup_worker.py); Ray's script imports all of Ray (~1 s of CPU on a 2-vCPU VM) only to read that JSON, set the
variables and exec `python default_worker.py ARGS`, which imports Ray again. Here the JSON is read with the
standard library and the same command exec'd the same way (bash -c 'exec PYTHON ARGS', each argument quoted), the
variables set as Ray sets them (`${NAME}` expanded, an unknown one empty). Any other environment (a command prefix:
working_dir, a container; another entry point; another language) is handed to Ray's own script unchanged."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import sys

CONTEXT = "--serialized-runtime-env-context="
LANGUAGE = "--language="


def main(argv: list[str]) -> None:
    context_json, language, rest = "{}", "", []
    for arg in argv:
        if arg.startswith(CONTEXT):
            context_json = arg[len(CONTEXT) :]
        elif arg.startswith(LANGUAGE):
            language = arg[len(LANGUAGE) :]
        else:
            rest.append(arg)
    context = json.loads(context_json or "{}")
    if language != "PYTHON" or context.get("command_prefix") or context.get("override_worker_entrypoint"):
        ray = importlib.util.find_spec("ray")  # Ray's own script, for what the tests never give
        assert ray is not None and ray.submodule_search_locations is not None
        script = os.path.join(ray.submodule_search_locations[0], "_private", "workers", "setup_worker.py")
        os.execv(sys.executable, [sys.executable, script, *argv])
    for name, value in (context.get("env_vars") or {}).items():
        os.environ[name] = re.sub(r"\$\{[A-Z0-9_]+\}", "", os.path.expandvars(value))
    executable = context.get("py_executable") or sys.executable
    os.execvp("bash", ["bash", "-c", " ".join(["exec", executable, *(shlex.quote(arg) for arg in rest)])])


if __name__ == "__main__":
    main(sys.argv[1:])
