"""The write path: how an agent adds a memory, archives one, and lists what it has.

Files stay the source of truth, so writing a memory means writing a file, and the rules are the
ones a careful person would follow by hand:

* a new memory is a new Markdown file with front matter, under a folder named for its kind, with
  a file name made from its title; it appears whole or not at all (written to a temporary file,
  synced, then hard-linked into place, which fails rather than replace a file that is already
  there: a clash gets the next free suffix ``-2``, ``-3``…);
* archiving (``forget``) changes one front matter key, ``archived: true``, and keeps every other
  byte of the file; the new file replaces the old one atomically;
* nothing here ever deletes a memory, and every path given is checked to be a memory inside the
  store (no ``..``, no symlinks, no hidden folders) before anything is read or written.

Each write indexes the file it wrote before returning, so the very next search sees it.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import re
import secrets
import stat
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from engine.backend import open_backend
from engine.errors import FULL_ERRNOS, READ_ONLY_ERRNOS, Database, DatabaseError, PgError
from engine.files.keys import resolve_memory
from engine.files.memory import (
    FRONT_MATTER_OPENING,
    Memory,
    Skip,
    decode_memory,
    format_utc,
    parse_iso,
    parse_memory,
)
from engine.files.reading import Unreadable, read_regular
from engine.files.splice import SpliceError, splice
from engine.files.store import Store
from engine.indexing.embedder import Embedder, EmbedderError
from engine.indexing.incremental import index_paths
from engine.indexing.pipeline import parsed_now
from engine.ranking.scope import ScopeSpec, build_scope
from engine.sqlite.db import guarded
from engine.sqlite.errors import DRIVER_ERRORS

KIND_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,39}")
MAX_TITLE_CHARS = 300
MAX_TAGS = 20
MAX_TAG_CHARS = 50
SLUG_CHARS = 60
TEMP_DIR = "tmp"
MAX_SUFFIX = 1000


#: Names Windows gives to devices, with any extension: a file or folder so named cannot be
#: checked out there, which would break a store shared through git or a sync tool.
WINDOWS_RESERVED = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{dev}{n}" for dev in ("com", "lpt") for n in range(10)]
)


class WriteError(ValueError):
    """A write that cannot be done as asked; the message says what to change."""


@dataclass(frozen=True)
class NewMemory:
    """A validated memory, ready to become a file."""

    title: str
    body: str
    kind: str
    tags: tuple[str, ...]
    event_at: dt.date | dt.datetime | None


# --------------------------------------------------------------------------- validation (pure)


def check_kind(kind: str) -> str:
    """Kinds are free text in lower case (episodic, semantic, procedural, person, task…); since
    a kind names a folder, only letters, digits, '-' and '_' are allowed."""
    if not isinstance(kind, str):
        raise WriteError("kind must be text, e.g. semantic, episodic or procedural")
    cleaned = kind.strip().lower()
    if not KIND_PATTERN.fullmatch(cleaned):
        raise WriteError(
            f"kind {kind[:40]!r} is not a valid kind: use one lower-case word of letters, digits, "
            "'-' or '_' (at most 40 characters), e.g. semantic, episodic, procedural, person"
        )
    if cleaned in WINDOWS_RESERVED:
        raise WriteError(
            f"kind {cleaned!r} is a device name Windows reserves, so its folder could not be "
            "checked out there; pick another kind"
        )
    return cleaned


def check_unicode(name: str, text: str) -> None:
    """Refuse text that cannot be written as UTF-8: a lone surrogate, which is how Python
    carries an undecodable byte from a shell argument or a JSON escape."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise WriteError(
            f"{name} is not valid UTF-8 text (an undecodable byte or a lone surrogate at "
            f"character {exc.start}); pass it as UTF-8"
        ) from None


