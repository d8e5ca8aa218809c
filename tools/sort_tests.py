"""Puts the tests in their family folders (issue 80): each `tests/test_*.py` lying at tests/ root moves to the folder
tools/tests_by_family.py names for it, each shared module beside them (every other `tests/*.py` but conftest.py)
to the `tests/support/` package, and what named them by their old place is rewritten to the new one.

    python tools/sort_tests.py               # move what lies at tests/ root (git mv), then rewrite (below)
    python tools/sort_tests.py --move-only   # the moves alone (a commit of pure renames: git then carries
                                             # edits made elsewhere to the old paths into the moved files)
    python tools/sort_tests.py --check       # print what would move and be rewritten; exit 1 if anything

It is safe to run again at any time (after a merge brings test files written at the root, or edits that still
use an old name): what is already in place stays, and each rewrite leaves rewritten text as it is. A merge whose
conflicts are only these rewrites (an import line, a path in a docstring) is settled by taking the other side's
text (`git checkout --theirs FILE`) and running the tool again. What it rewrites:

- in every test module, support module and benchmarks/ script: `from helpers import x` / `import scoring_plugin` become
  `from support.helpers import x` / `from support import scoring_plugin`, and targets naming a support module
  ("crag_helpers:KeywordEmbedder", `scripted:smart_scripts:trajectory`) name it in the package
  ("support.crag_helpers:KeywordEmbedder");
- in every test module and support module: the paths a module made from its own place (`Path(__file__).parent
  / "data"`, `Path(__file__).resolve().parents[1]`, ...) become `paths.DATA`, `paths.REPO` and `paths.TESTS`
  (tests/support/paths.py), which hold wherever the module lies;
- in every tracked text file of the repository: `tests/test_x.py` and `tests/support/helpers.py` become their new paths.

The Python files it rewrote are tidied by ruff: imports sorted, those left unused removed, long lines wrapped
(`ruff check --fix --select I,F401`, `ruff format`).
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

from tests_by_family import family

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
SUPPORT = TESTS / "support"
BENCHMARKS = REPO / "benchmarks"  # its scripts put tests/ on sys.path to use the fakes of tests/support/
KEPT_AT_ROOT = {"conftest.py", "__init__.py"}
# the module of tests/support/ that says where things are: it alone keeps its own `Path(__file__)`
PATHS_MODULE = SUPPORT / "paths.py"
# text files whose mentions of a test file's path are rewritten (binary and data files are not read)
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".cfg", ".txt", ".sh", ""}
# the changelog tells what was: its entries keep the paths of their day
KEPT_AS_WRITTEN = {REPO / "docs" / "changelog.md"}

# what a module computed from its own place -> the name tests/support/paths.py gives it; longest first
OWN_PLACE = (
    (r'Path\(__file__\)(?:\.resolve\(\))?\.parent\s*/\s*"data"', "DATA"),
    (r"Path\(__file__\)(?:\.resolve\(\))?\.parents\[1\]", "REPO"),
    (r"Path\(__file__\)(?:\.resolve\(\))?\.parent\.parent", "REPO"),
)
# `Path(__file__).parent` alone is left as it is: the module's own folder, which a test names for a command it
# starts to import the test module itself (a module that meant tests/ by it names `paths.TESTS` instead)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True, text=True).stdout


def move(source: Path, target: Path) -> None:
    """`git mv` a tracked file (so git sees the rename), rename one git does not know yet."""
    tracked = subprocess.run(["git", "ls-files", "--error-unmatch", str(source)], cwd=REPO, capture_output=True)
    if tracked.returncode == 0:
        git("mv", str(source.relative_to(REPO)), str(target.relative_to(REPO)))
    else:
        source.rename(target)


def moves() -> list[tuple[Path, Path]]:
    """(from, to) for each .py file at tests/ root that belongs elsewhere."""
    planned = []
    for path in sorted(TESTS.glob("*.py")):
        if path.name in KEPT_AT_ROOT:
            continue
        folder = TESTS / family(path.name) if path.name.startswith("test_") else SUPPORT
        planned.append((path, folder / path.name))
    return planned


def support_modules() -> list[str]:
    return sorted(p.stem for p in SUPPORT.glob("*.py") if p.stem != "__init__")


def test_modules() -> set[Path]:
    """The test and support modules, and the scripts kept with the tests' data (they import support modules)."""
    return set(TESTS.rglob("*.py"))


def in_data(path: Path) -> bool:
    return "data" in path.relative_to(TESTS).parts


