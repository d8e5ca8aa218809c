"""OmniEval's tasks, topics and the judge's skip lists, read from `data/topics_and_tasks.json`
(names copied as data from RUC-NLPIR/OmniEval, MIT; see the file's `_license`)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from ragbench.api import ConfigError


@cache
def data_file(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        resources.files(__package__).joinpath("data").joinpath(name).read_text(encoding="utf-8")
    )
    return loaded


def tasks() -> list[str]:
    """The 5 task names in upstream id order."""
    return [t["task_name"] for t in data_file("topics_and_tasks.json")["tasks"]]


def topics() -> list[str]:
    """The 16 topics as `A - B` (file-name form, root 金融 stripped) in upstream id order."""
    return [t["file_prefix"] for t in data_file("topics_and_tasks.json")["topics"]]


def english() -> dict[str, str]:
    """Chinese task/topic name -> the paper's English name."""
    data = data_file("topics_and_tasks.json")
    return {
        **{t["task_name"]: t["english"] for t in data["tasks"]},
        **{t["file_prefix"]: t["english"] for t in data["topics"]},
    }


def skipped(topic: str, task: str) -> bool:
    """upstream evaluator/judgement/judger.py drops the legacy task and topics before scoring."""
    skip = data_file("topics_and_tasks.json")["skipped_by_judge"]
    return task in skip["tasks"] or topic in skip["topics"]


def select(kind: str, value: str | list[str] | None, names: list[str]) -> list[str] | None:
    """Parse a `tasks=`/`topics=` task argument: comma-separated exact names, upstream ids or
    English names. None: all."""
    if value is None or value == "" or value == "all":
        return None
    items = value if isinstance(value, list) else str(value).split(",")
    by_english = {v.lower(): k for k, v in english().items()}
    chosen = []
    for item in (str(i).strip() for i in items):
        if item in names:
            chosen.append(item)
        elif item.isdigit() and int(item) < len(names):
            chosen.append(names[int(item)])
        elif by_english.get(item.lower()) in names:
            chosen.append(by_english[item.lower()])
        else:
            raise ConfigError(
                f"omnieval {kind}: '{item}' is not one of {', '.join(names)} "
                f"(or their ids 0-{len(names) - 1} / English names)"
            )
    return chosen
