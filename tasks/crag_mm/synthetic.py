"""Stand-ins for what CRAG-MM's scoring and tasks read and ragbench does not ship: a tokenizer cut like
Llama-3.2's, and small datasets in the hub's v0.1.2 layout with generated PNG images (tests, demos)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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


# The class names of the v0.1.2 turns' labels (the hub dataset card's dataset_info)
DOMAINS = (
    "animal",
    "other",
    "shopping",
    "book",
    "general object recognition",
    "local",
    "vehicle",
    "plants and gardening",
    "style and fashion",
    "food",
    "text understanding",
    "sports and games",
    "math and science",
)
QUERY_CATEGORIES = ("reasoning", "simple-knowledge", "comparison", "simple-recognition", "multi-hop", "aggregation")
DYNAMISMS = ("fast-changing", "static", "slow-changing", "real-time")
IMAGE_QUALITIES = ("rotated", "truncated", "occluded", "low light", "blurred", "normal")


def hub_features() -> Any:
    """The v0.1.2 features: `turns` and `answers` are sequences of structs (read back as dicts of columns)."""
    from datasets import ClassLabel, Features, Image, Sequence, Value

    turn = {
        "interaction_id": Value("string"),
        "domain": ClassLabel(names=list(DOMAINS)),
        "query_category": ClassLabel(names=list(QUERY_CATEGORIES)),
        "dynamism": ClassLabel(names=list(DYNAMISMS)),
        "query": Value("string"),
        "image_quality": ClassLabel(names=list(IMAGE_QUALITIES)),
    }
    answer = {"interaction_id": Value("string"), "ans_full": Value("string")}
    return Features(
        {
            "session_id": Value("string"),
            "image": Image(),
            "image_url": Value("string"),
            "turns": Sequence(turn),
            "answers": Sequence(answer),
        }
    )


def write_dataset(folder: Path, rows: list[dict[str, Any]], layout: str = "hub", split: str = "validation") -> Path:
    """`rows` (the hub's columns; turns / answers as lists of dicts) saved as the hub repository's files
    (`hub`: README.md and data/<split>-00000-of-00001.parquet, what `huggingface-cli download` gives), a
    `save_to_disk` folder (`saved`) or one Parquet file (`parquet`); returns what --data names."""
    from datasets import Dataset, DatasetDict

    columns = {name: [row.get(name) for row in rows] for name in ("session_id", "image", "image_url")}
    for name in ("turns", "answers"):
        columns[name] = [{key: [item[key] for item in row[name]] for key in row[name][0]} for row in rows]
    dataset = Dataset.from_dict(columns, features=hub_features())
    folder.mkdir(parents=True, exist_ok=True)
    if layout == "saved":
        DatasetDict({split: dataset}).save_to_disk(str(folder))
        return folder
    if layout == "parquet":
        dataset.to_parquet(str(folder / f"{split}.parquet"))
        return folder / f"{split}.parquet"
    (folder / "data").mkdir(exist_ok=True)
    dataset.to_parquet(str(folder / "data" / f"{split}-00000-of-00001.parquet"))
    (folder / "README.md").write_text(
        f"---\nconfigs:\n- config_name: default\n  data_files:\n  - split: {split}\n    path: data/{split}-*\n---\n",
        encoding="utf-8",
    )
    return folder


if __name__ == "__main__":  # `python -m ragbench.tasks.crag_mm.synthetic DIR`: the stand-in tokenizer, for a trial
    import sys

    if len(sys.argv) != 2:
        sys.exit("usage: python -m ragbench.tasks.crag_mm.synthetic DIR (writes DIR/tokenizer.json, the stand-in)")
    written = standin_llama32_tokenizer(Path(sys.argv[1])) / "tokenizer.json"
    print(f"{written}: ragbench's stand-in for the Llama-3.2 tokenizer (one token a byte; not the real cut)")
