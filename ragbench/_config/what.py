"""What a run runs, as planning reads it (`RunWhat`): its tasks, their data and options, its system and that
system's options, its seed."""

from __future__ import annotations

from dataclasses import MISSING, dataclass

from .option_bounds import number_problem
from .run_option import SCORED, Flag, found, option, pairs


@dataclass(frozen=True)
class RunWhat:
    """What planning reads: the tasks, their data and options, the system and its options, the seed."""

    tasks: list[str] = option(
        MISSING,  # every run names its tasks
        # --tasks may name the tasks of these folders: the run's tasks are their files (ragbench._cli.run.option_values)
        Flag(
            name="--include-path",
            metavar="DIR",
            help="a folder of YAML tasks: --tasks may name any task (or group) declared by a *.yaml file under it "
            "(repeatable)",
            offers={
                "rescore": {
                    "help": "a folder holding the run's YAML task files, if they moved (default: where the run read "
                    "them; a file changed since is refused)"
                }
            },
        ),
        names=True,
        help="comma-separated task or group names (ragbench list tasks), or YAML task files (docs/yaml-tasks.md)",
    )
    data: dict[str, str] = pairs(  # task (or task file) -> data file
        "--data", "TASK=PATH", "local data file for a task", offers={"reproduce": {}}
    )
    task_args: dict[str, object] = pairs(  # "key" for every task, "task.key" for one
        "--task-arg", "K=V", "task option; TASK.K=V for one task", offers=SCORED
    )
    limit: int | None = option(
        None,
        help="first N records of each task",
        offers={"reproduce": {"help": "first N records per task: a PARTIAL reproduction"}},
    )
    system: str = option("vanilla", show_default=True, help="system name (ragbench list systems)")
    system_args: dict[str, object] = pairs(
        "--system-arg",
        "K=V",
        "system option, e.g. top_n=5",
        offers={"reproduce": {"help": "system option (changes what is measured)"}},
    )
    top_k: int | None = option(  # given to the system's declared option
        None,
        at_least=1,
        metavar="N",
        help="passages shown per reader call, set through the option the system declares for it (a system that "
        "declares none refuses it); applies to the run's one system",
        identity="when_given",
    )
    # numbers are ranged by the pre-flight (`problems()`), one line each
    seed: int = option(0, show_default=True, help="seeds sampling and the bootstrap (>= 0)", offers=SCORED)
    replay_tools: str | None = option(None, identity="never")  # a recorded run's calls/: tools answer from it
    replay_apps: str | None = option(None, identity="never")  # a recorded run's calls/: applications answer from it

    def problems(self) -> list[str]:
        every = ", or leave it out for all records"
        limit = None if self.limit is None else number_problem("--limit", self.limit, 1, every)
        return found(number_problem("--seed", self.seed, 0), limit)
