"""A run's options are declared once, on their group's field (ragbench._config, a module per group): every command that takes
one offers that declaration (in its own wording where it differs), and builds from it only the RunConfig fields of
the options it offers."""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any

import click
from hypothesis import given
from hypothesis import strategies as st

from ragbench._cli.main import check_command, main, score_command
from ragbench._cli.run.estimate import estimate_command
from ragbench._cli.run.option_values import config_fields, group_fields, run_config_of
from ragbench._cli.run.options import RUN_GROUPS, Offered, offered
from ragbench._cli.run_folder_commands import reproduce_command, rescore_command
from ragbench._config.run_config import RunConfig
from ragbench._config.run_option import group_options, option, pairs

GROUPED = {item.flag.name for item in offered("run")}
# an option of another meaning under a run option's name: score's --data is its one task's data file
OTHER_MEANING = {("score", "--data")}


def options_of(command: click.Command) -> list[str]:
    return [p.opts[0] for p in command.params if isinstance(p, click.Option)]


def test_no_two_groups_declare_one_option() -> None:
    names = [item.flag.name for item in offered("run")]
    assert len(names) == len(set(names))


def test_no_command_of_a_run_declares_a_run_option_of_its_own() -> None:
    """A click.option of a grouped name on a command that builds a run's config (or rescore's) is a copy."""
    declared = re.compile(r"click\.option\(\s*\"(--[\w-]+)\"")
    commands = (main, check_command, estimate_command, score_command, reproduce_command, rescore_command)
    copies = [
        (command.name, name)
        for command in commands
        for name in declared.findall(inspect.getsource(command.callback))  # its decorators with it
        if name in GROUPED and (command.name, name) not in OTHER_MEANING
    ]
    assert not copies, (
        f"declare these on their field (their group's module of ragbench/_config/) and offer them: {copies}"
    )


def test_the_run_check_and_estimate_offer_every_group_whole() -> None:
    for command in (main, check_command, estimate_command):
        assert set(options_of(command)) >= GROUPED, command.name


def test_a_command_offering_some_of_a_group_builds_only_their_fields() -> None:
    """`reproduce` lays its fields over a row's settings: a field of an option it does not offer (the row's
    system, retriever, strict_infra ...) would replace the row's with a default."""
    reproduced = config_fields({}, "reproduce")
    assert {"system", "retriever", "reranker", "refiner", "tasks", "strict_infra", "max_cost"}.isdisjoint(reproduced)
    assert {"data", "limit", "system_args", "retriever_args", "model", "judges", "resume", "seed"} <= set(reproduced)
    scored = config_fields({}, "score")
    assert {"system", "system_args", "data", "tasks", "limit", "retriever"}.isdisjoint(scored)


def test_the_commands_offer_as_many_options_as_before() -> None:
    """The options each command took before the groups (a run 50 with the trackers' 4, check 48, estimate 46,
    score 30, reproduce 30, and --role-model since CRAG-MM's rewrite rows; score's --traces, --trace-format and
    --match-attribute since an application's traces are scored): none lost, none added."""
    counts = {c.name: len(options_of(c)) for c in (check_command, estimate_command, score_command, reproduce_command)}
    assert (len(options_of(main)), counts) == (50, {"check": 48, "estimate": 46, "score": 33, "reproduce": 31})


def test_each_group_of_options_builds_the_group_a_run_config_holds() -> None:
    """The options' groups are the RunConfig's own groups (ragbench._config), nothing of their own;
    a command line that gives none of a group's options builds the group's defaults."""
    held = {type(getattr(RunConfig.of(tasks=["demo"]), field.name)) for field in dataclasses.fields(RunConfig)}
    assert set(RUN_GROUPS) == held
    defaults = RunConfig.of(tasks=[])
    assert [group(**group_fields({}, group)) for group in RUN_GROUPS] == [
        getattr(defaults, field.name) for field in dataclasses.fields(RunConfig)
    ]
    assert run_config_of({"tasks": "demo"}) == RunConfig.of(tasks=["demo"])


def test_rescore_lists_its_options_in_the_order_its_help_always_had():
    """rescore's help is not sorted by group: its options come in their declarations' order, --nli-format after
    --nli-arg as it always was (its wording's `after`)."""
    assert options_of(rescore_command) == [
        "--include-path",
        "--metrics",
        "--metric-arg",
        "--judge",
        "--judge-arg",
        "--judge-repeats",
        "--nli",
        "--nli-arg",
        "--nli-format",
        "--human-labels",
        "--price-table",
        "--bootstrap-iters",
        "--output",
        "--overwrite",
        "--cache",
        "--no-progress",
        "--max-inflight",
    ]


