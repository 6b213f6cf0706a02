"""What the queues family derives from the history: the time limits it cuts classes by."""
from __future__ import annotations

import numpy as np
import pandas as pd

from advisor.model import SECONDS_PER_WEEK


def history_limits(history: pd.DataFrame | None) -> tuple[int, ...]:
    """The time limits (s) of the history's jobs submitted in its last week: what the
    classes' boundaries are proposed from (as the paper's previous week)."""
    if history is None or not len(history):
        return ()
    submit = history["submit"].to_numpy(np.int64)
    limit = history["limit"].to_numpy(np.int64)
    recent = (submit > submit.max() - SECONDS_PER_WEEK) & (limit > 0)
    return tuple(int(v) for v in limit[recent])
