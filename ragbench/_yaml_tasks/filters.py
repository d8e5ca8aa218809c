"""The named post-processing filters of a YAML task (`postprocess:`): each turns the raw output into
the text the next one reads, the last one's result is the scored answer."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .._errors import did_you_mean
from .located import SpecError

Filter = Callable[[str], str]

PLAIN: dict[str, Filter] = {"strip": str.strip, "lower": str.lower, "first_line": lambda text: text.split("\n", 1)[0]}
WITH_ARGUMENT = ("before", "remove", "remove_prefix", "regex")


def check_filter(item: Any, source: str, key: str, line: int) -> Filter:
    """The filter an entry of `postprocess` names, or a SpecError at its line."""
    if isinstance(item, str):
        if item in PLAIN:
            return PLAIN[item]
        raise SpecError(
            source,
            line,
            key,
            f"unknown filter '{item}'{did_you_mean(item, [*PLAIN, *WITH_ARGUMENT])} "
            f"(filters: {', '.join([*PLAIN, *WITH_ARGUMENT])})",
        )
    if not isinstance(item, dict) or len(item) != 1:
        raise SpecError(
            source,
            line,
            key,
            'expected a filter name, or a mapping of one filter to its argument (e.g. {before: "\\n\\n"})',
        )
    ((name, argument),) = item.items()
    if name not in WITH_ARGUMENT:
        hint = did_you_mean(name, [*PLAIN, *WITH_ARGUMENT])
        raise SpecError(
            source, line, key, f"unknown filter '{name}'{hint} (with an argument: {', '.join(WITH_ARGUMENT)})"
        )
    if name == "regex":
        return _regex(argument, source, line, key)
    if not isinstance(argument, str) or not argument:
        raise SpecError(source, line, key, f"filter '{name}' takes a non-empty string")
    if name == "before":
        return lambda text: text.split(argument, 1)[0]
    if name == "remove":
        return lambda text: text.replace(argument, "")
    return lambda text: text.removeprefix(argument)


def _regex(argument: Any, source: str, line: int, key: str) -> Filter:
    options = argument if isinstance(argument, dict) else {"pattern": argument}
    unknown = set(options) - {"pattern", "group", "fallback"}
    if unknown or not isinstance(options.get("pattern"), str):
        raise SpecError(source, line, key, "filter 'regex' takes a pattern, or {pattern: P, group: N, fallback: TEXT}")
    try:
        pattern = re.compile(options["pattern"])
    except re.error as exc:
        raise SpecError(source, line, key, f"regex {options['pattern']!r} does not compile ({exc})") from exc
    group = options.get("group", 1 if pattern.groups else 0)
    if not isinstance(group, int) or isinstance(group, bool) or not 0 <= group <= pattern.groups:
        raise SpecError(source, line, key, f"regex group {group!r}: the pattern has {pattern.groups} group(s)")
    fallback = options.get("fallback")
    if fallback is not None and not isinstance(fallback, str):
        raise SpecError(source, line, key, "regex fallback must be a string")

    def first_match(text: str) -> str:
        match = pattern.search(text)
        if match is None:
            return text if fallback is None else fallback
        return match.group(group) or ""

    return first_match


def chain(filters: list[Filter]) -> Filter:
    def apply(text: str) -> str:
        for one in filters:
            text = one(text)
        return text

    return apply
