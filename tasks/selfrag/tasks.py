"""PopQA, PubHealth and ARC-Challenge from Self-RAG's evaluation files: declared in popqa.yaml,
pubhealth.yaml and arc_challenge.yaml (prompt style `selfrag`, style.py); these classes are the same
tasks for code that imports them."""

from __future__ import annotations

from .style import declared_task


class PopQA(declared_task("popqa.yaml")):  # type: ignore[misc]  # a class its YAML file makes
    """PopQA long-tail, as in Self-RAG (popqa.yaml)."""


class PubHealth(declared_task("pubhealth.yaml")):  # type: ignore[misc]  # a class its YAML file makes
    """PubHealth claim verification, as in Self-RAG (pubhealth.yaml)."""


class ArcChallenge(declared_task("arc_challenge.yaml")):  # type: ignore[misc]  # a class its YAML file makes
    """ARC-Challenge multiple choice, as in Self-RAG (arc_challenge.yaml)."""
