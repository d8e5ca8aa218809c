"""Opening something other than a file (ragbench._storage.files.open_file, file_there), a unit with no public face:
refused without blocking, whatever the mode (tests/storage/test_not_a_file.py tests what a run and the commands do
when they meet one in a run folder)."""

from __future__ import annotations

import pytest
from test_not_a_file import put

from ragbench._storage.files import NotAFileError, file_there, open_file

pytestmark = pytest.mark.timeout(60, method="thread")  # a hang in any thread fails the session


@pytest.mark.parametrize("kind", ["fifo", "device", "socket", "folder"])
@pytest.mark.parametrize("mode", ["rb", "r", "a"])
def test_opening_anything_but_a_file_is_refused_without_blocking(tmp_path, kind, mode):
    what = put(kind, tmp_path / "thing")
    with pytest.raises(NotAFileError) as refused:
        open_file(tmp_path / "thing", mode)
    assert (refused.value.strerror, refused.value.filename) == (f"{what} is there, not a file", str(tmp_path / "thing"))
    with pytest.raises(NotAFileError):
        file_there(tmp_path / "thing")
    assert not file_there(tmp_path / "nothing") and not file_there(tmp_path / "nothing" / "below")
