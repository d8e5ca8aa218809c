"""The RunConfig fields of a command's options, from click's parsed values: each read by its declaration's shape
(a flag, a number, K=V pairs, NAME,NAME ...), except the few read otherwise (below, each with its reason: another
flag or option's value, --data's paths as text); an option a command does not offer keeps its default."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..._config.run_config import RunConfig
from ..._config.run_option import group_options
from ..._errors import ConfigError
from ..._values.options import parse_assignments
from .options import EVERY, Offered, offered

Fields = dict[str, Any]  # RunConfig fields by name


def split_names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


def config_fields(values: Mapping[str, Any], command: str) -> Fields:
    """The RunConfig fields of the options `command` offers (ConfigError: a malformed one); --human-labels and
    --price-table each read once now, so that a bad file fails before any work."""
    fields = _read([item for item in offered(command) if item.own], values)
    if "human_labels" in fields:
        read_judging_files(fields["human_labels"], fields["price_table"])
    return fields


def run_config_of(values: Mapping[str, Any]) -> RunConfig:
    """The RunConfig of a run's command line (`ragbench`, `check`, `estimate`)."""
    return RunConfig.of(**config_fields(values, EVERY))


def group_fields(values: Mapping[str, Any], group: type) -> Fields:
    """The fields of one group's options (a dataclass declaring them) from a command line's parsed values."""
    return _read(
        [Offered(option, option.option.flags[0], True) for option in group_options(group) if option.option.flags],
        values,
    )


def _read(items: list[Offered], values: Mapping[str, Any]) -> Fields:
    fields: Fields = {}
    for item in items:
        fields[item.option.name] = _value(item, values, fields)
    return fields


def _value(item: Offered, values: Mapping[str, Any], fields: Fields) -> Any:
    option = item.option
    if option.name in _READERS:
        return _READERS[option.name](values, fields)
    flag = item.flag.name
    given = values.get(_key(flag))
    if option.shape == "flag":
        return bool(given) != (option.default is True)  # --no-NAME of a flag on by default
    if option.shape == "pairs":
        return parse_assignments(given or (), flag)
    if option.shape == "list":
        return list(given or ())
    if option.shape == "names":
        return split_names(given or "")
    return item.default if given is None else given


def _key(flag: str) -> str:
    """click's name of a flag's value."""
    return flag.lstrip("-").replace("-", "_")


def _tasks(values: Mapping[str, Any], _fields: Fields) -> list[str]:
    """The tasks of --include-path folders are named by their files, so the run's config says which files it
    ran."""
    from ..._yaml_tasks.discovery import include

    names = split_names(values.get("tasks") or "")
    folders = values.get("include_path", ())
    return include(names, folders) if folders else names


def _model_args(values: Mapping[str, Any], _fields: Fields) -> dict[str, object]:
    """--model-arg, and --base-url: one URL, or a list of the servers of one model."""
    model_args = parse_assignments(values.get("model_arg", ()), "--model-arg")
    base_url: tuple[str, ...] = values.get("base_url", ())
    if base_url:
        model_args["base_url"] = base_url[0] if len(base_url) == 1 else list(base_url)
    return model_args


def _data(values: Mapping[str, Any], _fields: Fields) -> dict[str, str]:
    """--data TASK=PATH: a path, read as text (YAML would read 1.0 as a number)."""
    return {k: str(v) for k, v in parse_assignments(values.get("data", ()), "--data").items()}


def _role_models(values: Mapping[str, Any], _fields: Fields) -> dict[str, str]:
    """--role-model ROLE=ENGINE:MODEL (repeatable): a role given once, its model an engine's."""
    models: dict[str, str] = {}
    for item in values.get("role_model", ()):
        role, sep, model = item.partition("=")
        if not sep or not role.strip() or not model.strip():
            raise ConfigError(
                f"--role-model {item!r}: expected ROLE=ENGINE:MODEL, e.g. locator=hf:/models/smart-locator"
            )
        if role.strip() in models:
            raise ConfigError(f"--role-model {role.strip()}: given twice")
        models[role.strip()] = model.strip()
    return models


def _role_model_args(values: Mapping[str, Any], fields: Fields) -> dict[str, dict[str, object]]:
    """--role-model-arg ROLE.KEY=VALUE, ROLE one of the --role-model roles."""
    models = fields.get("role_models", {})
    options: dict[str, dict[str, object]] = {}
    for key, value in parse_assignments(values.get("role_model_arg", ()), "--role-model-arg").items():
        role, _, option = key.partition(".")
        if role not in models or not option:
            raise ConfigError(
                f"--role-model-arg {key}=...: expected ROLE.KEY with ROLE one of the --role-model roles "
                f"({', '.join(models) or 'none given'})"
            )
        options.setdefault(role, {})[option] = value
    return options


def judge_args_of(items: tuple[str, ...], judges: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """--judge-arg N.KEY=VALUE: each --judge's options by its position, the values read as YAML scalars."""
    out: dict[str, dict[str, object]] = {}
    for key, value in parse_assignments(items, "--judge-arg").items():
        index, _, option = key.partition(".")
        if not index.isdigit() or not option or int(index) >= len(judges):
            raise ConfigError(
                f"--judge-arg {key}=...: expected N.KEY with N the position of a --judge (0 to {len(judges) - 1})"
                if judges
                else f"--judge-arg {key}: there is no --judge"
            )
        out.setdefault(index, {})[option] = value
    return out


def read_judging_files(human_labels: str | None, price_table: str | None) -> None:
    """--human-labels and --price-table, each file read once now so that a bad one fails before any work."""
    from ..._cost.prices import read_price_table
    from ..._reports.judging.human_labels import read_human_labels

    if human_labels:
        read_human_labels(human_labels)
    if price_table:
        read_price_table(price_table)


# the options read otherwise than by their shape (another flag, another option's value, a path kept as text)
_READERS: dict[str, Callable[[Mapping[str, Any], Fields], Any]] = {
    "tasks": _tasks,  # and --include-path
    "model_args": _model_args,  # and --base-url
    "data": _data,
    "role_models": _role_models,
    "role_model_args": _role_model_args,  # of the --role-model roles
    "judge_args": lambda values, fields: judge_args_of(values.get("judge_arg", ()), tuple(fields.get("judges", ()))),
}