def check_title(title: str) -> str:
    if not isinstance(title, str):
        raise WriteError("title must be text")
    check_unicode("title", title)
    cleaned = " ".join(title.split())
    if not cleaned:
        raise WriteError("title is empty; give the memory a short, specific title")
    if len(cleaned) > MAX_TITLE_CHARS:
        raise WriteError(
            f"title is {len(cleaned)} characters; keep it under {MAX_TITLE_CHARS} and put the "
            "rest in the body"
        )
    return cleaned


def check_body(body: str) -> str:
    if not isinstance(body, str):
        raise WriteError("body must be text")
    check_unicode("body", body)
    if "\x00" in body:
        raise WriteError("body contains a NUL character; memories are text")
    cleaned = body.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    if not cleaned.strip():
        raise WriteError("body is empty; write what should be remembered")
    return cleaned + "\n"


def check_tags(tags: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """Tags in lower case, de-duplicated, in order; each one line of ordinary text."""
    if tags is None:
        return ()
    if isinstance(tags, str) or not isinstance(tags, list | tuple):
        raise WriteError("tags must be a list of words, e.g. [infra, staging]")
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise WriteError(f"tags: {tag!r} must be text")
        cleaned = " ".join(tag.split()).lower()
        if not cleaned:
            continue
        if len(cleaned) > MAX_TAG_CHARS or "," in cleaned or not cleaned.isprintable():
            raise WriteError(
                f"tags: {tag[:60]!r} is not a usable tag: at most {MAX_TAG_CHARS} printable "
                "characters, no commas"
            )
        if cleaned not in out:
            out.append(cleaned)
    if len(out) > MAX_TAGS:
        raise WriteError(f"{len(out)} tags; a memory takes at most {MAX_TAGS}")
    return tuple(out)


def check_event_at(value: str | None, name: str = "event_at") -> dt.date | dt.datetime | None:
    """An ISO 8601 date or datetime (when the remembered thing happened), or nothing; errors
    call the value ``name`` (the CLI's option is ``--event-at``, the tool's argument
    ``event_at``)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise WriteError(f"{name} must be an ISO 8601 date text, e.g. 2026-10-03")
    text = value.strip()
    moment = parse_iso(text)
    if moment is None:
        raise WriteError(
            f"{name} {text[:40]!r} is not an ISO 8601 date; write it like 2026-10-03 or "
            "2026-10-03T14:20:00Z"
        )
    try:
        format_utc(moment)
    except OverflowError:
        raise WriteError(f"{name} {text[:40]!r} is out of range") from None
    if len(text) == 10:
        return moment.date()
    return moment


def validate(
    title: str,
    body: str,
    kind: str,
    tags: list[str] | tuple[str, ...] | None = None,
    event_at: str | None = None,
) -> NewMemory:
    """Check every field of a new memory; raise :class:`WriteError` naming the first bad one."""
    return NewMemory(
        title=check_title(title),
        body=check_body(body),
        kind=check_kind(kind),
        tags=check_tags(tags),
        event_at=check_event_at(event_at),
    )


def render(memory: NewMemory) -> str:
    """The file's text: block-style YAML front matter (values dumped safely, so any title is
    quoted as needed; tags as one flow list) and the body."""
    fields: dict[str, object] = {"title": memory.title, "kind": memory.kind}
    if memory.event_at is not None:
        fields["event_at"] = memory.event_at
    front = yaml.safe_dump(
        fields, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000
    )
    if memory.tags:
        tags = yaml.safe_dump(
            list(memory.tags), allow_unicode=True, default_flow_style=True, width=10_000
        )
        front += f"tags: {tags.strip()}\n"
    return f"---\n{front}---\n\n{memory.body}"


def slug(title: str) -> str:
    """A file name stem from a title: lower case, words joined by '-', letters of any script
    kept, at most SLUG_CHARS characters cut at a word boundary; 'memory' if nothing is left,
    and never a device name Windows reserves ('con' becomes 'con-memory')."""
    text = unicodedata.normalize("NFKC", title).lower()
    words = [w for w in re.split(r"[\W_]+", text) if w]
    out = ""
    for word in words:
        candidate = f"{out}-{word}" if out else word
        if len(candidate) > SLUG_CHARS:
            if not out:
                out = word[:SLUG_CHARS]
            break
        out = candidate
    if out in WINDOWS_RESERVED:
        return f"{out}-memory"
    return out or "memory"


# --------------------------------------------------------------------------- paths


#: The folder ``remember`` files each kind under: the names people give such folders (the
#: bundled example store uses them), so a store never ends with ``facts/`` beside
#: ``semantic/``. Any other kind gets a folder of its own name.
KIND_FOLDERS = {
    "semantic": "facts",
    "episodic": "episodes",
    "procedural": "procedures",
    "person": "people",
    "preference": "preferences",
    "task": "tasks",
}


def folder_name(store: Store, kind: str) -> str:
    """Where a memory of ``kind`` goes: the conventional folder (:data:`KIND_FOLDERS`), unless
    the store already files that kind under the kind's own name and not the convention's (a
    store written before the convention keeps one folder per kind)."""
    usual = KIND_FOLDERS.get(kind, kind)
    if usual != kind and (store.root / kind).is_dir() and not (store.root / usual).exists():
        return kind
    return usual


def kind_folder(store: Store, kind: str) -> Path:
    """The folder for a kind (:func:`folder_name`), made if needed; refused if something other
    than a real folder (a symlink that could lead outside the store, a file) has its name."""
    folder = store.root / folder_name(store, kind)
    with suppress(FileExistsError):
        folder.mkdir()
    info = folder.lstat()
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise WriteError(
            f"{folder}: exists and is not a plain folder (a symlink or a file); "
            f"memsift writes {kind!r} memories only into a real folder of that name"
        )
    return folder


# --------------------------------------------------------------------------- atomic writes


#: A temporary file this old whose writer is gone was left by a killed write.
STALE_TEMP_S = 600
TEMP_NAME = re.compile(r"write-(\d+)-[0-9a-f]+\.tmp")


def clear_stale_temps(folder: Path) -> None:
    """Remove temporary files of writers that were killed mid-write (each may hold up to the
    size limit), and only those: a name of ours, a process id that no longer runs here, and
    older than any write takes (a store on a shared disk may have writers on other hosts)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    now = time.time()
    for entry in entries:
        match = TEMP_NAME.fullmatch(entry.name)
        if match is None or int(match.group(1)) == os.getpid():
            continue
        try:
            if now - entry.stat(follow_symlinks=False).st_mtime < STALE_TEMP_S:
                continue
            os.kill(int(match.group(1)), 0)
        except ProcessLookupError:
            with suppress(OSError):
                os.unlink(entry.path)
        except (OSError, OverflowError):
            continue  # alive (perhaps another user's), or unreadable: leave it


