"""Progress of long work as plain lines, for logs and pipes.

A bar redrawn with carriage returns is right on a terminal and wrong everywhere else: in a log
file or a CI console it is either one huge line or nothing until the end (a 45-minute index run
on a loaded machine printed nothing at all). Off a terminal, progress is a line now and then:
when a phase starts, every ``interval_s`` seconds while it runs, and when it finishes.

Each line after a phase's first says its pace and about how long is left (measured from the
phase's start, so a person can plan by it), and the embedding phase opens with what a person
may do meanwhile: the store is already searchable by full text, and a run stopped now resumes
where it stopped (vectors are stored batch by batch, keyed by their text).
"""

from __future__ import annotations

import time
from collections.abc import Callable

LABELS = {
    "scan": "scanning files",
    "embed": "embedding chunks",
    "retokenize": "upgrading the full text of chunks",
    "champions": "champion lists for the full-text arm (passes over every posting)",
}
UNITS = {"scan": "files", "embed": "chunks", "retokenize": "chunks"}
#: Phases of a few long steps (the champion lists' two passes over every posting): a rate of
#: "0.0 passes/s" says nothing, the time left does.
TIME_ONLY = {"champions"}
#: Said once when embedding starts: what holds already, and that stopping loses nothing.
EMBED_START = (
    "the store is searchable by full text now; computing vectors for the semantic ranking "
    "(stopping the run loses nothing: `memsift index` resumes where it stopped)"
)


def resume_line(done: int, total: int) -> str:
    """Said once when a run picks up an interrupted one: what that run already did."""
    return (
        f"resuming an interrupted run: {done:,} of {total:,} chunks already have vectors; "
        "embedding the rest"
    )


def progress_line(phase: str, done: int, total: int, pace: str = "") -> str:
    """``embedding chunks: 1200/4800 (25%), 38 chunks/s, about 2 min left``"""
    label = LABELS.get(phase, phase)
    if total:
        return f"{label}: {done}/{total} ({100 * done // total}%){pace}"
    return f"{label}: {done}{pace}"


def duration(seconds: float) -> str:
    """``40 s``, ``3 min``, ``1 h 20 min``: as precise as a plan needs."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


class Pace:
    """A phase's rate and time left, measured from when the phase started."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.phase: str | None = None
        self.started = 0.0
        self.first = 0

    def text(self, phase: str, done: int, total: int) -> str:
        """``, 38 chunks/s, about 2 min left``; empty at a phase's start, when nothing has
        moved yet, and once it is done."""
        now = self.clock()
        if phase != self.phase:
            self.phase, self.started, self.first = phase, now, done
            return ""
        elapsed, moved = now - self.started, done - self.first
        if elapsed <= 0 or moved <= 0 or (total and done >= total):
            return ""
        rate = moved / elapsed
        shown = f"{rate:.0f}" if rate >= 10 else f"{rate:.1f}"
        text = "" if phase in TIME_ONLY else f", {shown} {UNITS.get(phase, 'items')}/s"
        if total:
            text += f", about {duration((total - done) / rate)} left"
        return text


def periodic_progress(
    write: Callable[[str], None],
    interval_s: float = 10.0,
    clock: Callable[[], float] = time.monotonic,
) -> Callable[[str, int, int], None]:
    """A ``progress(phase, done, total)`` callback that writes a line through ``write`` when a
    phase starts, at most every ``interval_s`` seconds while it runs, and when it completes."""
    last: dict[str, object] = {"phase": None, "at": 0.0, "finished": False}
    pace = Pace(clock)

    def report(phase: str, done: int, total: int) -> None:
        if phase == "resume":
            write(resume_line(done, total))
            return
        now = clock()
        new_phase = phase != last["phase"]
        finished = bool(total) and done >= total
        due = now - float(last["at"]) >= interval_s  # type: ignore[arg-type]
        rate = pace.text(phase, done, total)
        if new_phase and phase == "embed":
            write(EMBED_START)
        if new_phase or (finished and not last["finished"]) or (due and not finished):
            write(progress_line(phase, done, total, rate))
            last.update(phase=phase, at=now, finished=finished)

    return report
