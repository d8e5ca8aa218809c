"""This folder's own registrations (the tasks package's hooks gather every folder's): the record formats of
FlashRAG's and WebQuestions' files, for YAML tasks' `data.format`."""

from ragbench.api import hookimpl


@hookimpl
def ragbench_record_formats() -> dict[str, dict[str, str]]:  # {name: {"target", "description"}}
    return {
        "flashrag": {
            "target": "ragbench.tasks.open_qa.formats:FlashragFormat",
            "description": "FlashRAG's JSONL (golden_answers the gold answers; a multiple-choice record's "
            "indexes into its choices)",
        },
        "webquestions": {
            "target": "ragbench.tasks.open_qa.formats:WebQuestionsFormat",
            "description": "WebQuestions' release JSON (the descriptions of targetValue as the answers)",
        },
    }
