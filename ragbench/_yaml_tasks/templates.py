"""Jinja2 prompt templates of YAML tasks, rendered in jinja2's sandbox with undefined names as errors:
a template can format what a record holds, never run it. A template is checked when the file is read
(syntax, and every name it uses is one the task provides), so a typo is one line before the run."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from jinja2 import StrictUndefined, TemplateError, TemplateSyntaxError, meta
from jinja2.sandbox import SandboxedEnvironment

from .._errors import did_you_mean
from .located import SpecError
from .spec import Located

DEFAULT_TEMPLATE = (
    "{% for doc in docs %}[{{ loop.index }}] {{ doc.title }}\n{{ doc.text }}\n{% endfor %}"
    "Question: {{ question }}\nAnswer:"
)


def environment() -> SandboxedEnvironment:
    return SandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)


class PromptTemplate:
    """One template of a task file; `render` raises a ValueError naming the file, line and key."""

    def __init__(self, located: Located | None, source: str, variables: Iterable[str], default: str) -> None:
        self.source = source
        self.key, self.line = (located.key, located.line) if located else ("(default template)", 0)
        text = located.value if located else default
        env = environment()
        try:
            tree = env.parse(text)
        except TemplateSyntaxError as exc:
            raise self.error(f"template line {exc.lineno}: {exc.message}") from exc
        known = {*variables, *env.globals}
        for name in sorted(meta.find_undeclared_variables(tree) - known):
            raise self.error(
                f"'{name}' is undefined{did_you_mean(name, known)} (the template can use: "
                f"{', '.join(sorted(set(variables)))})"
            )
        self.template = env.from_string(text)

    def error(self, problem: str) -> SpecError:
        return SpecError(self.source, self.line, self.key, problem)

    def render(self, variables: Mapping[str, object]) -> str:
        try:
            return self.template.render(variables)
        except Exception as exc:  # the sandbox's refusals and whatever a template's expression raises
            kind = "" if isinstance(exc, TemplateError) else f"{type(exc).__name__}: "
            raise ValueError(str(self.error(f"cannot render: {kind}{exc}"))) from exc
