"""search_agent sends a Responses answer's output items back as BrowseComp-Plus's clients do: each as openai 1.97.0
(the SDK they run) dumps the item it parsed, every field of its model in the model's order, None where the server
sent none (tests/data/search_agent/record_sdk_dumps.py recorded the SDK's dumps, sdk_dumps.json)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from plugins.search_agent.sdk_items import ITEMS, sdk_dump
from support import paths

DUMPS = json.loads((paths.DATA / "search_agent" / "sdk_dumps.json").read_text(encoding="utf-8"))


def test_each_item_is_sent_back_as_the_clients_sdk_dumps_it_key_order_included():
    assert DUMPS["versions"]["openai"] == "1.97.0"
    for recorded in DUMPS["items"]:
        ours = sdk_dump(recorded["sent"])
        assert json.dumps(ours) == json.dumps(recorded["dumped"]), recorded["sent"]


values = st.none() | st.text(max_size=5) | st.integers()
sent_items = st.sampled_from([*ITEMS, "web_search_call"]).flatmap(
    lambda kind: st.dictionaries(
        st.sampled_from([*ITEMS.get(kind, ("id", "status")), "extra"]), values, max_size=6
    ).map(lambda fields: {"type": kind, **fields})
)


@given(sent_items)
def test_a_dump_keeps_what_was_sent_and_adds_only_the_sdk_models_fields_as_none(item):
    dumped = sdk_dump(item)
    fields = ITEMS.get(item["type"], ())
    assert list(dumped)[: len(fields)] == list(fields)  # the model's fields first, in its order
    assert {k: v for k, v in dumped.items() if k in item} == item  # nothing sent is changed or lost
    assert all(dumped[k] is None for k in dumped if k not in item)  # a field not sent is None
