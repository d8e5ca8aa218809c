"""Every shell command in the docs runs here or says why it cannot (docs/internals.md, "Commands in the
docs"): a fenced `bash` block is run, the blocks of one page in order in one fresh folder, unless an HTML
comment on the line before it marks it `needs gpu|model|data|network|time`, `serves` (started, its URL
fetched, stopped) or `tested-by tests/FILE.py`. A code block without a language, an indented one, or a
command in a block of another language fails. The pages' `ragbench` commands run through one zygote of the
test process (tests/support/command_zygote.py), each a fork of a process that loaded the command line once."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import markdown
import pytest

from conftest import ROOT

PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md", ROOT / "benchmarks" / "README.md"]
SHELLS = {"bash", "sh", "shell"}
REASONS = {"gpu", "model", "data", "network", "time"}
FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
MARKER = re.compile(r"<!--\s*docs:\s*(.*?)\s*-->")
COMMAND_LINE = re.compile(r"^\s*(\$\s+)?(ragbench|pip|python|mkdocs)\s")
BLOCK_TIMEOUT = 180


@dataclass
class Block:
    page: Path
    line: int
    language: str
    body: str
    marker: str | None  # the text of a `<!-- docs: ... -->` comment on the line before the fence

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.fullmatch(before.strip())
        found.append(
            Block(
                page,
                text.count("\n", 0, match.start()) + 1,
                match.group(1),
                match.group(2),
                marker.group(1) if marker else None,
            )
        )
    return found


def quick_start_lines() -> set[str]:
    """The README's two indented Quick-start commands: .ci/run runs them (tests/project/test_ci_readme.py)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    return {line for line in section.splitlines() if line.startswith("    pip install ")}


def indented_code(page: Path) -> list[str]:
    """Indented code blocks, as Python-Markdown sees them once the fenced blocks are taken out."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    allowed = quick_start_lines() if page == ROOT / "README.md" else set()
    text = "\n".join(line for line in text.splitlines() if line not in allowed)
    return re.findall(r"<pre><code>(.*?)</code></pre>", markdown.markdown(text), re.S)


def marker_problem(block: Block) -> str | None:
    """Why a block's marker is not a valid one, or None."""
    if block.marker is None or block.marker == "serves":
        return None
    if block.marker.startswith("tested-by "):
        test = ROOT / block.marker.split(maxsplit=1)[1]
        return None if test.is_file() and ROOT / "tests" in test.parents else f"no test file {test}"
    if block.marker.startswith("needs "):
        reasons = {reason.strip() for reason in block.marker[len("needs ") :].split(",")}
        unknown = reasons - REASONS
        return f"unknown reason(s) {sorted(unknown)}; known: {sorted(REASONS)}" if unknown else None
    return f"unknown marker {block.marker!r}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_code_block_names_its_language_and_every_command_block_is_run_or_marked(page):
    problems = []
    for block in blocks(page):
        if not block.language:
            problems.append(f"{block.where()}: a code block without a language (```bash, ```text ...)")
        elif block.language not in SHELLS and any(COMMAND_LINE.match(line) for line in block.body.splitlines()):
            problems.append(f"{block.where()}: a command in a ```{block.language} block: make it ```bash")
        elif block.language in SHELLS and (problem := marker_problem(block)):
            problems.append(f"{block.where()}: {problem}")
        elif block.language not in SHELLS and block.marker is not None:
            problems.append(f"{block.where()}: a docs marker on a ```{block.language} block")
    problems += [
        f"{page.relative_to(ROOT)}: an indented code block ({code.strip()[:60]!r}): use a fenced block with a language"
        for code in indented_code(page)
    ]
    assert not problems, "\n".join(problems)


def runnable(page: Path) -> list[Block]:
    return [block for block in blocks(page) if block.language in SHELLS and block.marker in (None, "serves")]


OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    # a download (a task's public data file) goes to a closed local port and fails at once
    **{name: "http://127.0.0.1:9" for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY")},
    "no_proxy": "127.0.0.1,localhost",
    "NO_PROXY": "127.0.0.1,localhost",
}


def environment(folder: Path) -> dict[str, str]:
    """The test's Python and its `ragbench` first on PATH, a HOME of the folder's own, offline."""
    home = folder / "home"
    home.mkdir()
    return {
        **os.environ,
        **OFFLINE,
        "HOME": str(home),
        "RAGBENCH_DATA_DIR": str(home / "data"),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }


def run_block(block: Block, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The block run by bash in `folder`, exited 0 (its output for the pages that show it)."""
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.body],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
    )
    assert done.returncode == 0, (
        f"{block.where()} exited {done.returncode}:\n{block.body}\n"
        f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    )
    return done


def serve_block(block: Block, folder: Path, env: dict[str, str]) -> None:
    """Start the server the block runs, fetch the URL it prints, stop it."""
    server = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", f"exec {block.body.strip()}"],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, deadline = [], time.monotonic() + 60
        while time.monotonic() < deadline:
            line = server.stdout.readline()
            output.append(line)
            if url := re.search(r"http://[\w.\-]+:\d+/\S*", line):
                with urllib.request.urlopen(url.group(0), timeout=30) as response:
                    assert response.status == 200, f"{block.where()}: {url.group(0)} answered {response.status}"
                return
            if not line and server.poll() is not None:
                break
        pytest.fail(f"{block.where()}: the server printed no URL:\n{''.join(output)[-3000:]}")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        server.stdout.close()


@pytest.mark.parametrize(
    "page", [page for page in PAGES if runnable(page)], ids=lambda page: str(page.relative_to(ROOT))
)
def test_the_pages_commands_run_in_a_fresh_folder(page, tmp_path, ragbench_zygote):
    """Each `ragbench` of a page's run blocks is a fork of the zygote that loaded the command line once for this
    test process (support/command_zygote.py, tests/conftest.py's `ragbench_zygote`: what it loads reads no
    environment and no folder, so each page's commands run in their own folder, HOME and offline environment;
    the pages' ~50 commands paid its import each); a block that serves
    runs the installed command itself, a fresh process the test stops with its process group."""
    env = environment(tmp_path)
    for block in runnable(page):
        if block.marker == "serves":
            serve_block(block, tmp_path, env)
        else:
            run_block(block, tmp_path, ragbench_zygote.environment(env))


def test_a_command_through_the_zygote_prints_and_exits_as_the_installed_one(tmp_path, ragbench_zygote):
    """What a page's test sees of a `ragbench` forked by the zygote, the installed command shows too: the same
    standard output and error, and a failure's exit status (never a 0 that would pass a failing page)."""
    env = environment(tmp_path)
    commands = "ragbench --help | head -3; ragbench --tasks no_such_task --system vanilla --model scripted:echo"
    through_zygote = ragbench_zygote.environment(env)
    forked = subprocess.run(["bash", "-c", commands], cwd=tmp_path, env=through_zygote, capture_output=True)
    found = subprocess.run(["bash", "-c", "command -v ragbench"], env=through_zygote, capture_output=True)
    assert "command_zygote" in Path(found.stdout.decode().strip()).read_text()  # the shim, not the command
    fresh = subprocess.run(["bash", "-c", commands], cwd=tmp_path, env=env, capture_output=True)
    assert fresh.returncode != 0 and b"no_such_task" in fresh.stderr and fresh.stdout.startswith(b"Usage: ragbench")
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
