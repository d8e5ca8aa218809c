"""This folder's own registrations (the tasks package's hooks gather every folder's): the record format of
SQuAD's JSON, for YAML tasks' `data.format`."""

from ragbench.api import hookimpl


@hookimpl
def ragbench_record_formats() -> dict[str, dict[str, str]]:  # {name: {"target", "description"}}
    return {
        "squad": {
            "target": "ragbench.tasks.selfrag.formats:SquadFormat",
            "description": "SQuAD v1.1 JSON, one record per question, its paragraph as a passage",
        }
    }
