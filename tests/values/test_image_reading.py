"""Reading a picture (`Image.of`, `Image.picture`, `Image.dataset_picture`, the run's thumbnails): a path is read as
the user's data files are (a real FIFO, device or folder there is refused in one line, never waited on), and any
damage to the bytes (a cut, a flipped bit, a decompression bomb) is the one documented error, a ConfigError naming
the picture, the damage and the fix; never another exception, never a hang. A picture `datasets` turns by its EXIF
Orientation tag is turned, a CMYK one read and kept in the colours a model reads."""

from __future__ import annotations

import hashlib
import io
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench.api import ConfigError, Image
from support.damaged_pictures import bomb_png, jpeg, noisy_png, truncated_png
from support.special_files import fifo_writer, memory_bounded  # noqa: F401  (a fixture)

pytestmark = pytest.mark.timeout(300)

VALID = {"png": noisy_png((10, 120, 230), (24, 18)), "jpeg": jpeg((24, 18)), "cmyk": jpeg((24, 18), "CMYK")}


def thing(kind: str, path, fifo_writer) -> str:
    """Something of `kind` at `path`; what a refusal calls it."""
    if kind == "fifo":
        os.mkfifo(path)
        fifo_writer.append(path)
        return "a FIFO (named pipe) is there, not a file"
    if kind == "link to a fifo":
        os.mkfifo(path.with_name("fifo"))
        fifo_writer.append(path.with_name("fifo"))
        path.symlink_to(path.with_name("fifo"))
        return "a FIFO (named pipe) is there, not a file"
    if kind == "link to /dev/zero":  # read until memory runs out, were it read
        path.symlink_to("/dev/zero")
        return "a character device is there, not a file"
    path.mkdir()
    return "a folder is there, not a file"


@pytest.mark.parametrize("kind", ["fifo", "link to a fifo", "link to /dev/zero", "folder"])
@pytest.mark.parametrize("given_as", ["path", "datasets value"])
def test_an_image_path_that_is_no_file_is_refused_in_one_line_never_waited_on(tmp_path, kind, given_as, fifo_writer):
    path = tmp_path / "page.png"
    what = thing(kind, path, fifo_writer)
    value = str(path) if given_as == "path" else {"bytes": None, "path": str(path)}
    with pytest.raises(ConfigError) as refused, memory_bounded():  # a regression reading /dev/zero fails here
        Image.of(value)
    assert str(refused.value) == (
        f"image {path}: {what}; ragbench reads only a regular file there: give the path of an image file"
    )


def test_a_missing_image_file_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"^image .*nothing\.png: No such file or directory; give the path"):
        Image.of(tmp_path / "nothing.png")


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (bomb_png(), "a picture of more than 178,956,970 pixels, which Pillow refuses to decode"),
        (truncated_png(), "the picture cannot be decoded (OSError: image file is truncated)"),
        (b"\x89PNG\r\n\x1a\n" + b"\0" * 40, "the picture cannot be decoded (no format Pillow reads)"),
    ],
    ids=["bomb", "truncated", "no picture"],
)
def test_a_picture_that_cannot_be_decoded_is_one_line_naming_it_the_damage_and_the_fix(data, says):
    image = Image.of(data, source="pages.parquet row 3")
    for decode in (image.picture, image.dataset_picture):
        with pytest.raises(ConfigError) as refused:
            decode()
        message = str(refused.value)
        assert message.startswith(f"pages.parquet row 3: {says}") and "\n" not in message
        assert message.endswith(("give a smaller picture", "replace it with an undamaged copy"))


def test_dataset_picture_is_what_the_datasets_image_feature_decodes_turned_by_its_exif_orientation():
    """datasets 2.19 and later (huggingface/datasets#6739) turn a picture by its Orientation tag; Pillow alone does
    not. The reference is the installed datasets' own decode_example, run here."""
    import datasets

    for orientation in (None, 1, 3, 6, 8):
        data = jpeg((48, 32), orientation=orientation)
        reference = datasets.Image().decode_example({"bytes": data, "path": None})
        ours = Image.of(data).dataset_picture()
        assert (ours.size, ours.mode, ours.tobytes()) == (reference.size, reference.mode, reference.tobytes())
        assert ours.size == ((32, 48) if orientation in (6, 8) else (48, 32))
        assert Image.of(data).picture().size == (48, 32)  # as stored


def test_a_cmyk_picture_is_kept_in_the_rgb_a_model_reads_where_png_cannot_hold_its_mode():
    from PIL import Image as PILImage

    picture = PILImage.open(io.BytesIO(jpeg((40, 30), "CMYK")))
    as_jpeg = Image.of(picture)  # its own format: JPEG holds CMYK
    assert as_jpeg.media_type == "image/jpeg" and as_jpeg.picture().mode == "CMYK"
    resized = Image.of(picture.resize((20, 15)))  # no format left: PNG, in RGB (vLLM's convert_image_mode)
    assert resized.media_type == "image/png"
    assert resized.picture().tobytes() == picture.resize((20, 15)).convert("RGB").tobytes()


def damaged(data: bytes, cut: int, flips: list[tuple[int, int]]) -> bytes:
    """`data` cut to `cut` bytes (0: whole), with each (position, bit) of `flips` flipped."""
    out = bytearray(data[:cut] if cut else data)
    for position, bit in flips:
        if out:
            out[position % len(out)] ^= 1 << bit
    return bytes(out)


@given(
    kind=st.sampled_from(sorted(VALID)),
    cut=st.integers(min_value=0, max_value=2000),
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 7)), max_size=4),
)
def test_damaged_picture_bytes_decode_or_raise_the_one_documented_error(kind, cut, flips):
    data = damaged(VALID[kind], cut, flips)
    try:
        image = Image.of(data, source="the picture")
    except ConfigError as exc:  # its first bytes no longer a picture format's
        assert str(exc).startswith("the picture: not an image this reader knows")
        return
    for decode in (image.picture, image.dataset_picture):
        try:
            picture = decode()
        except ConfigError as exc:
            assert str(exc).startswith("the picture: ") and "\n" not in str(exc)
        else:
            assert picture.size[0] > 0 and picture.size[1] > 0


def test_the_same_bytes_are_the_same_image_whatever_path_they_were_read_from(tmp_path):
    (tmp_path / "a.png").write_bytes(VALID["png"])
    (tmp_path / "b.png").write_bytes(VALID["png"])
    first, second = Image.of(tmp_path / "a.png"), Image.of({"bytes": None, "path": str(tmp_path / "b.png")})
    assert first == second and first.digest == hashlib.sha256(VALID["png"]).hexdigest()
