"""An option's value of megabytes (a `--metric-arg` list of millions of items) costs a run a small multiple of
reading it: the run's config neither copies it (`dataclasses.asdict`, `copy.deepcopy` each time the options were
read) nor walks it again each time its identity is asked (the redaction of URLs' credentials). Counted on the value
itself (a list that counts its copies and its walks), not timed."""

from __future__ import annotations

from ragbench.testing import preflight, run_eval


class Watched(list):
    """A list that counts the lists made from it (`copies`) and the walks over it (`walks`)."""

    copies = 0
    walks = 0

    def __init__(self, *items: object) -> None:
        Watched.copies += 1
        super().__init__(*items)

    def __iter__(self):  # type: ignore[no-untyped-def]
        Watched.walks += 1
        return super().__iter__()


def counted(check) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    value = Watched(["a value of the judge's"] * 1000)
    Watched.copies = Watched.walks = 0
    check(
        "demo",
        "closed_book",
        metrics=["+llm_judge"],
        judges=["scripted:echo"],
        metric_args={"llm_judge.json_field": value},
        limit=2,
    )
    return Watched.copies, Watched.walks


def test_a_metric_args_value_is_walked_once_by_the_preflight_and_never_copied():
    assert counted(preflight) == (0, 1)  # was (1, 2)


def test_a_run_walks_a_metric_args_value_three_times_and_never_copies_it():
    assert counted(run_eval) == (0, 3)  # was (5, 12): the identity, run.json's config, the record written