def staging_folder(store: Store, destination: Path) -> tuple[Path, str]:
    """Where to write a file bound for ``destination`` (a folder), and the name prefix.

    ``.memsift/tmp`` normally. A link or rename is atomic only within one filesystem, so when
    ``.memsift`` lives on another (a symlink keeping the index out of a synced folder, a bind
    mount), the file is staged in ``destination`` itself under a hidden name, which neither the
    indexer nor the watcher reads."""
    folder = store.state_dir / TEMP_DIR
    store.state_dir.mkdir(exist_ok=True)  # never the store folder: a deleted store stays gone
    folder.mkdir(exist_ok=True)
    clear_stale_temps(folder)
    if os.stat(folder).st_dev == os.stat(destination).st_dev:
        return folder, "write-"
    return destination, ".memsift-write-"


def temp_file(store: Store, data: bytes, mode: int = 0o644, *, near: Path) -> Path:
    """Write ``data`` to a new temporary file that can be linked or renamed into the folder
    ``near`` (see :func:`staging_folder`) and sync it to disk."""
    folder, prefix = staging_folder(store, near)
    path = folder / f"{prefix}{os.getpid()}-{secrets.token_hex(6)}.tmp"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(data)
            handle.flush()
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise
    os.close(fd)
    return path


def sync_folder(folder: Path) -> None:
    """Make a new or renamed entry in ``folder`` durable (POSIX; a no-op where unsupported)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def place_new(temp: Path, target: Path) -> bool:
    """Put ``temp`` at ``target`` only if nothing is there; True on success, False on a clash.

    A hard link is atomic and never replaces an existing name. Where links are not supported,
    the name is first claimed with O_EXCL and then atomically replaced by the full file."""
    try:
        os.link(temp, target)
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in (
            errno.EPERM,
            errno.EXDEV,
            errno.ENOTSUP,
            errno.EOPNOTSUPP,
            errno.EMLINK,
        ):
            raise
    try:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        return False
    try:
        os.replace(temp, target)
    except OSError:
        with suppress(OSError):  # the empty claim is ours: never leave it as a memory
            if target.lstat().st_size == 0:
                target.unlink()
        raise
    return True


def write_new_file(store: Store, folder: Path, stem: str, data: bytes) -> Path:
    """Write ``data`` as ``folder/stem.md`` (or ``stem-2.md``…): whole, synced, never over an
    existing file."""
    temp = temp_file(store, data, near=folder)
    try:
        for number in range(1, MAX_SUFFIX + 1):
            target = folder / (f"{stem}.md" if number == 1 else f"{stem}-{number}.md")
            if place_new(temp, target):
                sync_folder(folder)
                return target
        raise WriteError(f"{folder}: {MAX_SUFFIX} memories already named {stem}*; retitle it")
    finally:
        temp.unlink(missing_ok=True)


def replace_file(store: Store, target: Path, data: bytes, expected: os.stat_result) -> None:
    """Atomically replace ``target`` with ``data``, keeping its permission bits; refused when
    the file changed since it was read (another writer's edit must not be lost)."""
    temp = temp_file(store, data, stat.S_IMODE(expected.st_mode), near=target.parent)
    try:
        now = target.lstat()
        if (now.st_ino, now.st_size, now.st_mtime_ns) != (
            expected.st_ino,
            expected.st_size,
            expected.st_mtime_ns,
        ):
            raise WriteError(f"{target}: changed while it was being updated; try again")
        os.replace(temp, target)
        sync_folder(target.parent)
    finally:
        temp.unlink(missing_ok=True)


# --------------------------------------------------------------------------- the operations


def remember(
    store: Store,
    title: str,
    body: str,
    kind: str,
    tags: list[str] | tuple[str, ...] | None = None,
    event_at: str | None = None,
    *,
    embedder: Embedder | None = None,
) -> str:
    """Write a new memory and index it (with ``embedder``, its vectors too); return its key.

    The file goes to ``<kind>/<slug of title>.md``; nothing existing is ever replaced.
    """
    memory = validate(title, body, kind, tags, event_at)
    data = render(memory).encode("utf-8")
    limit = store.config().max_file_bytes
    if len(data) > limit:
        raise WriteError(
            f"the memory is {len(data)} bytes, over the store's {limit}-byte limit "
            "([limits] max_file_bytes); split it into smaller memories"
        )
    parse_memory("check.md", data)  # a file the indexer would skip is never written
    refuse_other_store(store, "remember")
    with os_refusals():
        target = write_new_file(store, kind_folder(store, memory.kind), slug(memory.title), data)
    key = store.key_of(target)
    index_written(store, key, "written", embedder=embedder)
    return key


@dataclass(frozen=True)
class ArchiveResult:
    path: str
    changed: bool  # False when the memory already had the requested state


def forget(store: Store, path: str, *, archived: bool = True) -> ArchiveResult:
    """Archive a memory (``archived: true`` in its front matter), or with ``archived=False``
    bring it back. Only that key changes; the rest of the file is kept byte for byte. An
    archived memory leaves default searches but stays on disk and in the index.

    The file is parsed twice, as it is and as it will be written (the check that the edit
    changed nothing else), and the index is handed the second parse instead of making a third:
    a large HTML page takes seconds to parse."""
    key, full = resolve_memory(store, path)
    refuse_other_store(store, "forget", key)
    data, info = read_memory(store, key, full)
    try:
        before = parse_memory(key, data)
    except Skip as skip:
        raise WriteError(f"{key}: not a usable memory ({skip.reason}); fix it first") from None
    if before.archived == archived:
        with guarded(Database.INDEX, store.index_path):
            index_paths(store, [key], preparsed=parsed_now(key, data, before))
        return ArchiveResult(key, changed=False)
    if not info.st_mode & 0o222:  # a rename would replace it anyway: respect the owner's lock
        raise WriteError(
            f"{key}: the file is read-only (mode {stat.S_IMODE(info.st_mode):o}); make it "
            "writable to archive it"
        )
    updated = set_archived(key, data, archived)
    try:
        after = parse_memory(key, updated)
    except Skip:
        after = None
    if after is None or after.archived != archived or not same_memory(before, after):
        where = (
            '<meta name="archived" content=…> meta tag'
            if PurePosixPath(key).suffix.lower() in (".html", ".htm")
            else "front matter"
        )
        raise WriteError(
            f"{key}: could not change 'archived' without touching other fields; "
            f"set archived: {str(archived).lower()} in its {where} by hand"
        )
    with os_refusals():
        replace_file(store, full, updated, info)
    done = "archived" if archived else "unarchived"
    index_written(store, key, done, preparsed=parsed_now(key, updated, after))
    return ArchiveResult(key, changed=True)


def refuse_other_store(store: Store, doing: str, key: str | None = None) -> None:
    """Refuse, before a file changes, a write into a team schema that holds another store's
    memories (:mod:`engine.pg.ownership`); nothing to check on SQLite."""
    open_backend(store).check_owner(store, doing, key)


class NotIndexed(Exception):
    """The file was written as asked, but the index could not take the change.

    Raised only after the write, so no caller reports a failure for a memory that is on disk:
    told "failed", an agent writes it again and gets a second copy under a ``-2`` name. The
    file is the memory and the index is derived from it, so the next ``memsift index`` (or a
    running ``watch``/``serve``) brings the index in step. ``key`` is the memory, ``done`` what
    was done to its file, ``reason`` the index's own one-line error."""

    def __init__(self, key: str, done: str, reason: str) -> None:
        self.key = key
        self.done = done
        self.reason = reason
        super().__init__(
            f"{key} was {done}, but the index has not taken it yet: {reason}; "
            "`memsift index` brings it in step (a running watch or serve does so by itself)"
        )


def index_written(store: Store, key: str, done: str, **how: object) -> None:
    """Index ``key`` right after its file was written; :class:`NotIndexed` if that fails."""
    try:
        with guarded(Database.INDEX, store.index_path):
            index_paths(store, [key], **how)  # type: ignore[arg-type]
    except (DatabaseError, *DRIVER_ERRORS, OSError, EmbedderError, PgError) as exc:
        raise NotIndexed(key, done, str(exc)) from exc


@contextmanager
def os_refusals() -> Iterator[None]:
    """A folder or file the OS will not let a memory be written to, or a full disk, said as
    which one and what to do (the OS's own message names no fix)."""
    try:
        yield
    except OSError as exc:
        where = exc.filename if isinstance(exc.filename, str) else "the store"
        if isinstance(exc.filename, str) and not os.path.lexists(exc.filename):
            where = os.path.dirname(exc.filename)  # a file it could not make: its folder refused
        if exc.errno in READ_ONLY_ERRNOS:
            raise WriteError(
                f"{where}: cannot be written ({exc.strerror}); make the store writable for "
                "this user, or run as its owner"
            ) from None
        if exc.errno in FULL_ERRNOS:
            raise WriteError(f"{where}: the disk is full; free some space and retry") from None
        raise


def read_memory(store: Store, key: str, full: Path) -> tuple[bytes, os.stat_result]:
    """The bytes of a memory as the indexer reads them: never through a link swapped in since
    the path was checked, never a pipe, and never past the store's size limit (a file the
    indexer skips as too large is not read whole for an agent either)."""
    try:
        return read_regular(full, store.config().max_file_bytes)
    except Unreadable as exc:
        raise WriteError(f"{key}: {exc.reason}") from None


def same_memory(a: Memory, b: Memory) -> bool:
    return (a.title, a.kind, a.event_at, a.tags, a.body) == (
        b.title,
        b.kind,
        b.event_at,
        b.tags,
        b.body,
    )


def set_archived(key: str, data: bytes, archived: bool) -> bytes:
    """The file's bytes with ``archived`` set (pure). Front matter gets its ``archived:`` line
    replaced or one added before the closing ``---``; a file without front matter gets one
    (Markdown) or an ``archived`` meta tag (HTML), and un-archiving a file whose flag is just
    what forget added (the block, or the tag where forget puts it) takes it away again, giving
    back the bytes forget found. Only the edited span is encoded: every other byte is kept as
    it was, in whatever encoding the page declares (see :mod:`engine.files.splice`)."""
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    try:
        _, codec = decode_memory(key, data)
    except Skip as skip:
        raise WriteError(f"{key}: not a usable memory ({skip.reason}); fix it first") from None
    body = data[len(bom) :]
    start, end, insert = archived_edit(key, body.decode(codec), archived)
    try:
        return bom + splice(body, codec, start, end, insert)
    except SpliceError as exc:
        raise WriteError(
            f"{key}: cannot set archived without rewriting other bytes ({exc}); "
            f"set archived: {str(archived).lower()} by hand"
        ) from None


def archived_edit(key: str, text: str, archived: bool) -> tuple[int, int, str]:
    """Where the archived flag goes in ``text`` and what it becomes (pure): the characters
    ``text[start:end]`` are replaced by the third value."""
    value = "true" if archived else "false"
    first_end = text.find("\n")
    newline = "\r\n" if first_end > 0 and text[first_end - 1] == "\r" else "\n"
    added = f"---{newline}archived: true{newline}---{newline}{newline}"
    if not archived and text.startswith(added):  # undoing the block forget added: the original
        return 0, len(added), ""
    opening = FRONT_MATTER_OPENING.match(text)  # as split_front_matter opens it: nothing else
    if opening:
        close = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE).search(text, opening.end())
        if close is None:
            raise WriteError(f"{key}: front matter is never closed; add a '---' line")
        line = ARCHIVED_LINE.search(text, opening.end(), close.start())
        if line:
            return line.start(), line.end(), archived_line(line, value)
        front = text[opening.end() : close.start()]
        gap = newline if front and not front.endswith("\n") else ""
        return close.start(), close.start(), f"{gap}archived: {value}{newline}"
    if PurePosixPath(key).suffix.lower() in (".html", ".htm"):
        return html_meta_edit(text, value, newline)
    return 0, 0, f"---{newline}archived: {value}{newline}---{newline}{newline}"


