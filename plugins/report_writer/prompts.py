"""The systems' prompts, Jinja2 templates in prompts/ (plan.j2, write.j2), rendered strictly: a name a template
uses and the system does not give is an error, not an empty string."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import jinja2


@functools.cache
def template(name: str) -> jinja2.Template:
    text = resources.files(__package__).joinpath("prompts").joinpath(name).read_text(encoding="utf-8")
    return jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False).from_string(text)


def render(name: str, **values: Any) -> str:
    return template(name).render(**values)
