"""The YAML-task engine, lm-evaluation-harness's central idea: a benchmark declared as a YAML file, no Python
(docs/yaml-tasks.md), becomes a Task like any other. Its parts: the file's schema (`spec`), the readers of local
files, FlashRAG's and SQuAD's layouts and Hugging Face datasets (`sources`, `hf`), the field mapping
(`fields`), Jinja2 prompt templates (`templates`), the post-processing filters (`filters`), the Task
class a file becomes (`task`) and its prompting (`prompting`), finding the files of a folder (`discovery`) and
reading a file's header alone (`header`: what listing and lookups by name read; the spec is read when the task loads).

`YamlTask`, `task_class` and `yaml_task_class` are imported on first use (Jinja2 loads with them), so that reading a
file's header or spec stays light."""

from typing import Any

__all__ = ["YamlTask", "task_class", "yaml_task_class"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import task

        return getattr(task, name)
    raise AttributeError(name)
