"""The thumbnails of a run folder (`images/<sha256>.png`) are read back only as ragbench wrote them: a real FIFO, a
link to one, a link to /dev/zero or to the user's credentials file, a picture that is no thumbnail of ragbench's,
put where a thumbnail was, is shown as no thumbnail (one warning line naming it), never waited on, never read
without end, never exported; and a picture that cannot be decoded (a real decompression bomb, a PNG cut short) costs
the viewer its thumbnail, never the run its samples."""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_view_images import Looks
from test_view_images import Pictures as ThreePictures

from ragbench.api import Example, Image
from ragbench.testing import ScriptedLLM, cli, installed_registry, run_eval
from support.damaged_pictures import bomb_png, png, truncated_png
from support.special_files import fifo_writer, memory_bounded  # noqa: F401  (a fixture)
from support.viewer_pages import export_view, exported_page, run_ids, served_page, viewer_server

pytestmark = pytest.mark.timeout(300)

RED, BLUE = png((200, 30, 30), (600, 300)), png((0, 90, 200), (10, 10))
SECRET = "[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLE\n"


class Pictures(ThreePictures):
    """An example asking about each picture of the folder `folder` (task argument), in the order of their names."""

    def examples(self):
        for number, path in enumerate(sorted(Path(self.folder).iterdir())):
            yield Example(id=f"p{number}", question="what colour?", gold={"answers": ["red"]}, images=(Image.of(path),))


def pictures(folder: Path, *data: bytes) -> dict[str, str]:
    """The pictures written to `folder` (0.png, 1.png ...), as the task arguments naming them."""
    folder.mkdir()
    for number, picture in enumerate(data):
        (folder / f"{number}.png").write_bytes(picture)
    return {"folder": str(folder)}


def sample_ids(out) -> list[str]:
    lines = (out / "samples" / "pictures.jsonl").read_text().splitlines()
    return sorted(json.loads(line)["id"] for line in lines)


@pytest.fixture
def run_folder(tmp_path):
    out = tmp_path / "run"
    run_eval(Pictures, Looks, ScriptedLLM("red"), output=out, task_args=pictures(tmp_path / "pictures", RED, BLUE))
    return out


def thumbnail(out, data: bytes):
    return out / "images" / f"{Image.of(data).digest}.png"


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("fifo", "a FIFO (named pipe) is there, not a file"),
        ("link to a fifo", "a symbolic link is there, not a file"),
        ("link to /dev/zero", "a symbolic link is there, not a file"),
        ("link to credentials", "a symbolic link is there, not a file"),
        ("hard link to credentials", "no picture Pillow decodes"),
        ("a picture of the user's", "a PNG picture of 600x300 pixels"),
    ],
)
def test_what_is_no_thumbnail_ragbench_wrote_is_not_shown_nor_exported(
    run_folder, tmp_path, kind, says, fifo_writer, caplog
):
    credentials = tmp_path / "credentials"
    credentials.write_text(SECRET)
    kept = thumbnail(run_folder, RED)
    kept.unlink()
    if kind == "fifo":
        os.mkfifo(kept)
        fifo_writer.append(kept)
    elif kind == "link to a fifo":
        os.mkfifo(tmp_path / "fifo")
        fifo_writer.append(tmp_path / "fifo")
        kept.symlink_to(tmp_path / "fifo")
    elif kind == "link to /dev/zero":
        kept.symlink_to("/dev/zero")
    elif kind == "link to credentials":
        kept.symlink_to(credentials)
    elif kind == "hard link to credentials":
        os.link(credentials, kept)
    else:
        kept.write_bytes(RED)  # the 600 x 300 picture itself, not a thumbnail of at most 256 a side
    registry = installed_registry()
    with memory_bounded():  # a regression reading /dev/zero fails here, never fills the machine
        result = CliRunner().invoke(cli, ["view", str(run_folder), "--export", str(tmp_path / "site")], obj=registry)
    assert result.exit_code == 0, result.output
    warned = [record.getMessage() for record in caplog.records]
    assert f"ragbench: warning: {kept} is not a thumbnail ragbench wrote ({says}): not shown; remove it" in warned
    site = tmp_path / "site"
    rid = run_ids(site)[0]
    assert exported_page(site, f"example/{rid}/pictures/0")["images"][0]["thumbnail"] is None
    assert exported_page(site, f"example/{rid}/pictures/1")["images"][0]["thumbnail"] is not None  # the others shown
    written = "".join(path.read_text(errors="replace") for path in site.rglob("*") if path.is_file())
    assert "aws_secret_access_key" not in written and base64.b64encode(SECRET.encode()).decode()[:24] not in written
    assert credentials.read_text() == SECRET


