"""Records tests/data/parity/crag_mm_pictures.json: the picture CRAG-MM's CRAGTurnBatchIterator (facebookresearch/
CRAG-MM at 36b6b4bcd5405b440d9f0f6d74cef6f2fcace2be, utils/crag_batch_iterator.py, unchanged) hands its agent for
rows whose pictures a plain PNG does not cover: JPEGs with an EXIF Orientation tag (an egocentric photo, a row holding
both its picture and an image_url, a web picture from the download cache) and CMYK JPEGs (one turned as well).

The pictures are made here (Pillow gradients, not square, so that a turn and a resize show in the pixels) and kept in
the fixture as their bytes, base64: the test reads the very bytes upstream read. The rows are written with
ragbench.tasks.crag_mm.synthetic.write_dataset (layout saved) and read with datasets.load_from_disk, as
local_evaluation.py's load_dataset reads the hub's files: the `image` column decoded by the datasets Image feature.
Web pictures are put in upstream's download cache (CRAG_CACHE_DIR) beforehand; requests.get is refused.

In a venv with datasets, pillow, pandas, rich, tqdm, requests, loguru and ragbench importable:
    python record_crag_mm_pictures.py CRAG_MM_CHECKOUT
"""

import base64
import hashlib
import importlib.metadata as md
import io
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def gradient_jpeg(size, mode="RGB", orientation=None):
    """A JPEG of `size` (width, height) whose red, green and blue are Pillow's linear and radial gradients (CMYK: the
    same bands as C, M, Y and K 0), with the EXIF Orientation tag `orientation` where one is given."""
    from PIL import Image

    linear, radial = Image.linear_gradient("L").resize(size), Image.radial_gradient("L").resize(size)
    bands = [linear, radial, linear.transpose(Image.Transpose.FLIP_TOP_BOTTOM)]
    picture = Image.merge("RGB", bands)
    if mode == "CMYK":
        picture = Image.merge("CMYK", [*bands, Image.new("L", size, 0)])
    exif = Image.Exif()
    if orientation is not None:
        exif[0x0112] = orientation
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", exif=exif.tobytes())
    return buffer.getvalue()


# (session, what the row holds: "ego" its picture, "both" its picture and an image_url, "web" an image_url only),
# the picture's size, mode and EXIF orientation
CASES = (
    ("ego-turned", "ego", (48, 32), "RGB", 6),
    ("ego-cmyk", "ego", (40, 30), "CMYK", None),
    ("ego-cmyk-turned", "ego", (40, 30), "CMYK", 8),
    ("ego-plain", "ego", (36, 20), "RGB", None),
    ("both-turned", "both", (50, 26), "RGB", 3),
    ("web-turned", "web", (44, 28), "RGB", 6),
)


def rows_and_cache():
    rows, cached = [], {}
    for number, (session, holds, size, mode, orientation) in enumerate(CASES):
        data = base64.b64encode(gradient_jpeg(size, mode, orientation)).decode("ascii")
        url = None if holds == "ego" else f"https://img.example/{session}.jpg"
        if holds == "web":
            cached[url] = data
        iid = f"p{number}"
        turn = {"interaction_id": iid, "domain": 0, "query_category": 0, "dynamism": 0, "query": f"q{number}",
                "image_quality": 5}  # fmt: skip
        rows.append(
            {
                "session_id": session,
                "image": None if holds == "web" else data,
                "image_url": url,
                "turns": [turn],
                "answers": [{"interaction_id": iid, "ans_full": f"a{number}"}],
            }
        )
    return rows, cached


def picture_record(image):
    """The picture as the agent gets it, and in RGB as vLLM reads it (convert_image_mode, Mllama's convert_to_rgb)."""
    rgb = image.convert("RGB")
    return {
        "size": list(image.size),
        "mode": image.mode,
        "rgb_sha256": hashlib.sha256(rgb.tobytes()).hexdigest(),
    }


def record(checkout: Path) -> None:
    import datasets
    import requests

    from ragbench.tasks.crag_mm.synthetic import write_dataset

    def refused(*args, **kwargs):
        raise RuntimeError("no network: every picture is in the cache")

    requests.get = refused
    rows, cached = rows_and_cache()
    scratch = Path(tempfile.mkdtemp())
    os.environ["CRAG_CACHE_DIR"] = str(scratch / "cache")
    sys.path.insert(0, str(checkout))
    from utils.crag_batch_iterator import CRAGTurnBatchIterator

    (scratch / "cache").mkdir()
    for url, data in cached.items():  # utils.download_image_url's name: md5 of the URL, its extension
        (scratch / "cache" / f"{hashlib.md5(url.encode()).hexdigest()}.jpg").write_bytes(base64.b64decode(data))
    written = [
        {**row, "image": None if row["image"] is None else {"bytes": base64.b64decode(row["image"]), "path": None}}
        for row in rows
    ]
    folder = write_dataset(scratch / "data", written, layout="saved")
    dataset = datasets.load_from_disk(str(folder))["validation"]
    pictures = {}
    for batch in CRAGTurnBatchIterator(dataset, batch_size=16):
        for iid, image in zip(batch["interaction_ids"], batch["images"]):
            pictures[iid] = picture_record(image)
    versions = ", ".join(f"{p} {md.version(p)}" for p in ("datasets", "pillow"))
    out = {
        "how": (
            "facebookresearch/CRAG-MM at 36b6b4bcd5405b440d9f0f6d74cef6f2fcace2be: utils/crag_batch_iterator.py "
            "CRAGTurnBatchIterator (batch size 16, no shuffle) over these rows, written with ragbench.tasks.crag_mm."
            "synthetic.write_dataset (layout saved) and read with datasets.load_from_disk; web pictures from upstream's "
            "download cache (CRAG_CACHE_DIR) filled beforehand, requests.get refused; unchanged code. Each picture the "
            "iterator yields: its size, mode and the sha256 of its pixels in RGB (convert('RGB'), as vLLM reads it). "
            f"{versions}, python {sys.version.split()[0]}; recorded by record_crag_mm_pictures.py"
        ),
        "rows": rows,
        "cached": cached,
        "upstream": pictures,
    }
    (HERE / "crag_mm_pictures.json").write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    record(Path(sys.argv[1]))
