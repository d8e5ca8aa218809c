"""A transformers cache layer for the `hf` engine's prefix-cache path (hf/prefill.py) whose states are the first
columns of buffers with room for the tokens still to be generated. transformers' DynamicLayer grows by
`torch.cat`, copying a row's every state at every step: with prompts of thousands of tokens that copy cost as much
as the attention itself. Here a step writes its column in place. Imported only once transformers is (hf_loading).
"""

from __future__ import annotations

from typing import Any

from transformers.cache_utils import DynamicLayer


class RoomyLayer(DynamicLayer):
    """Keys and values [batch, heads, columns, head dim]: the first `length` columns of `buffers`."""

    def __init__(self, keys: Any, values: Any, length: int) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # transformers leaves it unannotated
        self.device, self.is_initialized = keys.device, True
        self.buffers, self.length = (keys, values), length
        self._view()

    def _view(self) -> None:
        self.keys, self.values = (buffer[:, :, : self.length] for buffer in self.buffers)

    def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        end = self.length + key_states.shape[-2]
        if end > self.buffers[0].shape[2]:  # out of room: twice as much
            grown = []
            for buffer in self.buffers:
                bigger = buffer.new_empty((*buffer.shape[:2], 2 * end, buffer.shape[3]))
                bigger[:, :, : self.length] = buffer[:, :, : self.length]
                grown.append(bigger)
            self.buffers = (grown[0], grown[1])
        self.buffers[0][:, :, self.length : end] = key_states
        self.buffers[1][:, :, self.length : end] = value_states
        self.length = end
        self._view()
        return self.keys, self.values

    def crop(self, tokens_to_remove: int) -> None:
        """Forget the last -`tokens_to_remove` columns (a negative count, as transformers' `Cache.crop` gives)."""
        self.length -= abs(tokens_to_remove)
        self._view()

    def batch_select_indices(self, indices: Any) -> None:
        self.buffers = (self.buffers[0][indices], self.buffers[1][indices])
        self._view()

    def drop_leading(self, columns: int) -> None:
        """Forget the first `columns` columns (padding no row of the batch attends to any more)."""
        self.buffers = (self.buffers[0][:, :, columns:], self.buffers[1][:, :, columns:])
        self.length -= columns
        self._view()
