"""A plugin class that names `options_from` passes its `**options` on to that class, whose `__init__` declares them
once for both (dense's one-process retriever and its shards' front share `QueryOptions`): the pre-flight lists,
checks and refuses them as if the plugin's own signature declared them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from annotated_types import Ge

from ragbench._values.options import accepted_options, construct
from ragbench.api import ConfigError


@dataclass(frozen=True)
class SharedOptions:
    size: Annotated[int, Ge(1)] = 3
    name: str | None = None


class Front:
    options_from = SharedOptions

    def __init__(self, index: str | None = None, *, registry: Any, **options: Any) -> None:
        self.index, self.options = index, SharedOptions(**options)


class Narrower(Front):
    withheld_options = ("name",)

    def __init__(self, index: str | None = None, *, registry: Any, **options: Any) -> None:
        super().__init__(index, registry=registry, **options)


def made(cls: type, args: dict[str, object]) -> Any:
    return construct(cls, args, "retriever front", injected={"registry": None})


def test_the_options_passed_on_are_the_plugins_own():
    front = made(Front, {"index": "i", "size": 5})
    assert (front.index, front.options) == ("i", SharedOptions(5, None))
    assert accepted_options(Front) == {"index", "registry", "size", "name"}


def test_an_unknown_option_is_refused_naming_the_declared_ones():
    with pytest.raises(ConfigError) as refused:
        made(Front, {"sise": 5})
    assert str(refused.value) == (
        "--retriever-arg sise=5: retriever front has no option 'sise'; did you mean 'size'? (accepted: "
        "index=<str/null, default None>, "
        "size=<int >= 1, default 3>, name=<str/null, default None>)"
    )


@pytest.mark.parametrize("value", ["x", 0, 2.5, True])
def test_an_option_passed_on_is_type_checked_by_its_declaration(value):
    with pytest.raises(
        ConfigError, match=r"retriever front takes an integer >= 1 for size \(size=<int >= 1, default 3>\)"
    ):
        made(Front, {"size": value})


def test_withheld_options_leave_the_passed_on_ones_too():
    assert accepted_options(Narrower) == {"index", "registry", "size"}
    with pytest.raises(ConfigError, match="has no option 'name'"):
        made(Narrower, {"name": "n"})


def test_an_options_from_that_is_no_class_is_one_line_naming_it():
    class Mistaken:
        options_from = "SharedOptions"

        def __init__(self, **options: Any) -> None:
            self.options = options

    with pytest.raises(ConfigError, match=r"^Mistaken.options_from is 'SharedOptions', not the class whose __init__"):
        made(Mistaken, {"size": 5})


def test_a_class_whose_signature_changed_is_read_again_not_as_it_was_read_first():
    """A class's options are read from its signatures once (a run builds many plugins), and read again where an
    `__init__` it reads from changed: its own, or its `options_from` class's."""

    @dataclass(frozen=True)
    class Given:
        size: int = 3

    class Plugin:
        options_from = Given

        def __init__(self, **options: Any) -> None:
            self.options = Given(**options)

    assert accepted_options(Plugin) == {"size"} and made(Plugin, {"size": 4}).options == Given(4)

    @dataclass(frozen=True)
    class Wider:
        size: int = 3
        name: str = ""

    Plugin.options_from = Wider  # type: ignore[attr-defined]  # its options' class changed
    assert accepted_options(Plugin) == {"size", "name"}

    def own_init(self, depth: int = 1) -> None:
        self.depth = depth

    Plugin.__init__ = own_init  # type: ignore[method-assign]  # its own __init__ changed
    assert accepted_options(Plugin) == {"depth"} and made(Plugin, {"depth": 2}).depth == 2
    with pytest.raises(ConfigError, match="has no option 'size'"):
        made(Plugin, {"size": 4})
