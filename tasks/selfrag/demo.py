"""The demo task: 24 short questions with their own passages, written for ragbench, in PopQA's
format. It ships with the package so a first run needs no download."""
from __future__ import annotations

from importlib import resources

from .tasks import PopQA


class Demo(PopQA):
    name = "demo"
    filename = "demo_qa.jsonl"
    metrics = ("match", "match_normalized", "em", "f1")

    def __init__(self, data_path=None, **args) -> None:
        super().__init__(data_path or resources.files(__package__).joinpath("data", self.filename), **args)
