"""Whether a run's encoder is the one a dense index was built with: a passage of the index encoded again points
where the index's stored vector of it does. float16 storage, another device or another library version move it far
less than `MIN_COSINE`; a model of the same dimension that is not the index's (another checkpoint, a changed
folder, a hub name now serving other weights) moves it further, and is refused rather than searched."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._errors import ConfigError

MIN_COSINE = 0.99


def check_encoding(vector: Any, stored: Any, encoder: str, index: str, passage: str, fix: str) -> float:
    """The cosine of `vector` (`passage` of `index` encoded by `encoder`) to `stored` (the index's vector of it); a
    ConfigError saying how to `fix` it when that is below `MIN_COSINE`."""
    cosine = float(vector @ stored) / float(np.linalg.norm(vector) * np.linalg.norm(stored) or 1.0)
    if cosine < MIN_COSINE:
        raise ConfigError(
            f"{encoder} does not give the vectors of {index} (its {passage} encodes at cosine {cosine:.3f} to the "
            f"stored one): {fix}"
        )
    return cosine