#: The front matter's ``archived`` line: the key as spelt, its value, and a trailing comment,
#: which is kept (the comment is the user's, not part of the flag).
ARCHIVED_LINE = re.compile(
    r"^(?P<key>archived[ \t]*:)(?P<gap>[ \t]*)[^\r\n]*?(?P<comment>[ \t]+#[^\r\n]*)?(?=\r?$)",
    re.MULTILINE,
)
#: A meta tag named exactly ``archived`` (not ``archived-date`` or ``data-name=archived``).
ARCHIVED_META = re.compile(
    r"<meta\b[^>]*(?<![\w-])name\s*=\s*(?:\"archived\"|'archived'|archived(?=[\s/>]))[^>]*>",
    re.IGNORECASE,
)


def archived_line(match: re.Match[str], value: str) -> str:
    return f"{match['key']}{match['gap'] or ' '}{value}{match['comment'] or ''}"


def html_meta_edit(text: str, value: str, newline: str = "\n") -> tuple[int, int, str]:
    """Set ``<meta name="archived" content=…>`` in an HTML memory, adding the tag if needed:
    after ``<head>``, else after a doctype (anything before it puts a browser in quirks mode),
    else first. Un-archiving a page whose tag is exactly the one forget adds, where forget adds
    it, removes the tag (and the line break forget gave it)."""
    masked = without_comments(text)
    found = ARCHIVED_META.search(masked)
    if found:
        if value == "false" and found.group() == ADDED_META:
            placed = added_meta_span(masked, found, newline)
            if placed is not None:
                return placed[0], placed[1], ""
        return found.start(), found.end(), with_content(found.group(), value)
    new_tag = f'<meta name="archived" content="{value}">'
    head = HEAD_TAG.search(masked)
    if head:
        return head.end(), head.end(), new_tag
    doctype = DOCTYPE.match(masked)
    if doctype:
        return doctype.end(), doctype.end(), new_tag + (doctype.group(1) or newline)
    return 0, 0, new_tag + newline


