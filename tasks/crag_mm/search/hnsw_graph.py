"""chromadb's search of a persisted HNSW segment, walked as hnswlib walks it (`searchKnn`): greedy descent from the
entry point through the upper levels (`link_lists.bin`), then the best-first search of level 0 with
`ef = max(ef_search, k)` (chromadb's default ef_search is 100), deleted elements walked through but not returned,
ties broken as hnswlib's priority queues break them (the larger internal id first out). Distances are cosine
distances of unit vectors, `1 - dot` in float32.

A graph whose files do not hold together is a `GraphDamage` naming the file and what is wrong: the header, the
files' sizes and the upper levels' links (`link_lists.bin`, small) when it is opened; an element's level-0 links
(`data_level0.bin`, which is mapped, not read: reading them all would read the whole file) when a search reaches it.
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
LABEL_BYTES = 8  # an element's label (size_t), after its vector


class GraphDamage(ValueError):
    """A file of the graph that hnswlib did not write so: `file` (its path) and what is wrong with it."""

    def __init__(self, file: Path, problem: str) -> None:
        self.file, self.problem = file, problem
        super().__init__(f"{file}: {problem}")


class HnswGraph:
    """A segment's graph: the mapped `data_level0.bin` (each element's level-0 links, vector, label) and the upper
    levels' links."""

    def __init__(self, folder: Path, ef_search: int) -> None:
        header_path, level0 = folder / "header.bin", folder / "data_level0.bin"
        raw = header_path.read_bytes()
        if len(raw) < HEADER.size:
            raise GraphDamage(header_path, f"{len(raw)} bytes, shorter than hnswlib's header ({HEADER.size})")
        header = HEADER.unpack_from(raw)
        version, offset0, capacity, count, size, label_offset, data_offset, top, entry, max_m, max_m0, _ = header
        if version != 1 or offset0 != 0:
            raise ValueError(f"header.bin: persistence version {version}, level-0 offset {offset0} (known: 1, 0)")
        problem = header_problem(capacity, count, size, label_offset, data_offset, top, entry, max_m0)
        if problem:
            raise GraphDamage(header_path, problem)
        if level0.stat().st_size < count * size:
            raise GraphDamage(
                level0, f"{level0.stat().st_size} bytes, where the header's {count} elements take {count * size}"
            )
        self.count, self.ef_search, self.top_level, self.entry, self.max_m0 = count, ef_search, top, entry, max_m0
        self.level0 = level0
        mapped = np.memmap(level0, dtype=np.uint8, mode="r", shape=(count * size,))
        dim = (label_offset - data_offset) // 4
        self.vectors = np.ndarray((count, dim), dtype="<f4", buffer=mapped, offset=data_offset, strides=(size, 4))
        self.labels = np.ndarray((count,), dtype="<u8", buffer=mapped, offset=label_offset, strides=(size,))
        self.sizes = np.ndarray((count,), dtype="<u2", buffer=mapped, offset=0, strides=(size,))
        self.flags = np.ndarray((count,), dtype=np.uint8, buffer=mapped, offset=2, strides=(size,))
        self.links = np.ndarray((count, max_m0), dtype="<u4", buffer=mapped, offset=4, strides=(size, 4))
        self.upper = upper_links(folder / "link_lists.bin", count, max_m, top) if count else {}
        if count and top > 0 and len(self.upper.get(entry, ())) != top:
            levels = len(self.upper.get(entry, ()))
            raise GraphDamage(
                folder / "link_lists.bin", f"the entry point {entry} has {levels} upper levels, not {top}"
            )

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
            fresh = [int(j) for j in self.level0_links(element) if int(j) not in visited]
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

    def level0_links(self, element: int) -> np.ndarray:
        """The element's level-0 links, checked (a GraphDamage where they do not hold together)."""
        size = int(self.sizes[element])
        if size > self.max_m0:
            raise GraphDamage(
                self.level0, f"element {element} has {size} level-0 links, where at most {self.max_m0} fit"
            )
        links: np.ndarray = self.links[element, :size]
        if size and int(links.max()) >= self.count:
            raise GraphDamage(
                self.level0, f"element {element} links to element {int(links.max())}, beyond its {self.count} elements"
            )
        return links

    def deleted(self, element: int) -> bool:
        return bool(self.flags[element] & DELETED)

    def distances(self, query: np.ndarray, elements: np.ndarray) -> np.ndarray:
        if len(elements) == 0:
            return np.zeros(0, dtype=np.float32)
        result: np.ndarray = np.float32(1) - self.vectors[elements] @ query
        return result


def header_problem(
    capacity: int, count: int, size: int, label_offset: int, data_offset: int, top: int, entry: int, max_m0: int
) -> str | None:
    """What is wrong with hnswlib's header fields, where they do not hold together; None."""
    if data_offset != 4 + 4 * max_m0:
        return f"vectors at offset {data_offset} of an element, where {max_m0} level-0 links end at {4 + 4 * max_m0}"
    if label_offset <= data_offset or (label_offset - data_offset) % 4 or size != label_offset + LABEL_BYTES:
        return f"an element of {size} bytes with its label at {label_offset} and its vector at {data_offset}"
    if count > capacity:
        return f"{count} elements in an index of {capacity}"
    if count and not (top >= 0 and entry < count):
        return f"entry point {entry} on level {top}, of {count} elements"
    return None


def upper_links(path: Path, count: int, max_m: int, top: int) -> dict[int, list[np.ndarray]]:
    """Each element's links on levels 1 and up (`link_lists.bin`: per element, its block's size, then one list a
    level, each a count and `maxM` slots); elements on level 0 alone are absent. A block that does not fit, or a
    link beyond the elements, is a GraphDamage."""
    raw = path.read_bytes()
    per_level = max_m * 4 + 4
    upper: dict[int, list[np.ndarray]] = {}
    position = 0
    for element in range(count):
        if position + 4 > len(raw):
            raise GraphDamage(path, f"{len(raw)} bytes end before element {element}'s links (of {count})")
        (length,) = struct.unpack_from("<I", raw, position)
        position += 4
        if not length:
            continue
        if length % per_level or length // per_level > top or position + length > len(raw):
            raise GraphDamage(path, f"element {element}'s upper links take {length} bytes, which do not fit")
        levels = []
        for level in range(length // per_level):
            start = position + level * per_level
            (links,) = struct.unpack_from("<H", raw, start)
            found = np.frombuffer(raw, dtype="<u4", count=min(links, max_m), offset=start + 4)
            if links > max_m or (links and int(found.max()) >= count):
                raise GraphDamage(path, f"element {element}'s level {level + 1} links do not hold together")
            levels.append(found)
        upper[element] = levels
        position += length
    return upper
