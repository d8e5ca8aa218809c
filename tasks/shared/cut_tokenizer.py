"""Where a benchmark's scoring finds the tokenizer it cuts answers with (CRAG's Llama-2, CRAG-MM's Llama-3.2): one
value of its facts, beside the metric that cuts."""

from __future__ import annotations

from dataclasses import dataclass

from ragbench.api.data import find_tokenizer_dir


@dataclass(frozen=True)
class CutTokenizer:
    """--task-arg tokenizer=DIR, else $`env`, else DATA_DIR/`folder`; `needs` says why the task needs it and
    `source` where the user gets it."""

    env: str
    folder: str
    needs: str
    source: str

    def find(self, task: str, given: str | None) -> str:
        """The first of `given`, $`env` and DATA_DIR/`folder` holding a tokenizer.json; else one line saying how."""
        return find_tokenizer_dir(task, given, self.env, self.folder, self.needs, self.source)
