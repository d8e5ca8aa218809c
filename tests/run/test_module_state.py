"""No module keeps state that a run fills: what the built-in catalogue hands out is each caller's own copy,
and no function adds to a container bound at module level (a reader's handles belong to whoever opened
them). Memo caches of shipped files and tokenizer loads (`lru_cache`) are the exception: filled once, the
same for every run; and so is the one set that mirrors what a fork copies (PROCESS_WIDE)."""

from __future__ import annotations

import ast
from pathlib import Path

import ragbench
from ragbench.api.data import packaged_yaml, section
from ragbench.tasks import ragbench_catalog

ROOT = Path(ragbench.__file__).parent.parent
PACKAGES = ("ragbench", "plugins", "tasks", "metrics")
CONTAINERS = {
    "dict",
    "list",
    "set",
    "bytearray",
    "defaultdict",
    "OrderedDict",
    "Counter",
    "deque",
    "WeakSet",
    "WeakValueDictionary",
    "WeakKeyDictionary",
}
MUTATORS = {
    "append",
    "add",
    "update",
    "setdefault",
    "pop",
    "popitem",
    "clear",
    "extend",
    "remove",
    "discard",
    "insert",
    "appendleft",
    "extendleft",
}


def test_what_the_catalogue_hands_out_is_each_callers_own():
    first = section("systems", "groups")
    first["systems"]["vanilla"]["description"] = "changed"
    first["groups"].clear()
    catalog = ragbench_catalog()
    name, manifest = next(iter(catalog["reproductions"].items()))
    manifest["run"]["system_args"] = {"changed": True}
    packaged_yaml("ragbench", "registry.yaml")["engines"].clear()
    again = section("systems", "groups")
    assert again["systems"]["vanilla"]["description"] != "changed" and again["groups"]
    assert ragbench_catalog()["reproductions"][name]["run"].get("system_args") != {"changed": True}
    assert packaged_yaml("ragbench", "registry.yaml")["engines"]


# A fork copies every descriptor of the process, whichever run opened it: the run locks a forked child must
# close are the process's, so their set is too (ragbench._storage.run_lock).
PROCESS_WIDE = {("ragbench/_storage/run_lock.py", "_HELD")}


def module_containers(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level to a mutable container."""
    names = set()
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        literal = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp))
        made = isinstance(value, ast.Call) and ast.unparse(value.func).rpartition(".")[2] in CONTAINERS
        names |= {target.id for target in targets if isinstance(target, ast.Name) and (literal or made)}
    return names


def written(function: ast.AST) -> list[tuple[int, str]]:
    """(line, name) where `function` writes into a container it names (an item set or deleted, a mutating call)."""
    out = []
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
            and isinstance(node.func.value, ast.Name)
        ):
            out.append((node.lineno, node.func.value.id))
        targets = (
            node.targets
            if isinstance(node, (ast.Assign, ast.Delete))
            else [node.target]
            if isinstance(node, ast.AugAssign)
            else []
        )
        out += [
            (node.lineno, target.value.id)
            for target in targets
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
        ]
    return out


def local_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    arguments = function.args
    return {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]} | {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def test_no_function_fills_a_container_bound_at_module_level():
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            containers = module_containers(tree)
            if not containers:  # most modules: no function can fill one
                continue
            for function in ast.walk(tree):
                if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    mine = containers - local_names(function)
                    found += [
                        f"{path.relative_to(ROOT)}:{line} {function.name} fills {name}"
                        for line, name in written(function)
                        if name in mine and (str(path.relative_to(ROOT)), name) not in PROCESS_WIDE
                    ]
    assert found == []
