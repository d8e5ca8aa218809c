"""The prefix-cache path's cache layer (ragbench._engines.hf.roomy_cache): its states are those transformers'
DynamicLayer would hold after the same updates, row selections and dropped columns, growing in place."""

from __future__ import annotations

from typing import TYPE_CHECKING

from conftest import needs

if TYPE_CHECKING:
    import torch

pytestmark = needs("torch", "transformers")  # imported by the test, not while collecting


def states(rows: int, columns: int, start: float) -> torch.Tensor:
    import torch

    return torch.arange(rows * 2 * columns * 3, dtype=torch.float32).reshape(rows, 2, columns, 3) + start


def test_updates_selections_and_dropped_columns_match_a_dynamic_layer():
    import torch
    from transformers.cache_utils import DynamicLayer

    from ragbench._engines.hf.roomy_cache import RoomyLayer

    keys, values = states(3, 4, 0), states(3, 4, 1000)
    room = torch.zeros(3, 2, 6, 3)
    room[:, :, :4] = keys
    other = room.clone()
    other[:, :, :4] = values
    roomy = RoomyLayer(room, other, 4)
    dynamic = DynamicLayer()
    dynamic.update(keys, values)
    for step in range(5):  # 2 columns of room: the third update grows the buffers
        new_keys, new_values = states(len(dynamic.keys), 1, 100 * step), states(len(dynamic.keys), 1, -100 * step)
        got, expected = roomy.update(new_keys, new_values), dynamic.update(new_keys, new_values)
        assert all(torch.equal(a, b) for a, b in zip(got, expected))
        if step == 1:
            roomy.batch_select_indices(torch.tensor([0, 2]))
            dynamic.batch_select_indices(torch.tensor([0, 2]))
        if step == 3:
            roomy.drop_leading(2)
            dynamic.keys, dynamic.values = dynamic.keys[:, :, 2:], dynamic.values[:, :, 2:]
        assert torch.equal(roomy.keys, dynamic.keys) and torch.equal(roomy.values, dynamic.values)
        assert roomy.get_seq_length() == dynamic.get_seq_length()
    written = roomy.buffers[0].data_ptr()
    roomy.update(states(2, 1, 7), states(2, 1, 8))
    assert roomy.buffers[0].data_ptr() == written  # in place while there is room
