"""The response cache's store (ragbench._storage.cache), a unit with no public face: opened on a user's file where
no pre-flight ran (the API), it stands aside and leaves the file as it is (tests/storage/test_user_files.py tests
the same of the page cache, and what a run does with a --cache naming a user's file)."""

from __future__ import annotations

import pytest
from test_user_files import CACHE_FAULTS, store_stands_aside

from ragbench._storage.cache import ResponseCache


@pytest.mark.parametrize("kind", CACHE_FAULTS)
def test_a_response_cache_opened_on_a_users_file_is_not_used_and_leaves_it_as_it_is(tmp_path, kind):
    store_stands_aside(tmp_path, kind, ResponseCache, "response")
