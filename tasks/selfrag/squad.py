"""SQuAD 1.1 dev as SMART evaluates it: declared in squad.yaml (format `squad`, prompt style
`selfrag_squad`, style.py); this class is the same task for code that imports it."""

from __future__ import annotations

from .style import declared_task


class Squad(declared_task("squad.yaml")):  # type: ignore[misc]  # a class its YAML file makes
    """SQuAD 1.1 dev, open-domain or over its own paragraph (squad.yaml)."""
