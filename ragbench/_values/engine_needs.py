"""What a system needs of the engine serving it (`EngineNeeds`), known before any engine starts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineNeeds:
    """What a system needs of the engine serving it, known before any engine starts (`System.engine_needs`):
    the engine loader sets the engine up for it (`Engine.meet_needs`), and the pre-flight reports what no
    option can give, so that nothing is discovered after a model has loaded."""

    system: str  # who needs it, for messages: "selfrag on popqa"
    logprob_tokens: tuple[str, ...] = ()  # vocabulary entries whose log-probs it reads (each a single entry)
    logprob_window: int | None = None  # read within the top-k dict of this k (Sampling.logprob_window); None: exact
    instead: str = ""  # a setting of the system that needs less, named in messages (e.g. --system-arg ...)
    models: str = "a model trained with them"  # what has the vocabulary entries, named in messages
    ensembles: bool = False  # it sends ensemble requests (`Request.ensemble`): `Engine.decodes_ensembles` must hold
    tools: bool = False  # it offers the model tools (`Request.tools`): `Engine.calls_tools` must hold
    # it reads whether a text ended at a kept stop string or at the model's own end: `Engine.says_which_stop` must hold
    stop_known: bool = False
    # it sends the model images (`Engine.images_problem` must find none); None: as the task says (`Task.holds_images`)
    images: bool | None = None
    # how its task sends no images (`Task.text_only`, e.g. "--task-arg vidore.images=0 ..."), named where a model
    # that takes none is refused
    no_images: str = ""
