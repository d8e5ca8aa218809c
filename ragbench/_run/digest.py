"""The digest of an example's content: a --resume runs an example again when its record in the data
changed since its sample was saved (`example_sha256` in the sample).

Fed value by value rather than as one `json.dumps`: a CRAG Task 3 example holds 50 web pages (15 MB of
HTML), and dumping it to JSON first took 45 ms of the event loop a question (2-vCPU VM), hashing its
strings as they are about 12 ms."""
from __future__ import annotations

import hashlib
import json
from dataclasses import fields, is_dataclass
from typing import Any

from .._types import Example


def example_digest(example: Example) -> str:
    """sha256 of everything the example holds but its position in the data."""
    digest = hashlib.sha256()
    _feed(digest, {f.name: getattr(example, f.name) for f in fields(example) if f.name != "index"})
    return digest.hexdigest()


def _feed(digest: Any, value: Any) -> None:
    """`value` into `digest`, each kind tagged and each string length-prefixed (no two values feed alike)."""
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        digest.update(b"s%d:" % len(data))
        digest.update(data)
    elif isinstance(value, dict):
        digest.update(b"d%d:" % len(value))
        for key in sorted(value, key=str):
            _feed(digest, str(key))
            _feed(digest, value[key])
    elif isinstance(value, (list, tuple)):
        digest.update(b"l%d:" % len(value))
        for item in value:
            _feed(digest, item)
    elif is_dataclass(value) and not isinstance(value, type):
        digest.update(b"o")
        _feed(digest, {f.name: getattr(value, f.name) for f in fields(value)})
    else:  # numbers, booleans, None; anything else by its text
        digest.update(b"j")
        _feed(digest, json.dumps(value, default=str))
