"""What a store's index and state plane hold, and how far they are from the files.

``memsift status`` prints this; it is also what a user checks before trusting a search: vector
coverage below 0.95 drops the vector arm, files changed since the last run are not searchable
yet, and state rows whose memory is gone are listed (removed only by ``memsift state prune``).
Each backend gathers its facts; :mod:`engine.status_report` gives the report its one shape.
"""

from __future__ import annotations

from engine import state as state_plane
from engine.backend import open_backend
from engine.files.store import Store
from engine.status_report import stale_among


def stale_state_paths(store: Store) -> list[str]:
    """State rows whose memory file no longer exists in the store."""
    return stale_among(store, state_plane.state_paths(store))


def store_status(store: Store) -> dict[str, object]:
    """Counts, coverage, model, database paths and pending changes, as one JSON-ready dict."""
    return open_backend(store).status(store)