@dataclasses.dataclass(frozen=True)
class _Toy:
    """A group of options as a new one is declared: each option once, on its field."""

    count: int = option(3, show_default=True, help="how many", offers={"score": {"help": "how many to score"}})
    quiet: bool = option(True, help="no noise", identity="never")
    names: list[str] = option(None, factory=list, names=True, help="names")
    extras: dict[str, Any] = pairs("--extra", "K=V", "an extra", identity="when_given")
    internal: str | None = option(None, identity="never")  # set by the run, not on the command line


def test_one_declaration_makes_the_flag_its_value_and_its_identity():
    """A field's declaration is its click option (the field's default and type), how its value is read and its
    identity."""
    toy = group_options(_Toy)
    assert [(d.name, d.shape, [f.name for f in d.option.flags], d.option.identity) for d in toy] == [
        ("count", "int", ["--count"], "always"),
        ("quiet", "flag", ["--no-quiet"], "never"),
        ("names", "names", ["--names"], "always"),
        ("extras", "pairs", ["--extra"], "when_given"),
        ("internal", "text", [], "never"),
    ]

    def read(**values: Any) -> None:
        pass

    for item in reversed([Offered(d, d.option.flags[0], True) for d in toy if d.option.flags]):
        read = item.decorator()(read)
    given = click.command("toy")(read).make_context("toy", ["--no-quiet", "--names", "a, b", "--extra", "k=1"]).params
    assert group_fields(given, _Toy) == {"count": 3, "quiet": False, "names": ["a", "b"], "extras": {"k": 1}}
    assert _Toy(**group_fields({}, _Toy)) == _Toy()


names = st.text(st.characters(codec="ascii", categories=("L",)), min_size=1, max_size=6)


@given(
    seed=st.integers(0, 99),
    limit=st.none() | st.integers(1, 9),
    model=st.none() | names,
    system_args=st.dictionaries(names, st.integers(), max_size=2),
    judges=st.lists(names, max_size=2),
    metrics=st.lists(names, max_size=2),
    resume=st.booleans(),
    progress=st.booleans(),
    max_cost=st.none() | st.floats(0, 9),
)
def test_a_run_command_line_reads_back_as_the_config_it_names(**options: Any) -> None:
    """Every shape of option (a number, text, K=V pairs, a repeated flag, NAME,NAME, a flag, a --no- flag) as the
    run's command line gives it is the field its declaration names."""
    args = ["--tasks", "demo", "--seed", str(options["seed"]), "--metrics", ",".join(options["metrics"])]
    args += [] if options["limit"] is None else ["--limit", str(options["limit"])]
    args += [] if options["model"] is None else ["--model", options["model"]]
    args += [item for key, value in options["system_args"].items() for item in ("--system-arg", f"{key}={value}")]
    args += [item for judge in options["judges"] for item in ("--judge", judge)]
    args += ["--resume"] * options["resume"] + ["--no-progress"] * (not options["progress"])
    args += [] if options["max_cost"] is None else ["--max-cost", repr(options["max_cost"])]
    given = check_command.make_context("check", args).params
    assert run_config_of(given) == RunConfig.of(tasks=["demo"], **options)


def test_an_absent_flag_reads_as_the_default_its_command_states() -> None:
    """Each command's every option, not given, is read as that command's help states it: rescore's "(default: the
    run's)" is None (the run's own value then), not the field's default."""
    commands = {"run": main, "score": score_command, "reproduce": reproduce_command, "rescore": rescore_command}
    for command, click_command in commands.items():
        params = {p.opts[0]: p for p in click_command.params if isinstance(p, click.Option)}
        read = config_fields(click_command.make_context(command, [], resilient_parsing=True).params, command)
        for item in offered(command):
            if not item.own or item.option.shape not in ("int", "float", "text"):
                continue  # a flag, K=V pairs and lists are off or empty when absent
            stated = params[item.flag.name].default
            if "default: the run's" in item.flag.help:
                assert stated is None, (command, item.flag.name)
            assert read[item.option.name] == stated, (command, item.flag.name)