def test_the_served_example_page_is_not_held_by_a_fifo_thumbnail(run_folder, tmp_path, fifo_writer, ragbench_zygote):
    kept = thumbnail(run_folder, RED)
    kept.unlink()
    os.mkfifo(kept)
    fifo_writer.append(kept)
    with viewer_server(ragbench_zygote, run_folder) as base:
        rid = served_page(base, "runs")["runs"][0]["rid"]
        page = served_page(base, f"example/{rid}/pictures/0")
    assert page["images"][0]["thumbnail"] is None


def test_a_picture_that_cannot_be_decoded_costs_its_thumbnail_never_the_runs_samples(tmp_path, caplog):
    """A real decompression bomb (24 KB, 200 million pixels) and a PNG cut short among valid pictures: every example
    is saved, each bad picture is one warning line naming it, and the --resume of the finished run ends as it did."""
    out = tmp_path / "run"
    given = pictures(tmp_path / "pictures", RED, bomb_png(), truncated_png(), BLUE)
    outcome = run_eval(Pictures, Looks, ScriptedLLM("red"), output=out, task_args=given)
    assert sample_ids(out) == ["p0", "p1", "p2", "p3"] and outcome.complete
    warned = [r.getMessage() for r in caplog.records if "no thumbnail kept" in r.getMessage()]
    bomb, cut = tmp_path / "pictures" / "1.png", tmp_path / "pictures" / "2.png"
    assert (
        f"ragbench: warning: no thumbnail kept (the viewer shows none): {bomb}: a picture of more than 178,956,970 "
        "pixels, which Pillow refuses to decode (a decompression bomb's size); give a smaller picture"
    ) in warned, warned
    assert (
        f"ragbench: warning: no thumbnail kept (the viewer shows none): {cut}: the picture cannot be decoded "
        "(OSError: image file is truncated); replace it with an undamaged copy"
    ) in warned, warned
    assert sorted(p.name for p in (out / "images").iterdir()) == sorted(thumbnail(out, d).name for d in (RED, BLUE))
    again = run_eval(Pictures, Looks, ScriptedLLM("red"), output=out, task_args=given, resume=True)
    assert again.already_finished and again.scores == outcome.scores


def test_a_fifo_or_link_where_a_thumbnail_goes_is_replaced_never_written_through(tmp_path, fifo_writer):
    out = tmp_path / "run"
    (out / "images").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.png"
    elsewhere.write_bytes(b"the user's")
    thumbnail(out, RED).symlink_to(elsewhere)
    os.mkfifo(thumbnail(out, BLUE))
    fifo_writer.append(thumbnail(out, BLUE))
    run_eval(Pictures, Looks, ScriptedLLM("red"), output=out, task_args=pictures(tmp_path / "pictures", RED, BLUE))
    assert elsewhere.read_bytes() == b"the user's"
    for data in (RED, BLUE):
        assert not thumbnail(out, data).is_symlink() and thumbnail(out, data).is_file()
    site = export_view([out], tmp_path / "site")
    assert exported_page(site, f"example/{run_ids(site)[0]}/pictures/0")["images"][0]["thumbnail"].startswith(
        "data:image/png;base64,"
    )
    shutil.rmtree(tmp_path / "site")
