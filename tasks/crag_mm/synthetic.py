"""Stand-ins for what CRAG-MM's scoring and tasks read and ragbench does not ship: a tokenizer cut like
Llama-3.2's, and small datasets in the hub's v0.1.2 layout with generated PNG images (tests, demos)."""

from __future__ import annotations

import os
from pathlib import Path

# Llama-3.2's tokenizer.json (meta-llama/Llama-3.2-1B-Instruct): 128,000 regular tokens and 256 special ones;
# every encoding starts with <|begin_of_text|> (its post-processor).
LLAMA32_VOCAB_SIZE = 128256
LLAMA32_BOS = ("<|begin_of_text|>", 128000)


def standin_llama32_tokenizer(folder: Path) -> Path:
    """A stand-in for the Llama-3.2 tokenizer (one token per byte after <|begin_of_text|>, saved as
    folder/tokenizer.json) with its BOS, vocabulary size and special-token handling, for runs whose outcome
    does not depend on where the 75-token cut falls in a real word."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

    if not (folder / "tokenizer.json").is_file():
        alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
        vocab = {symbol: i for i, symbol in enumerate(alphabet)}
        vocab.update({f"<filler{i}>": i for i in range(len(alphabet), LLAMA32_BOS[1])})
        vocab.update({f"<|reserved_special_token_{i}|>": LLAMA32_BOS[1] + i for i in range(1, 256)})
        vocab[LLAMA32_BOS[0]] = LLAMA32_BOS[1]
        tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
        tokenizer.add_special_tokens([AddedToken(LLAMA32_BOS[0], special=True)])
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tokenizer.decoder = decoders.ByteLevel()
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{LLAMA32_BOS[0]} $A", special_tokens=[LLAMA32_BOS]
        )
        folder.mkdir(parents=True, exist_ok=True)
        scratch = folder / f"tokenizer.json.{os.getpid()}"
        tokenizer.save(str(scratch))
        os.replace(scratch, folder / "tokenizer.json")
    return folder
