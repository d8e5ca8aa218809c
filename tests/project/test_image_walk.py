"""The image walk (tools/image_walk.py): a CRAG-MM row's picture reaches the OpenAI request body and the cache key
through at most 12 modules, each entered once (issue 99), counted as strictly as the tool's docstring says: every
call on the picture in the project's source, property reads and generator resumes included."""

from __future__ import annotations

import functools
import importlib.util
import io
from pathlib import Path
from types import ModuleType

from ragbench.api import Image, user_turn
from ragbench.api.engines import Request

REPO = Path(__file__).resolve().parents[2]
IMAGES = "ragbench/_values/images.py"


@functools.cache
def image_walk() -> ModuleType:
    spec = importlib.util.spec_from_file_location("image_walk", REPO / "tools" / "image_walk.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_pictures_walk_from_its_row_to_the_body_and_key_enters_at_most_12_modules_each_once():
    walk = image_walk().crag_mm_walk("open")  # the task's default agent (VlmAgent): the row's picture as it is
    assert len(walk.modules) <= 12, walk.sequence
    assert walk.reentered == [], walk.sequence
    assert walk.sequence[0] == "tasks/crag_mm/records.py"  # from the Parquet row ...
    assert walk.sequence[-1] == "ragbench/_engines/chat_messages.py"  # ... to the body's data URL
    assert "data_url" in walk.functions[-1] and "Request.cache_key" in sum(walk.functions, [])


def test_the_api_agents_walk_enters_the_image_module_again_only_to_make_their_jpeg():
    walk = image_walk().crag_mm_walk("closed")  # the API agents send the picture saved anew as a JPEG
    assert len(walk.modules) <= 12, walk.sequence
    assert walk.reentered == [IMAGES], walk.sequence
    again = [i for i, module in enumerate(walk.sequence) if module == IMAGES][1]
    assert walk.sequence[again - 1] == "tasks/crag_mm/agent_formats.py" and "as_jpeg" in walk.functions[again - 1]


def test_the_walk_counts_a_call_back_into_a_module_by_a_method_or_a_repr():
    from PIL import Image as PILImage

    png = io.BytesIO()
    PILImage.new("RGB", (4, 3), (1, 2, 3)).save(png, format="PNG")
    picture = Image.of(png.getvalue())
    turn = user_turn("What?", [picture])

    def steps() -> None:
        request = Request.chat([turn])
        repr(picture)  # Image.__repr__: a call into the image's module on the picture
        request.cache_key("e")

    walk = image_walk().profiled(steps)
    assert walk.sequence == ["ragbench/_values/llm_request.py", IMAGES, "ragbench/_values/llm_request.py"]
    assert walk.reentered == ["ragbench/_values/llm_request.py"]
