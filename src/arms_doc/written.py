"""The generated pages as files, for generators that run no MkDocs plugins: what ``memsift docs
write`` puts in a docs folder and what ``memsift docs check`` compares with the registry.

A written page carries a mark (:data:`MARK`, in an HTML comment near its top, which no Markdown
renderer shows). Only a file with that mark is ever overwritten, unless the caller forces it: a
page someone wrote by hand at the same path is never lost to a regeneration. Files are
replaced atomically (a temporary file in the same folder, then a rename), so an interrupted
write leaves the old page or the new one, never half of one.

Everything here but :func:`write_pages` is a plain function of its arguments.
"""

from __future__ import annotations

import difflib
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arms_doc.pages import DEFAULT_MEASURED_PAGE, Pages, Sources

#: How every written page's comment begins (each page writes it when ``written`` is set).
MARK = "<!-- Written by memsift docs write"
#: The mark is looked for in this many lines at the top of a file.
MARK_LINES = 5
#: At most this many lines of a page's unified diff are shown.
DIFF_LINES = 200

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def has_mark(text: str) -> bool:
    """Whether ``text`` is a page ``memsift docs write`` wrote: its mark near the top."""
    return any(line.startswith(MARK) for line in text.splitlines()[:MARK_LINES])


def is_written(path: Path) -> bool:
    """Whether the file at ``path`` carries the mark; False for a file that cannot be read."""
    try:
        with path.open(encoding="utf-8", errors="replace") as file:
            head = "".join(file.readline() for _ in range(MARK_LINES))
    except OSError:
        return False
    return has_mark(head)


@dataclass(frozen=True)
class Planned:
    """One page to write, or to check: where it goes and what it holds."""

    #: The path as the user sees it: the docs folder as given, then the page's path.
    shown: str
    target: Path
    text: str


def planned(pages: Pages, sources: Sources, folder: Path, folder_shown: str) -> list[Planned]:
    """The files of ``pages`` inside the docs folder ``folder`` (shown as ``folder_shown``)."""
    out = [(sources.page, pages.arms)]
    if pages.measured is not None and sources.measured_path is not None:
        out.append((sources.measured_path, pages.measured))
    base = folder_shown.rstrip("/") or "."
    return [Planned(f"{base}/{page}", folder / page, text) for page, text in out]


#: Why a written Measured page is generated no more, as :func:`leftover` says it.
NO_RESULTS = "there are no results now"
TURNED_OFF = "the Measured page is turned off (measured_page: null, or --no-measured)"


def leftover(sources: Sources, folder: Path, folder_shown: str) -> tuple[Planned, str] | None:
    """A Measured page written earlier that is generated no more, and why (its results folder
    is gone, or the page was turned off: then it is looked for at its default path), or None.
    Only a file with the mark counts; it is named, never deleted: left in place, it would be
    published as it was, stale, while ``docs check`` passed."""
    if sources.measured_path is not None:
        return None
    page, why = sources.measured_page, NO_RESULTS
    if page is None:
        page, why = DEFAULT_MEASURED_PAGE, TURNED_OFF
    target = folder / page
    if page == sources.page or not (target.is_file() and is_written(target)):
        return None
    return Planned(f"{folder_shown.rstrip('/') or '.'}/{page}", target, ""), why


class InTheWay(Exception):
    """A file sits where a page goes and was not written by ``memsift docs write``."""


def in_the_way(page: Planned, *, force: bool = False) -> str | None:
    """Why the page must not be written where it goes, or None: a folder sits there, or a file
    that ``memsift docs write`` did not write (unless ``force``)."""
    if page.target.is_dir():
        return f"{page.shown} is a folder, not a page; move it or choose another path"
    if page.target.exists() and not force and not is_written(page.target):
        return (
            f"{page.shown} exists and was not written by memsift docs write (it has no "
            f"'{MARK}' comment near its top), so it is left as it is; move it away, choose "
            "another path, or pass --force to replace it"
        )
    return None