def rewrite_imports(text: str, helpers: list[str]) -> str:
    names = "|".join(map(re.escape, helpers))
    # a support module named as a module of tests/ (`from tests.helpers import`), a test module as one
    text = re.sub(rf"^(\s*)from tests\.({names})(\s+import\b)", r"\1from \2\3", text, flags=re.M)
    text = re.sub(r"^(\s*)from tests\.(test_\w+)(\s+import\b)", r"\1from \2\3", text, flags=re.M)
    # at a line's start, or after a `;` of a script given to `python -c`
    text = re.sub(rf"(^\s*|;\s*)from ({names})(\s+import\b)", r"\1from support.\2\3", text, flags=re.M)
    text = re.sub(rf"^(\s*)import ({names})\s*$", r"\1from support import \2", text, flags=re.M)
    # a target naming a support module (`scripted:smart_scripts:trajectory`, "crag_helpers:KeywordEmbedder",
    # `scripted:tests.estimate_fake:reply`, f"scripted:smart_scripts:{name}"): a module name, `:`, a name
    return re.sub(rf"(?<![\w.-])(?:tests\.)?({names}):(?=[A-Za-z_{{])", r"support.\1:", text)


def rewrite_own_place(text: str) -> str:
    """A module's paths made from its own place -> `paths.DATA` / `paths.REPO` / `paths.TESTS`."""
    count = 0
    for pattern, name in OWN_PLACE:
        text, n = re.subn(pattern, f"paths.{name}", text)
        count += n
    if not count or re.search(r"^from support import paths$", text, flags=re.M):
        return text
    return text[: first_line_for_imports(text)] + "from support import paths\n" + text[first_line_for_imports(text) :]


def first_line_for_imports(text: str) -> int:
    """Where an import may go: after `from __future__ import annotations`, else after the module's docstring."""
    future = re.search(r"^from __future__ import annotations\n", text, flags=re.M)
    if future:
        return future.end()
    body = ast.parse(text).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        end = body[0].end_lineno or 0
        return sum(len(line) for line in text.splitlines(keepends=True)[:end])
    return 0


def rewrite_references(text: str, renamed: dict[str, str]) -> str:
    """`tests/NAME.py` -> its new path, where `tests/` starts the path (not `my-plugin/tests/test_x.py`)."""
    if not renamed:
        return text
    names = "|".join(map(re.escape, sorted(renamed, key=len, reverse=True)))
    return re.sub(rf"(?<![\w./-])tests/({names})(?![\w/])", lambda m: "tests/" + renamed[m.group(1)], text)


def renamed_paths() -> dict[str, str]:
    """Every file of tests/ below the root, by the name it had at the root ("test_x.py" -> "run/test_x.py")."""
    return {
        p.name: str(p.relative_to(TESTS))
        for p in TESTS.rglob("*.py")
        if p.parent != TESTS and p.name != "__init__.py" and "data" not in p.relative_to(TESTS).parts
    }


def text_files() -> list[Path]:
    files = [REPO / line for line in git("ls-files", "--cached", "--others", "--exclude-standard").splitlines()]
    return [
        p
        for p in files
        if p.suffix in TEXT_SUFFIXES and p not in KEPT_AS_WRITTEN and p.is_file() and not p.is_symlink()
    ]


def tidy(paths: list[Path]) -> None:
    """The imports sorted as isort would, those left unused removed, the lines made longer wrapped."""
    if paths:
        subprocess.run(["ruff", "check", "--fix", "--quiet", "--select", "I,F401", *map(str, paths)], cwd=REPO)
        subprocess.run(["ruff", "format", "--quiet", *map(str, paths)], cwd=REPO)


def rewrite(check: bool) -> list[Path]:
    helpers = support_modules()
    renamed = renamed_paths()
    modules = test_modules()
    changed = []
    for path in text_files():
        try:
            before = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        after = rewrite_references(before, renamed)
        if path in modules or BENCHMARKS in path.parents:
            after = rewrite_imports(after, helpers)
        if path in modules and path != PATHS_MODULE and path.parent != TESTS and not in_data(path):
            after = rewrite_own_place(after)
        if after != before:
            changed.append(path)
            if not check:
                path.write_text(after, encoding="utf-8")
    if not check:
        tidy([p for p in changed if p.suffix == ".py"])
    return changed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--move-only", action="store_true", help="git mv the files; rewrite nothing")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything would change")
    options = parser.parse_args()
    try:
        planned = moves()
    except LookupError as error:
        print(f"sort_tests: {error}", file=sys.stderr)
        return 2
    for source, target in planned:
        print(f"move {source.relative_to(REPO)} -> {target.relative_to(REPO)}")
        if not options.check:
            target.parent.mkdir(parents=True, exist_ok=True)
            move(source, target)
    if options.move_only:
        return 0
    changed = rewrite(options.check) if not (options.check and planned) else []
    for path in changed:
        print(f"rewrite {path.relative_to(REPO)}")
    return 1 if options.check and (planned or changed) else 0


if __name__ == "__main__":
    sys.exit(main())