def with_content(tag: str, value: str) -> str:
    """The page's own archived tag with only its ``content`` value set to ``value``: the
    tag's spelling, case, quotes and other attributes are the user's and stay as written."""
    content = CONTENT_ATTRIBUTE.search(tag)
    if content is None:
        end = len(tag) - (2 if tag.endswith("/>") else 1)
        return f'{tag[:end].rstrip()} content="{value}"{tag[end:]}'
    quote = content["value"][0] if content["value"][0] in "\"'" else ""
    return f"{tag[: content.start('value')]}{quote}{value}{quote}{tag[content.end('value') :]}"


CONTENT_ATTRIBUTE = re.compile(
    r"(?<![\w-])content\s*=\s*(?P<value>\"[^\"]*\"|'[^']*'|[^\s>]+)", re.IGNORECASE
)


def without_comments(text: str) -> str:
    """``text`` with each HTML comment blanked out, same length (pure): a ``<head>`` or an
    archived tag inside a comment is not the page's, and positions still point into ``text``."""
    return HTML_COMMENT.sub(lambda match: " " * len(match.group()), text)


HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
#: The tag forget adds to an HTML memory that has none.
ADDED_META = '<meta name="archived" content="true">'
HEAD_TAG = re.compile(r"<head\b[^>]*>", re.IGNORECASE)
DOCTYPE = re.compile(r"\s*<!doctype\b[^>]*>[ \t]*(\r?\n)?", re.IGNORECASE)


