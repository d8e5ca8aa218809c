"""CI runs the README's Quick-start commands, as written, in a fresh virtualenv."""

from __future__ import annotations

import importlib.util

from conftest import ROOT


def quick_start_commands() -> list[str]:
    spec = importlib.util.spec_from_file_location("readme_commands", ROOT / ".ci" / "readme_commands.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.quick_start_commands((ROOT / "README.md").read_text(encoding="utf-8"))


def test_ci_finds_the_readmes_two_quick_start_commands():
    install_and_demo, install_and_test = quick_start_commands()
    assert install_and_demo.startswith("pip install ") and install_and_demo.endswith(
        "&& ragbench --tasks demo --system vanilla"
    )
    assert install_and_test.startswith("pip install ") and install_and_test.endswith(
        "&& python -m pytest -q -n auto --dist worksteal"
    )


def test_ci_runs_them_in_a_fresh_virtualenv_and_keeps_pytests_exit_status():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "set -euo pipefail" in script
    assert (
        script.index('python3 -m venv "$venv"')
        < script.index('. "$venv/bin/activate"')
        < script.index("python .ci/readme_commands.py README.md")
        < script.index('eval "$command"')
    )
    assert "pip install" not in script.replace("# ", "")  # nothing installed but by the README's commands


def test_the_quick_start_says_to_make_and_activate_a_virtualenv_before_its_commands():
    """A new user's first step, said in the prose above the two commands (not a third command: .ci/run makes its
    own virtualenv and runs exactly the two)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    first_command = section.index("\n    pip install ")
    assert "`python3 -m venv .venv && . .venv/bin/activate`" in section[:first_command]
