"""The demo task (24 short questions with their own passages, PopQA's format): declared in demo.yaml;
this class is the same task for code that imports it."""

from __future__ import annotations

from .style import declared_task


class Demo(declared_task("demo.yaml")):  # type: ignore[misc]  # a class its YAML file makes
    """The shipped demo task (demo.yaml)."""
