"""This folder's own registrations (the tasks package's hooks gather every folder's): CRAG's kind of gold,
for YAML tasks' `fields.gold`."""

from ragbench.api import hookimpl


@hookimpl
def ragbench_gold_kinds() -> dict[str, dict[str, str]]:  # {name: {"target", "description"}}
    return {
        "crag_answer": {
            "target": "ragbench.tasks.crag.gold:CragAnswer",
            "description": "CRAG's answer (one text) and alt_ans (its alternatives), read as references in that order",
        }
    }
