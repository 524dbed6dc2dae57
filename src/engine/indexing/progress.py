"""Progress of long work as plain lines, for logs and pipes.

A bar redrawn with carriage returns is right on a terminal and wrong everywhere else: in a log
file or a CI console it is either one huge line or nothing until the end (a 45-minute index run
on a loaded machine printed nothing at all). Off a terminal, progress is a line now and then:
when a phase starts, every ``interval_s`` seconds while it runs, and when it finishes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

LABELS = {"scan": "scanning files", "embed": "embedding chunks"}


def progress_line(phase: str, done: int, total: int) -> str:
    """``embedding chunks: 1200/4800 (25%)``"""
    label = LABELS.get(phase, phase)
    if total:
        return f"{label}: {done}/{total} ({100 * done // total}%)"
    return f"{label}: {done}"


def periodic_progress(
    write: Callable[[str], None],
    interval_s: float = 10.0,
    clock: Callable[[], float] = time.monotonic,
) -> Callable[[str, int, int], None]:
    """A ``progress(phase, done, total)`` callback that writes a line through ``write`` when a
    phase starts, at most every ``interval_s`` seconds while it runs, and when it completes."""
    last: dict[str, object] = {"phase": None, "at": 0.0, "finished": False}

    def report(phase: str, done: int, total: int) -> None:
        now = clock()
        new_phase = phase != last["phase"]
        finished = bool(total) and done >= total
        due = now - float(last["at"]) >= interval_s  # type: ignore[arg-type]
        if new_phase or (finished and not last["finished"]) or (due and not finished):
            write(progress_line(phase, done, total))
            last.update(phase=phase, at=now, finished=finished)

    return report