def added_meta_span(text: str, found: re.Match[str], newline: str) -> tuple[int, int] | None:
    """The span forget's own tag takes in ``text``, with the line break it added, when the tag
    sits exactly where forget puts it; None when it is anywhere else (the user's)."""
    head = HEAD_TAG.search(text)
    if head:
        return (found.start(), found.end()) if head.end() == found.start() else None
    doctype = DOCTYPE.match(text)
    where = doctype.end() if doctype else 0
    if doctype and doctype.group(1):
        newline = doctype.group(1)
    if found.start() == where and text.startswith(newline, found.end()):
        return found.start(), found.end() + len(newline)
    return None


def list_memories(
    store: Store, scope: ScopeSpec | None = None, limit: int = 20
) -> list[dict[str, object]]:
    """The most recent memories in ``scope`` (by event time, else modification time), newest
    first, as JSON-ready records."""
    if not 1 <= limit <= 10_000:
        raise WriteError("limit must be between 1 and 10000")
    backend = open_backend(store)
    built = build_scope(scope or ScopeSpec(), dialect=backend.name)
    rows = backend.recent_rows(store, built, limit)
    return [
        {
            "path": path,
            "title": title,
            "kind": kind,
            "event_at": event_at,
            "updated_at": updated_at,
            "tags": json.loads(tags),
            "archived": bool(archived),
        }
        for path, title, kind, event_at, updated_at, tags, archived in rows
    ]
