"""A 2-D .npy file written row block by row block (a dense index's embeddings.npy)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


class NpyAppender:
    """A 2-D .npy written row block by row block, its length unknown until the end.

    numpy pads every header for in-place growth of the first axis, so the header written with
    0 rows is rewritten at the same length with the final count."""

    def __init__(self, path: Path, dtype: str, dim: int) -> None:
        self.handle = open(path, "wb")  # noqa: SIM115 (held open, closed by close())
        self.header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False}
        self.dtype, self.dim, self.rows = np.dtype(dtype), dim, 0
        np.lib.format.write_array_header_1_0(self.handle, {**self.header, "shape": (0, dim)})
        self.data_start = self.handle.tell()

    def append(self, block: np.ndarray) -> None:
        self.handle.write(np.ascontiguousarray(block, dtype=self.dtype).tobytes())
        self.rows += len(block)

    def close(self) -> None:
        self.handle.seek(0)
        np.lib.format.write_array_header_1_0(self.handle, {**self.header, "shape": (self.rows, self.dim)})
        if self.handle.tell() != self.data_start:
            raise RuntimeError("npy header changed length")  # numpy's growth padding makes this impossible
        self.handle.close()
