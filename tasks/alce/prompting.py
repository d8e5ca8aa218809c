"""ALCE prompt assembly, byte-exact with princeton-nlp/ALCE run.py and utils.py (commit 246c476).

Prompt files (prompts/*.json, copied from ALCE with its MIT license beside them) are data:
`instruction`, `demo_sep`, `demo_prompt`, `doc_prompt`, `demos`. The quirks kept:
- demos are `np.random.choice(len(demos), shot, replace=False)` after `np.random.seed(seed)`
  (legacy RNG; seed 42 picks [1] for one shot, [1, 3] for two);
- every field is filled by plain `str.replace` in upstream's order ({INST}, {Q}, {D}, {A};
  doc lines {T}, {P}, {ID});
- ndoc 0 deletes "{D}\\n"; otherwise each rendered doc ends with "\\n", so an empty line precedes
  "Answer:";
- a demo's "{A}" is deleted, the prompt `rstrip()`ed and the answer appended directly
  ("Answer:Several places..."); the test item ends with "Answer:".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TypedDict

import numpy as np

from ragbench.api import ConfigError, Document

VARIANTS = ("default", "light_inst", "closedbook", "sum_or_ext")
SHORTER_FIELDS = ("summary", "extraction")


class AlceDemo(TypedDict):
    """A demonstration of a prompt file: its question, its answer (citations in it) and its documents (each a
    title and text, some with ALCE's summary and extraction)."""

    question: str
    answer: str
    docs: list[dict[str, str]]


@dataclass(frozen=True)
class PromptFile:
    instruction: str
    demo_sep: str
    demo_prompt: str
    doc_prompt: str
    demos: tuple[AlceDemo, ...]

    @property
    def shows_documents(self) -> bool:
        return "{D}" in self.demo_prompt


@cache
def load_prompt_file(dataset: str, variant: str) -> PromptFile:
    if variant not in VARIANTS:
        raise ConfigError(f"task alce_{dataset}: variant '{variant}' is not one of {', '.join(VARIANTS)}")
    prompts = resources.files(__package__).joinpath("prompts")
    text = prompts.joinpath(f"{dataset}_{variant}.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return PromptFile(
        data["instruction"], data["demo_sep"], data["demo_prompt"], data["doc_prompt"], tuple(data["demos"])
    )


def choose_demos(count: int, shot: int, seed: int) -> list[int]:
    """run.py: `np.random.seed(seed)` then `np.random.choice(count, shot, replace=False)`."""
    return [int(i) for i in np.random.RandomState(seed).choice(count, shot, replace=False)]


def shorter_docs(docs: list[Document], key: str) -> list[Document]:
    """utils.py `get_shorter_text` without the ndoc cut (a prefix of this list is upstream's list
    for any ndoc): docs in rank order up to the first one lacking `key` (that one is used with
    its full text if nothing came before it), skipping those whose `key` mentions
    "irrelevant"/"Irrelevant"."""
    out: list[Document] = []
    for doc in docs:
        if key not in doc.metadata:
            if not out:
                out.append(Document(doc.id, doc.title, doc.text, doc.url, doc.score, {**doc.metadata, key: doc.text}))
            break
        if "irrelevant" in doc.metadata[key] or "Irrelevant" in doc.metadata[key]:
            continue
        out.append(doc)
    return out


def doc_line(doc_prompt: str, doc: Document, position: int, use_shorter: str | None) -> str:
    """utils.py `make_doc_prompt`."""
    text = doc.metadata[use_shorter] if use_shorter is not None else doc.text
    return doc_prompt.replace("{T}", doc.title).replace("{P}", text).replace("{ID}", str(position + 1))


def fill(
    prompt_file: PromptFile,
    question: str,
    docs: list[Document],
    ndoc: int,
    use_shorter: str | None,
    answer: str | list[str] | None = None,
) -> str:
    """utils.py `make_demo` for a demo (answer given) or the test item (answer None); `docs`
    are the documents to show, already cut to ndoc (and filtered for use_shorter)."""
    prompt = prompt_file.demo_prompt.replace("{INST}", prompt_file.instruction).replace("{Q}", question)
    if "{D}" in prompt:
        if ndoc == 0:
            prompt = prompt.replace("{D}\n", "")
        else:
            text = "".join(doc_line(prompt_file.doc_prompt, doc, i, use_shorter) for i, doc in enumerate(docs))
            prompt = prompt.replace("{D}", text)
    prompt = prompt.replace("{A}", "").rstrip()
    if answer is None:
        return prompt
    return prompt + ("\n" + "\n".join(answer) if isinstance(answer, list) else answer)


def demo_documents(demo: AlceDemo, ndoc: int, use_shorter: str | None) -> list[Document]:
    docs = [Document.from_dict(d) for d in demo.get("docs", [])]
    return (shorter_docs(docs, use_shorter) if use_shorter is not None else docs)[:ndoc]


@cache
def head_prompt(dataset: str, variant: str, shot: int, ndoc: int, seed: int, use_shorter: str | None) -> str:
    """run.py: the chosen demos, each followed by demo_sep."""
    prompt_file = load_prompt_file(dataset, variant)
    if shot > len(prompt_file.demos):
        raise ConfigError(f"task alce_{dataset}: shot={shot} but the prompt file has {len(prompt_file.demos)} demos")
    parts = []
    for index in choose_demos(len(prompt_file.demos), shot, seed):
        demo = prompt_file.demos[index]
        parts.append(
            fill(
                prompt_file,
                demo["question"],
                demo_documents(demo, ndoc, use_shorter),
                ndoc,
                use_shorter,
                demo["answer"],
            )
            + prompt_file.demo_sep
        )
    return "".join(parts)
