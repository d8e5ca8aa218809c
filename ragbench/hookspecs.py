"""The plugin hook: each plugin returns a catalogue of lazily imported components.

A plugin is any module listed in the `ragbench` entry-point group. Its `ragbench_catalog`
hook returns data in the schema of `registry.yaml`:

    {"tasks":   {name: {"target": "pkg.module:Attr", "description": "...", "aliases": [...],
                        "defaults": {...}}},
     "systems": {...}, "metrics": {...}, "engines": {...}, "retrievers": {...},
     "groups":  {group_name: [task names]}}

Targets are imported only when used, so `ragbench list` never imports torch, vLLM or bm25s.
"""
from __future__ import annotations

from typing import Any

import pluggy

PROJECT = "ragbench"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class RagbenchHooks:
    @hookspec
    def ragbench_catalog(self) -> dict[str, Any]:
        """Return this plugin's catalogue (schema above)."""
