"""The image walk: the modules one picture passes through from a CRAG-MM Parquet row to the OpenAI request body and
the cache key, counted as issue 99 counts them ("at most 12 modules, each entered once").

    python tools/image_walk.py                  # the default agent (open): its module sequence and counts
    python tools/image_walk.py --agent closed   # the API agents' (the picture sent as a JPEG)
    python tools/image_walk.py --functions      # each entry's functions too

The walk: a one-row CRAG-MM dataset in the hub's layout (an egocentric PNG, written by the task's own
`synthetic.write_dataset`) read by `crag_mm_single` (`Task.examples`), the example's prompt (`answer_prompt`), the
request a system makes of it (`Request.chat`), the cache key the scheduler takes (`Request.cache_key` of the
engine's call identity) and the body the OpenAI engine sends to api.openai.com (`call_arguments`), each step
called as the run's code calls it; the run's machinery between them (the system, the context, the scheduler's
queues, retries) carries the request without looking into it and is left out.

What counts, strictly:
- a call is on the walk when its arguments (`self` included) hold the picture in any form: an `Image`, image bytes
  (by their first bytes), a PIL picture or a `data:image/` URL, found inside tuples, lists, sets, mappings and
  dataclass fields;
- every such call of a function whose code is in the project's source (ragbench/, tasks/, plugins/, metrics/) is
  counted: methods, properties and cached properties read of a frozen value, nested functions, lambdas, a
  generator's or coroutine's resume. The methods `dataclasses` generates (`__init__`, `__eq__`, `__hash__`,
  `__repr__` where the class writes none) have no source and are not; calls into libraries (Pillow, datasets,
  hashlib) are not;
- the module sequence is those calls' modules in order, a run of calls in one module one entry; a module is
  entered again when a call lands in it after a call in another module. A return is no entry, but a module that
  calls another and, after the return, one of its own functions on the picture, is entered twice.

The default agent's walk enters 11 modules once each. With `--agent closed` the image module is entered a second
time by the agent's own step: CRAG-MM's API agents send the picture saved anew as a JPEG
(tasks/crag_mm/agent_formats.py), a new image made from the row's and read as every image is (`Image.of`).
tests/project/test_image_walk.py holds both.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from types import FrameType
from typing import Any, NamedTuple

REPO = Path(__file__).resolve().parent.parent
SOURCES = tuple(f"{REPO / tree}{os.sep}" for tree in ("ragbench", "tasks", "plugins", "metrics"))
DEPTH = 6  # how deep a value is searched for the picture
AGENTS = ("open", "closed")  # CRAG-MM's VlmAgent (the picture as it is), the API agents (as a JPEG)


class Walk(NamedTuple):
    sequence: list[str]  # a module per entry, in order
    functions: list[list[str]]  # each entry's functions, in order

    @property
    def modules(self) -> list[str]:
        return list(dict.fromkeys(self.sequence))

    @property
    def reentered(self) -> list[str]:
        return [module for module in self.modules if self.sequence.count(module) > 1]


def holds_picture(value: object, depth: int = DEPTH) -> bool:
    """Whether `value` is or holds the picture in one of its forms."""
    from PIL import Image as PILImage

    from ragbench._values.images import Image, media_type_of

    if isinstance(value, (Image, PILImage.Image)):
        return True
    if isinstance(value, (bytes, bytearray, memoryview)):
        return media_type_of(bytes(value[:16])) is not None
    if isinstance(value, str):
        return value.startswith("data:image/")
    if depth == 0 or isinstance(value, type):
        return False
    if isinstance(value, Mapping):
        return any(holds_picture(item, depth - 1) for item in list(value.values())[:64])
    if isinstance(value, (tuple, list, set, frozenset)):
        return any(holds_picture(item, depth - 1) for item in list(value)[:64])
    if dataclasses.is_dataclass(value):
        return any(holds_picture(getattr(value, f.name, None), depth - 1) for f in dataclasses.fields(value))
    return False


def profiled(steps: Callable[[], object]) -> Walk:
    """The walk of the calls `steps` makes (`sys.setprofile`)."""
    sequence: list[str] = []
    functions: list[list[str]] = []

    def seen(frame: FrameType, event: str, arg: object) -> None:
        code = frame.f_code
        if event != "call" or not code.co_filename.startswith(SOURCES):
            return
        given = frame.f_locals
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        if not any(holds_picture(given.get(name)) for name in names):
            return
        module = os.path.relpath(code.co_filename, REPO)
        if not sequence or sequence[-1] != module:
            sequence.append(module)
            functions.append([])
        functions[-1].append(code.co_qualname)

    sys.setprofile(seen)
    try:
        steps()
    finally:
        sys.setprofile(None)
    return Walk(sequence, functions)


def crag_mm_walk(agent: str = "open") -> Walk:
    """A CRAG-MM row's picture from the Parquet file to the OpenAI body and the cache key (the module docstring)."""
    from PIL import Image as PILImage

    from ragbench._engines.hosted.openai import OpenAIEngine
    from ragbench.api.engines import Request
    from ragbench.tasks.crag_mm.synthetic import write_dataset
    from ragbench.tasks.crag_mm.task import CragMMSingle

    picture = io.BytesIO()
    PILImage.new("RGB", (48, 36), (200, 30, 60)).save(picture, format="PNG")
    turn = {"interaction_id": "i1", "domain": 0, "query_category": 3, "dynamism": 1, "query": "what is this?"}
    row = {
        "session_id": "walk-1",
        "image": {"bytes": picture.getvalue(), "path": None},
        "image_url": None,
        "turns": [{**turn, "image_quality": 5}],
        "answers": [{"interaction_id": "i1", "ans_full": "A red square."}],
    }
    with tempfile.TemporaryDirectory(prefix="ragbench-image-walk-") as folder:
        task = CragMMSingle(data_path=write_dataset(Path(folder), [row], layout="parquet"), agent=agent)
        task.path = task.resolve_data()  # `prepare` without the tokenizer, which only cuts the answer
        engine = OpenAIEngine("gpt-4o", base_url="https://api.openai.com/v1")
        made: dict[str, Any] = {}

        def steps() -> None:
            made["examples"] = task.examples()  # closed after the walk: its next resume reads the next row
            example = next(made["examples"])
            prompt = task.prompting.answer_prompt(example, None)
            request = made["request"] = Request.chat(prompt)
            made["key"] = request.cache_key(engine.call_identity(request.sampling))
            made["body"] = engine.call_arguments(request)[1]

        try:
            return profiled(steps)
        finally:
            made["examples"].close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", choices=AGENTS, default="open", help="CRAG-MM's agent (default: open)")
    parser.add_argument("--functions", action="store_true", help="each entry's functions too")
    args = parser.parse_args(argv)
    walk = crag_mm_walk(args.agent)
    for module, functions in zip(walk.sequence, walk.functions):
        print(f"{module}: {', '.join(dict.fromkeys(functions))}" if args.functions else module)
    again = f": {', '.join(walk.reentered)}" if walk.reentered else ""
    print(f"{len(walk.modules)} modules, {len(walk.sequence)} entries, {len(walk.reentered)} entered again{again}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
