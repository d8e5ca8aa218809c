"""chromadb's search of a persisted HNSW segment, walked as hnswlib walks it (`searchKnn`): greedy descent from the
entry point through the upper levels (`link_lists.bin`), then the best-first search of level 0 with
`ef = max(ef_search, k)` (chromadb's default ef_search is 100), deleted elements walked through but not returned,
ties broken as hnswlib's priority queues break them (the larger internal id first out). Distances are cosine
distances of unit vectors, `1 - dot` in float32.
"""

from __future__ import annotations

import heapq
import struct
from pathlib import Path

import numpy as np

# chroma-hnswlib's header.bin: its persistence version (int, 1), then hnswlib's saveIndex header: offsetLevel0,
# max_elements, cur_element_count, size_data_per_element, label_offset, offsetData (size_t each), maxlevel (int),
# enterpoint_node (unsigned int), maxM, maxM0, M (size_t) ...
HEADER = struct.Struct("<iQQQQQQiIQQQ")
DELETED = 1  # the flag in the third byte of an element's level-0 list header


class HnswGraph:
    """A segment's graph: the mapped `data_level0.bin` (each element's level-0 links, vector, label) and the upper
    levels' links."""

    def __init__(self, folder: Path, ef_search: int) -> None:
        header = HEADER.unpack_from((folder / "header.bin").read_bytes())
        version, offset0, _, count, size, label_offset, data_offset, self.top_level, self.entry, max_m, max_m0, _ = (
            header
        )
        if version != 1 or offset0 != 0:
            raise ValueError(f"header.bin: persistence version {version}, level-0 offset {offset0} (known: 1, 0)")
        self.count, self.ef_search = count, ef_search
        mapped = np.memmap(folder / "data_level0.bin", dtype=np.uint8, mode="r", shape=(count * size,))
        dim = (label_offset - data_offset) // 4
        self.vectors = np.ndarray((count, dim), dtype="<f4", buffer=mapped, offset=data_offset, strides=(size, 4))
        self.labels = np.ndarray((count,), dtype="<u8", buffer=mapped, offset=label_offset, strides=(size,))
        self.sizes = np.ndarray((count,), dtype="<u2", buffer=mapped, offset=0, strides=(size,))
        self.flags = np.ndarray((count,), dtype=np.uint8, buffer=mapped, offset=2, strides=(size,))
        self.links = np.ndarray((count, max_m0), dtype="<u4", buffer=mapped, offset=4, strides=(size, 4))
        self.upper = upper_links(folder / "link_lists.bin", count, max_m) if count else {}

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, np.float32]]:
        """The `k` nearest elements (their internal ids) and their distances, nearest first."""
        if self.count == 0 or k <= 0:
            return []
        current, best = self.entry, self.distances(query, np.array([self.entry]))[0]
        for level in range(self.top_level, 0, -1):
            changed = True
            while changed:
                changed = False
                neighbours = self.upper[current][level - 1]
                for neighbour, distance in zip(neighbours.tolist(), self.distances(query, neighbours)):
                    if distance < best:
                        best, current, changed = distance, neighbour, True
        return self.base_layer(query, current, best, max(self.ef_search, k))[:k]

    def base_layer(self, query: np.ndarray, start: int, distance: np.float32, ef: int) -> list[tuple[int, np.float32]]:
        visited = {start}
        top: list[tuple[np.float32, int]] = []  # the ef best: a max-heap as (-distance, -id)
        bound = np.float32(np.inf)  # a deleted entry point bounds nothing
        if not self.deleted(start):
            top.append((-distance, -start))
            bound = distance
        candidates = [(distance, -start)]  # to expand: a min-heap as (distance, -id)
        while candidates:
            nearest, negative = candidates[0]
            if nearest > bound and len(top) == ef:
                break
            heapq.heappop(candidates)
            element = -negative
            fresh = [int(j) for j in self.links[element, : self.sizes[element]] if int(j) not in visited]
            visited.update(fresh)
            for neighbour, found in zip(fresh, self.distances(query, np.array(fresh, dtype=np.int64))):
                if len(top) < ef or bound > found:
                    heapq.heappush(candidates, (found, -neighbour))
                    if not self.deleted(neighbour):
                        heapq.heappush(top, (-found, -neighbour))
                    if len(top) > ef:
                        heapq.heappop(top)
                    if top:
                        bound = -top[0][0]
        ranked = sorted((-negative_distance, -negative_id) for negative_distance, negative_id in top)
        return [(element, found) for found, element in ranked]

    def deleted(self, element: int) -> bool:
        return bool(self.flags[element] & DELETED)

    def distances(self, query: np.ndarray, elements: np.ndarray) -> np.ndarray:
        if len(elements) == 0:
            return np.zeros(0, dtype=np.float32)
        result: np.ndarray = np.float32(1) - self.vectors[elements] @ query
        return result


def upper_links(path: Path, count: int, max_m: int) -> dict[int, list[np.ndarray]]:
    """Each element's links on levels 1 and up (`link_lists.bin`: per element, its block's size, then one list a
    level, each a count and `maxM` slots); elements on level 0 alone are absent."""
    raw = path.read_bytes()
    per_level = max_m * 4 + 4
    upper: dict[int, list[np.ndarray]] = {}
    position = 0
    for element in range(count):
        (length,) = struct.unpack_from("<I", raw, position)
        position += 4
        if length:
            upper[element] = [
                np.frombuffer(
                    raw,
                    dtype="<u4",
                    count=struct.unpack_from("<H", raw, position + level * per_level)[0],
                    offset=position + level * per_level + 4,
                )
                for level in range(length // per_level)
            ]
            position += length
    return upper
