"""The user's application named as `module:attribute` (`--system-arg callable=my_app:answer`), loaded when the
system is made, before the run starts: from the Python path with the current folder first (as `python -m` finds a
module; the `ragbench` command's own path does not hold it), and every way it can fail said in one line with the fix
(no such module, a module that fails to import, no such attribute), never a traceback.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from typing import Any

from .._errors import ConfigError


def load_object(target: str, system: str, option: str) -> Any:
    """The object `target` (`module:attribute`, the attribute may be dotted) names, for system `system`'s option
    `option`; a ConfigError of one line where it cannot be loaded."""
    where = f"system {system}: {option}={target}"
    module_name, sep, attribute = str(target).partition(":")
    if not sep or not module_name.strip() or not attribute.strip():
        raise ConfigError(f"{where}: expected MODULE:ATTRIBUTE, e.g. my_app:answer (the module on the Python path)")
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(f"{exc.name}.")):
            raise ConfigError(
                f"{where}: no module {exc.name!r} on the Python path (the current folder {here}, then PYTHONPATH "
                "and the environment's packages): run ragbench where it is, or add its folder to PYTHONPATH"
            ) from None
        raise ConfigError(f"{where}: importing {module_name} needs {exc.name!r}, which is not installed") from None
    except Exception as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        raise ConfigError(
            f"{where}: importing {module_name} raised {type(exc).__name__}: {exc} ({frame.filename}:{frame.lineno})"
        ) from None
    found: Any = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise ConfigError(f"{where}: {module_name} ({getattr(module, '__file__', '?')}) has no {attribute!r}")
        found = getattr(found, part)
    return found