def write_pages(files: Sequence[Planned], *, force: bool = False) -> list[tuple[Planned, bool]]:
    """Write each page, atomically; (page, whether its file changed) for each. A file that
    already holds its page's text is not touched. Raises InTheWay, before writing anything,
    when anything is in the way of any page (:func:`in_the_way`)."""
    if problems := [problem for page in files if (problem := in_the_way(page, force=force))]:
        raise InTheWay("; ".join(problems))
    done = []
    for page in files:
        if page.target.is_file() and read_text(page.target) == page.text:
            done.append((page, False))
            continue
        replace_file(page.target, page.text)
        done.append((page, True))
    return done


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def replace_file(target: Path, text: str) -> None:
    """Put ``text`` at ``target`` through a temporary file in its folder and a rename. A link
    at ``target`` keeps pointing where it did (the file it points to is replaced), and a file
    replaced keeps its permissions."""
    target = target.resolve() if target.is_symlink() else target
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = target.stat().st_mode & 0o777 if target.is_file() else 0o666 & ~current_umask()
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def current_umask() -> int:
    """The process's umask (reading it means setting it, so it is set straight back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


# --------------------------------------------------------------------------- checking


@dataclass(frozen=True)
class Difference:
    """A committed page that does not match what the registry makes now."""

    page: Planned
    #: What is wrong, after the page's path: "does not exist", "differs", ...
    problem: str
    #: The sections that changed, as "heading › subheading".
    sections: tuple[str, ...] = ()
    #: The unified diff from the committed file to the page as it would be written.
    diff: tuple[str, ...] = field(default=(), repr=False)
    #: The file at the page's path was not written by ``memsift docs write``: only its
    #: ``--force`` replaces it.
    foreign: bool = False


def differences(
    files: Sequence[Planned], stale: tuple[Planned, str] | None = None
) -> list[Difference]:
    """How each committed page differs from its text; an empty list when all match. ``stale``
    is a written page that is generated no more, and why (:func:`leftover`)."""
    found = []
    for page in files:
        committed = read_text(page.target) if page.target.is_file() else None
        if committed is None:
            problem = "is not a readable file" if page.target.exists() else "does not exist"
            found.append(Difference(page, problem))
        elif committed != page.text:
            foreign = not has_mark(committed)
            found.append(
                Difference(
                    page,
                    "was not written by memsift docs write, and differs from the page"
                    if foreign
                    else "differs from what the registry makes now",
                    changed_sections(committed, page.text),
                    unified(committed, page),
                    foreign=foreign,
                )
            )
    if stale is not None:
        page, why = stale
        found.append(
            Difference(
                page,
                f"is a written Measured page, but {why}, so no Measured page is made; delete it",
            )
        )
    return found


def unified(committed: str, page: Planned) -> tuple[str, ...]:
    lines = list(
        difflib.unified_diff(
            committed.splitlines(),
            page.text.splitlines(),
            f"{page.shown} (committed)",
            f"{page.shown} (from the registry now)",
            lineterm="",
        )
    )
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... {len(lines) - DIFF_LINES} more lines of diff"]
    return tuple(lines)


def headings(text: str) -> list[tuple[int, int, str]]:
    """(line index, level, title) of every Markdown heading outside fenced code."""
    found = []
    fence: str | None = None
    for index, line in enumerate(text.splitlines()):
        if fence is not None:
            bare = line.strip()
            if len(bare) >= len(fence) and set(bare) == {fence[0]}:
                fence = None  # a run of the opening character, at least as long, closes it
            continue
        if opener := _FENCE.match(line):
            fence = opener.group(1)
            continue
        if heading := _HEADING.match(line):
            found.append((index, len(heading.group(1)), heading.group(2)))
    return found


def section_at(marks: list[tuple[int, int, str]], index: int) -> str:
    """The heading path ("The arms › recency") of line ``index``, from the heading list."""
    path: list[tuple[int, str]] = []
    for line, level, title in marks:
        if line > index:
            break
        path = [(lv, t) for lv, t in path if lv < level] + [(level, title)]
    # The page's title names the page, not a section: leave it out below the first heading.
    if len(path) > 1 and path[0][0] == 1:
        path = path[1:]
    return " › ".join(title for _, title in path) or "the top of the page"


def changed_sections(old: str, new: str) -> tuple[str, ...]:
    """The sections of ``new`` (or of ``old``, for lines only it has) in which the texts
    differ, in page order, each once."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    old_marks, new_marks = headings(old), headings(new)
    found: dict[str, None] = {}
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if j2 > j1:
            found[section_at(new_marks, j1)] = None
        else:
            found[section_at(old_marks, i1)] = None
    return tuple(found)
