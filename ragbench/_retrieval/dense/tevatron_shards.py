"""Tevatron's index shards read without running code: the `(embeddings, docids)` pickles its encode driver writes
(`pickle.dump((encoded, lookup_indices), f)`, BrowseComp-Plus's prebuilt `corpus.shard*.pkl`), or their safe form,
a `.npz` of `embeddings` and `docids` read with pickles off.

A pickle can call any function it names, so the reader names the only ones such a shard holds: numpy's array
rebuilding (`numpy._core.multiarray._reconstruct`, `numpy.ndarray`, `numpy.dtype`, numpy 1's `numpy.core`
spellings, protocol 5's `_frombuffer`, the latin-1 `_codecs.encode` and empty `bytes()` of protocols 0 to 2), a
dtype being a number's. Anything else is refused before it is called, with the command that converts a file one
trusts into the `.npz` form.
"""

from __future__ import annotations

import glob
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from ..._errors import ConfigError

SHARD_SUFFIXES = (".pkl", ".npz")
RECONSTRUCT = np.zeros(0).__reduce__()[0]  # numpy's _reconstruct, whichever module this numpy keeps it in
ARRAY_GLOBALS = {
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.numeric", "_frombuffer"),
    ("numpy.core.numeric", "_frombuffer"),
}


def convert_command(path: Path) -> str:
    """The command that rewrites a trusted pickle shard as the .npz ragbench reads with pickles off."""
    return (
        "python -c \"import pickle, sys, numpy as np; reps, ids = pickle.load(open(sys.argv[1], 'rb')); "
        'np.savez(sys.argv[2], embeddings=np.asarray(reps, dtype=np.float32), docids=np.asarray(ids, dtype=str))" '
        f"{path} {path.with_suffix('.npz')}"
    )


def number_dtype(*args: Any) -> np.dtype:
    """`numpy.dtype` as a pickle calls it, for numbers only (an object dtype would rebuild arbitrary objects)."""
    dtype: np.dtype = np.dtype(*args)
    if dtype.kind not in "fiub":
        raise pickle.UnpicklingError(f"numpy.dtype {dtype}")
    return dtype


class ShardUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in ARRAY_GLOBALS:
            return RECONSTRUCT if name == "_reconstruct" else frombuffer
        if (module, name) == ("numpy", "ndarray"):
            return np.ndarray
        if (module, name) == ("numpy", "dtype"):
            return number_dtype
        if (module, name) == ("_codecs", "encode"):  # protocols 0 to 2 write an array's bytes as latin-1 text
            return latin1_bytes
        if (module, name) in (("__builtin__", "bytes"), ("builtins", "bytes")):  # and no bytes as bytes()
            return empty_bytes
        raise pickle.UnpicklingError(f"{module}.{name}")


def latin1_bytes(text: str, encoding: str) -> bytes:
    if encoding != "latin1":
        raise pickle.UnpicklingError(f"_codecs.encode to {encoding}")
    return text.encode("latin1")


def empty_bytes(*args: Any) -> bytes:
    if args:  # bytes(n) would allocate n bytes
        raise pickle.UnpicklingError("builtins.bytes with arguments")
    return b""


def frombuffer(buffer: Any, dtype: np.dtype, shape: tuple[int, ...], order: Any) -> np.ndarray:
    """Protocol 5's array rebuilding (numpy's `_frombuffer`), its dtype already checked by `number_dtype`."""
    return np.frombuffer(buffer, dtype=dtype).reshape(shape, order=order)


def read_pickle(path: Path) -> tuple[Any, Any]:
    try:
        with open(path, "rb") as handle:
            loaded = ShardUnpickler(handle).load()
    except pickle.UnpicklingError as exc:
        raise ConfigError(
            f"index shard {path} holds {exc}, which Tevatron's (embeddings, docids) shards never hold: refused "
            f"unread (a pickle runs what it names). If you trust the file, convert it: {convert_command(path)}"
        ) from None
    except (EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError, OSError, MemoryError) as exc:
        raise ConfigError(
            f"index shard {path} could not be read ({type(exc).__name__}: {exc}); it is truncated or no Tevatron "
            "shard: download or encode it again"
        ) from None
    if not (isinstance(loaded, tuple) and len(loaded) == 2):
        raise ConfigError(
            f"index shard {path} holds a {type(loaded).__name__}, not Tevatron's (embeddings, docids) pair; "
            "pass the encode driver's .pkl files"
        )
    return loaded


def read_npz(path: Path) -> tuple[Any, Any]:
    try:
        with np.load(path, allow_pickle=False) as saved:
            return saved["embeddings"], saved["docids"].tolist()
    except (KeyError, ValueError, OSError) as exc:
        raise ConfigError(
            f"index shard {path} could not be read ({type(exc).__name__}: {exc}); a .npz shard holds arrays "
            f"`embeddings` and `docids`, as this command writes from a trusted .pkl: {convert_command(path)}"
        ) from None


def read_shard(path: Path) -> tuple[np.ndarray, list[str]]:
    """One shard's float32 embeddings (a row per docid) and docids, checked to match."""
    embeddings, docids = read_npz(path) if path.suffix == ".npz" else read_pickle(path)
    if not isinstance(embeddings, np.ndarray) or embeddings.ndim != 2 or embeddings.dtype.kind != "f":
        raise ConfigError(
            f"index shard {path}: its embeddings are not a 2-D float array; pass Tevatron's encode output"
        )
    if not isinstance(docids, list) or not all(isinstance(docid, str) for docid in docids):
        raise ConfigError(f"index shard {path}: its docids are not a list of strings; pass Tevatron's encode output")
    if len(docids) != len(embeddings):
        raise ConfigError(
            f"index shard {path} holds {len(embeddings)} embeddings and {len(docids)} docids; it is damaged: "
            "download or encode it again"
        )
    return np.ascontiguousarray(embeddings, dtype=np.float32), docids


def shard_paths(index: str) -> list[Path]:
    """The shards `index` names, in name order: a glob pattern (BrowseComp-Plus's `corpus.shard*.pkl`), a file, or a
    folder's .pkl and .npz files."""
    folder = Path(index).expanduser()
    if folder.is_dir():
        found = [path for path in folder.iterdir() if path.suffix in SHARD_SUFFIXES and path.is_file()]
    else:
        found = [Path(name) for name in glob.glob(str(folder))]
    paths = sorted(path for path in found if path.suffix in SHARD_SUFFIXES)
    if not paths:
        raise ConfigError(
            f"index {index}: no .pkl or .npz shard found; pass index= the shards' glob pattern, e.g. "
            "'indexes/qwen3-embedding-8b/corpus.shard*.pkl', or their folder"
        )
    return paths
