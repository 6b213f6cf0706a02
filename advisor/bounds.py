"""Bounds on the work a run may ask for, checked before any simulation (docs/recommend.md,
"Bounds"): each is far above what a decision needs, and below what exhausts a machine.
The settings (``advisor.settings``) state them in their options; the plugins' contract
reads the long queue."""
from __future__ import annotations

#: Sampled futures: the race keeps 2 to 8 for most candidates; past a thousand the results
#: alone take gigabytes over a grid of a hundred candidates.
MAX_SAMPLES = 1000
#: a simulated future: a month (no queue takes longer to drain that matters to a decision
#: made again every hour or day; arrivals over a longer one outgrow the memory)
MAX_HORIZON = 30 * 86400
#: the history read and replayed: two years
MAX_HISTORY_WEEKS = 104
#: candidates named with --candidate (the default grid holds about a hundred)
MAX_CANDIDATES = 1000
#: a queue at least this long is long: families whose simulations cost seconds there (as
#: conservative backfilling's, which re-plans every job) propose nothing
LONG_QUEUE = 1000
#: the site's own past a recommendation replays first (``advisor check``): a week (its
#: replays rebuild the state every few hours; more is a study, ``advisor check`` itself)
MAX_SITE_CHECK = 7 * 86400
