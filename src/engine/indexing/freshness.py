"""Keep a store's index following its files while a process runs (``serve``, ``watch``).

Three threads, each simple:

* the watcher (``watchfiles``) only collects the keys of memory files that changed;
* the indexer first catches up with whatever changed while nothing was watching (a normal
  lexical index run), then indexes each batch of changed keys at once, lexically, so a file
  written behind the server's back is searchable within a moment;
* the vector filler embeds what has no vector yet, in small batches, behind the lexical index.
  While coverage is below the search threshold the vector arm stays out of searches (which
  say so: ``degraded``); it rejoins by itself when the filler has caught up.

A failure in any of them is logged as one line and retried on the next change (or after a
pause); the process keeps serving. The watcher is started, and seen to be running, before
the catch-up scan begins, so a change is either seen by the scan or reported by the watcher.
A watcher slower to start than ``WATCH_START_S`` (a loaded machine) does not hold the scan
back; but a scan begun while no watcher ran may have passed a file before it changed, so the
watcher, once it runs, asks for one more catch-up, as it does when it comes back after failing.

An ``index.db`` deleted under the watcher is rebuilt whole, once it has stayed gone a moment
with ``.memsift/`` still there (a store deleted whole loses its index just before its folders,
and must not be made again under the deletion); until then nothing is written, and a changed
file is never indexed into a new index. One made again by someone else (a write that indexed
its one memory into it, whether or not the loop saw the index gone), or moved in from another
store, is told by its name (``index_id``) and caught up with whole.

A broken ``.memsift/config.toml`` stops every step, and retrying cannot help until someone
edits it: it is logged once, again whenever the file changes and is still broken, and once
more when it is fixed; the steps wait meanwhile.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from engine.backend import open_backend
from engine.errors import IndexMissing
from engine.files.config import ConfigError
from engine.files.store import Store, walk
from engine.indexing.embedder import make_embedder
from engine.indexing.incremental import fill_missing, index_paths, indexed_under
from engine.indexing.indexer import index_store
from engine.indexing.pipeline import IndexReport, memory_key
from engine.redact import redact

#: How long to wait before retrying a step that failed (a busy database, a full disk…).
RETRY_S = 5.0
#: The watcher wakes this often (ms) even without changes, to notice a stop request.
WATCH_TICK_MS = 250
#: How often a broken config.toml is looked at again (a stat; parsed only when it changed).
CONFIG_POLL_S = 0.5
#: How long a changed config.toml must keep one signature before it is read: a save that
#: truncates the file and then writes it shows, for an instant, an empty file, which reads as
#: valid (the defaults) and was logged as "valid again" in the middle of a broken save.
CONFIG_SETTLE_S = 0.1
#: How long index.db must stay missing, its folder .memsift/ still there, before the watcher
#: rebuilds it. A store deleted whole (``rm -rf``) loses its index a moment before the folder
#: that holds it: a rebuild in that moment made the folder again under the deletion, which
#: then failed ("Directory not empty") and left a new .memsift/ behind.
INDEX_SETTLE_S = 0.5
#: How often the loop looks again at an index that is missing but not to be rebuilt yet.
INDEX_POLL_S = 0.1
#: How long the first catch-up waits for the watcher to run before scanning without it.
WATCH_START_S = 10.0


def file_signature(path: Path) -> tuple[int, ...] | None:
    """What changes when a file is written, renamed over or deleted (None: no file)."""
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def is_folder(path: Path) -> bool:
    """Whether ``path`` is a folder itself (not a link to one), never raising: a path the
    system refuses (longer than it allows) is no folder to walk."""
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file itself (not a link to one), never raising."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def describe(report: IndexReport) -> str:
    parts = [f"indexed {len(report.indexed)}", f"removed {len(report.removed)}"]
    if report.skipped:
        parts.append(f"skipped {len(report.skipped)}")
    if report.embedded:
        parts.append(f"embedded {report.embedded} chunk(s)")
    return ", ".join(parts)


#: How many changed paths a log line names; the rest are counted.
SHOWN_PATHS = 5


def some_paths(keys: set[str]) -> str:
    """The first few changed paths, and how many more there are (pure)."""
    shown = sorted(keys)[:SHOWN_PATHS]
    rest = len(keys) - len(shown)
    return ", ".join(shown) + (f" and {rest} more" if rest else "")


class Freshness:
    """The threads that keep one store's index fresh; :meth:`start`, then :meth:`stop`."""

    def __init__(
        self,
        store: Store,
        *,
        watch: bool = True,
        embed: bool = True,
        log: Callable[[str], None] | None = None,
        debounce_ms: int = 300,
    ) -> None:
        self.store = store
        self.watch = watch
        self.embed = embed
        self._log = log or (lambda _line: None)
        self.debounce_ms = debounce_ms
        self._stop = threading.Event()
        self._wake = threading.Condition()
        self._pending: set[str] = set()
        self._folders: set[str] = set()
        self._catch_up = True
        # A catch-up began, or the watcher stopped, while no watcher ran: a change made then
        # may be in neither, so the watcher asks for another catch-up once it runs.
        self._unseen = False
        self._gone = False
        self._vectors_wanted = threading.Event()
        self._watching = threading.Event()
        self._threads: list[threading.Thread] = []
        self.caught_up = threading.Event()
        self.last_error: str | None = None
        self._failing: str | None = None  # the step last_error is about, until it works again
        self.last_change: str | None = None
        self.filling_vectors = False
        self._config_lock = threading.Lock()
        self._config_seen: tuple[int, ...] | bool | None = False  # False: never looked
        self._config_problem: str | None = None
        #: A changed signature not yet read, and when it was first seen (monotonic seconds).
        self._config_changing: tuple[tuple[int, ...] | None, float] | None = None
        #: Since when (monotonic seconds) the index has been seen missing; None: it is there.
        self._index_missing_since: float | None = None
        self._told_folder_gone = False
        #: The index.db this watcher keeps: its file signature when last looked at, and its
        #: name (:func:`engine.sqlite.db.index_id`); None before the first catch-up.
        self._index_kept: tuple[tuple[int, ...] | None, str | None] | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        if self.watch:
            self._spawn(self._watch_loop, "memsift-watch")
        self._spawn(self._index_loop, "memsift-index")
        if self.embed:
            self._spawn(self._vector_loop, "memsift-vectors")

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._vectors_wanted.set()
        with self._wake:
            self._wake.notify_all()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        # Daemon threads: a process that exits mid-transaction is a killed run, which the index
        # is built to survive, and must never hang on an embedding batch.
        thread = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def status(self) -> dict[str, object]:
        with self._wake:
            pending = len(self._pending)
        return {
            "watching": self._watching.is_set() and not self._stop.is_set(),
            "caught_up": self.caught_up.is_set(),
            "pending_files": pending,
            "filling_vectors": self.filling_vectors,
            "last_change": self.last_change,
            # While the folder is gone that is the error, whatever a step that was running
            # when it went reported after it (an index run cut off by the deletion fails too);
            # and so is a .memsift/ gone whole, which the loop waits for someone to make again.
            "last_error": self._gone_error() or self._state_gone_error() or self.last_error,
        }

    def _state_gone_error(self) -> str | None:
        """Why nothing is indexed while ``.memsift/`` is gone, as the log says it once and the
        status an agent reads says it until the folder is made again."""
        if not self._told_folder_gone:
            return None
        return (
            f"{self.store.state_dir} is gone (the index, configuration and state with it): "
            "indexing waits; `memsift index` makes the store again"
        )

    def _gone_error(self) -> str | None:
        if not self._gone:
            return None
        return f"the store folder {self.store.root} is gone; waiting for it to return"

    def notify(self, keys: set[str], folders: set[str] | None = None) -> None:
        """Queue memory ``keys`` for indexing, and other changed paths that may be ``folders``
        (the watcher's hand-off; also usable directly)."""
        if not keys and not folders:
            return
        with self._wake:
            self._pending |= keys
            self._folders |= folders or set()
            self._wake.notify_all()

    # ------------------------------------------------------------------ threads

    def _root_identity(self) -> tuple[int, int] | None:
        """(device, inode) of the store folder, or None when it is gone (or not a folder)."""
        try:
            info = os.stat(self.store.root)
        except OSError:
            return None
        return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None

    def _await_root(self) -> tuple[tuple[int, int] | None, bool]:
        """The store folder's identity once it exists (None: stopped first), and whether it
        was gone; while it is gone, say so once and wait. A folder that comes back (``rm -rf``
        then ``git clone``) is a new folder: catch up."""
        identity = self._root_identity()
        if identity is not None:
            return identity, False
        self._watching.clear()
        self._gone = True
        self.last_error = self._gone_error()
        self.log(str(self.last_error))
        while identity is None and not self._stop.wait(0.5):
            identity = self._root_identity()
        if identity is not None:
            self._catch_up_again("is back")
        return identity, True

    def _catch_up_again(self, why: str) -> None:
        """A store folder that is not the one watched so far: index it afresh."""
        self.log(f"the store folder {self.store.root} {why}: catching up")
        self.last_error = None
        with self._wake:
            self._catch_up = True
            self._gone = False
            self._wake.notify_all()

    def _watch_loop(self) -> None:
        import watchfiles

        root = str(self.store.root)
        identity = None
        while not self._stop.is_set():
            current, came_back = self._await_root()
            if current is None:
                return
            if identity is not None and current != identity and not came_back:
                self._catch_up_again("was replaced by another folder")
            identity = current
            try:
                for changes in watchfiles.watch(
                    root,
                    watch_filter=self._wanted,
                    debounce=max(self.debounce_ms, 60),
                    step=50,
                    stop_event=self._stop,
                    rust_timeout=WATCH_TICK_MS,
                    yield_on_timeout=True,
                    raise_interrupt=False,
                ):
                    if self._root_identity() != identity:  # deleted or replaced: rewatch
                        break
                    if not self._watching.is_set():
                        self._now_watching()
                    keys: set[str] = set()
                    folders: set[str] = set()
                    for _, path in changes:
                        key = memory_key(self.store, path)
                        if key is not None:
                            keys.add(key)
                        elif (relative := self._relative(path)) is not None:
                            folders.add(relative)
                    self.notify(keys, folders)
                with self._wake:  # rewatching (or stopping): seen to run again before it counts
                    self._watching.clear()
            except Exception as exc:  # a vanished or unreadable folder: report and retry
                with self._wake:  # what changes until it runs again is seen by nothing
                    self._watching.clear()
                    self._unseen = True
                self._failed("watching", exc)
                self._stop.wait(RETRY_S)

    def _wanted(self, _change: object, path: str) -> bool:
        """Which changes the watcher hands over: those outside hidden folders, and until it is
        seen to run, any. watchfiles comes back only with changes that pass, or after a quiet
        tick: a store whose ``.memsift`` (or ``.git``) never rests, an index polled by another
        process, would otherwise never let it say it runs."""
        return not self._watching.is_set() or self._relative(path) is not None

    def _now_watching(self) -> None:
        """The watcher runs (its first round came back): from now on every change is reported.
        If a catch-up began, or the watcher stopped, while none ran, catch up once more."""
        with self._wake:
            self._watching.set()
            if self._unseen:
                self._unseen = False
                self._catch_up = True
                self._wake.notify_all()

    def _index_loss(self) -> str | None:
        """What to do about the index this watcher keeps having been deleted since
        (``index.db`` is derived and may go any time): None, nothing (it is there, or lives in
        a team database); ``"rebuild"``, a whole catch-up (indexing only the next changed file
        into a new one would leave the rest of the store out of every search); ``"wait"``,
        nothing yet, and nothing written either; ``"catch up"``, a whole catch-up on an index
        made again by someone else (``memsift index``, or a write that indexed its one memory
        into a new index, which would otherwise stay partial), whether or not the loop saw it
        gone, or moved in from another store (:meth:`_index_replaced`).

        It is rebuilt once it has stayed missing for :data:`INDEX_SETTLE_S` with its folder
        ``.memsift/`` still there: a store being deleted whole loses its index a moment before
        that folder and the store's own, and a rebuild then would make them again. A store
        whose ``.memsift/`` is gone (its configuration and state with it) is not made again
        behind its owner's back: the loop waits, and says so once."""
        if not self.caught_up.is_set():
            return None
        if self.store.index_path.exists():
            seen_gone = self._index_missing_since is not None
            self._index_missing_since, self._told_folder_gone = None, False
            return "catch up" if seen_gone or self._index_replaced() else None
        try:
            if open_backend(self.store).name != "sqlite":
                return None
        except ConfigError:  # broken since the check: the next round waits for a fix
            return None
        now = time.monotonic()
        if self._index_missing_since is None:
            self._index_missing_since = now
        if now - self._index_missing_since < INDEX_SETTLE_S:
            return "wait"
        if not is_folder(self.store.state_dir):
            if not self._told_folder_gone:
                self._told_folder_gone = True
                self.log(str(self._state_gone_error()))
            return "wait"
        self._index_missing_since = None
        return "rebuild"

    def _index_replaced(self) -> bool:
        """Whether ``index.db`` is no longer the file this watcher keeps: made again (a write
        into a missing index, between two of the loop's looks) or moved in from another store.
        Read only when the file's signature changed (a checkpoint, a rename over it), so an idle
        loop costs a stat; a file without a name yet (being made right now) is looked at again
        on the next round."""
        from engine.sqlite.db import index_id  # an index.db file is SQLite's

        kept = self._index_kept
        signature = file_signature(self.store.index_path)
        if kept is None or signature == kept[0]:
            return False
        name = index_id(self.store.index_path)
        if name is None:
            return False
        self._index_kept = (signature, name)
        return kept[1] is not None and name != kept[1]

    def _keep_index(self) -> bool:
        """Remember the index.db a whole catch-up has just brought in step with the store (a
        team store has none: nothing to remember), and say whether it is whole: one that no
        full run finished (meta ``complete``) was made behind the catch-up, which filled a
        file deleted meanwhile (a write into the new one indexed only its own memory)."""
        from engine.sqlite.db import INDEX_ID, index_meta, index_run_in_progress

        path = self.store.index_path
        if not path.exists():
            self._index_kept = None
            return True  # gone again, or a team store's: the next look settles it
        signature = file_signature(path)
        name, complete = index_meta(path, INDEX_ID, "complete")
        self._index_kept = (signature, name)
        # Unreadable: for the next look; a `memsift index` begun since finishes it itself.
        return name is None or complete == "1" or index_run_in_progress(path.parent)

    def _relative(self, path: str) -> str | None:
        """The store-relative form of a path outside hidden folders, else None."""
        try:
            relative = Path(path).relative_to(self.store.root).as_posix()
        except ValueError:
            return None
        if relative == "." or any(part.startswith(".") for part in relative.split("/")):
            return None
        return relative

    def _inside(self, folders: set[str]) -> set[str]:
        """The memory keys a folder change stands for. The watcher reports a folder moved in or
        out (or deleted) as one event, not its files: so list the memory files now in a folder
        that appeared, and the indexed keys under one that went away (they will be removed)."""
        keys: set[str] = set()
        gone = []
        for folder in folders:
            full = self.store.root / folder
            if is_folder(full):
                # The store's own walk: no recursion, and the same folders left out
                for candidate in walk(self.store, full):
                    key = memory_key(self.store, candidate.path)
                    if key is not None:
                        keys.add(key)
            else:  # gone, or no longer a folder: what was indexed under it is gone
                gone.append(folder)
        return keys | indexed_under(self.store, gone)

    def _index_loop(self) -> None:
        if self.watch:  # see the module docstring: watch first, then scan
            self._watching.wait(timeout=WATCH_START_S)
        while not self._stop.is_set():
            if self._gone or self._root_identity() is None:
                # Indexing now would make the folder again (an index needs .memsift/): drop
                # the deletion's events; the catch-up when it returns rescans everything.
                with self._wake:
                    self._pending.clear()
                    self._folders.clear()
                    self._wake.wait(timeout=0.5)
                continue
            if not self._config_usable():
                self._stop.wait(CONFIG_POLL_S)
                continue
            loss = None if self._catch_up else self._index_loss()
            if loss == "wait":  # neither rebuilt nor written into a new, partial index
                self._stop.wait(INDEX_POLL_S)
                continue
            if loss == "rebuild":
                self.log(f"the index {self.store.index_path} is gone: rebuilding it")
                self._catch_up = True
            elif loss == "catch up":
                self.log(
                    f"the index {self.store.index_path} was made again, or replaced, behind "
                    "the watcher: catching up with the whole store"
                )
                self._catch_up = True
            if self._catch_up:
                with self._wake:  # cleared first: a request made during the scan is kept
                    self._catch_up = False
                    if self.watch and not self._watching.is_set():
                        self._unseen = True
                had_folder = is_folder(self.store.state_dir)
                try:
                    report = index_store(self.store, embed=False)
                except Exception as exc:
                    cut_off = had_folder and not is_folder(self.store.state_dir)
                    if cut_off and self.caught_up.is_set():
                        # Cut off by .memsift/ being deleted (SQLite fails when its -wal
                        # goes mid-write): a retry would make it again behind its owner's
                        # back; the index's next look waits for it, and says so once.
                        continue
                    with self._wake:
                        self._catch_up = True
                    self._failed("catching up", exc)
                    self._stop.wait(RETRY_S)
                    continue
                self._works_again("catching up")
                whole = self._keep_index()
                self.caught_up.set()
                hint = " (`memsift index` lists why)" if report.skipped else ""
                self.log(f"caught up with the store: {describe(report)}{hint}")
                for line in report.move_lines():
                    self.log(line)
                if not whole:
                    self.log(
                        f"the index {self.store.index_path} was made again during the catch-up: "
                        "catching up with the whole store"
                    )
                    with self._wake:
                        self._catch_up = True
                self._vectors_wanted.set()
                continue
            with self._wake:
                if not self._pending and not self._folders:
                    self._wake.wait(timeout=1.0)
                    continue
                keys, self._pending = self._pending, set()
                folders, self._folders = self._folders, set()
            try:
                # A key that is not a file may be a folder named like a memory (notes.md/),
                # moved in or out whole: list what it holds, or held, as for any folder.
                maybe = {key for key in keys if not is_file(self.store.root / key)}
                keys |= self._inside(folders | maybe)
                # Never into a new index: gone since the look above (a store deleted whole
                # takes .memsift/ with it), it is for the next round's look to settle.
                report = index_paths(self.store, keys, create=False)
            except IndexMissing:
                with self._wake:
                    self._pending |= keys
                    self._folders |= folders
                self._stop.wait(INDEX_POLL_S)
                continue
            except Exception as exc:
                self._failed("indexing changed files", exc)
                with self._wake:
                    self._pending |= keys
                    self._folders |= folders
                self._stop.wait(RETRY_S)
                continue
            self._works_again("indexing changed files")
            if report.indexed or report.removed or report.skipped:
                self.last_change = time.strftime("%Y-%m-%dT%H:%M:%S")
                self.log(f"{describe(report)}: {some_paths(keys)}")
                for path, reason in report.skipped:  # as `memsift index` says it: fix, save
                    self.log(f"skipped {path}: {reason}")
                for line in report.move_lines():
                    self.log(line)
                self._vectors_wanted.set()

    def _vector_loop(self) -> None:
        while not self._stop.is_set():
            self._vectors_wanted.wait()
            if self._stop.is_set():
                return
            self._vectors_wanted.clear()
            if not self._config_usable():
                self._stop.wait(CONFIG_POLL_S)
                self._vectors_wanted.set()
                continue
            try:
                embedder = make_embedder(self.store.config().model)
                if embedder is None:
                    continue
                self.filling_vectors = True
                done = fill_missing(self.store, embedder, stop=self._stop)
                if done is None:  # vectors of another model: a full run switches cleanly
                    self.log("embedding model changed: re-embedding the store")
                    done = index_store(self.store, embedder=embedder).embedded
                if done:
                    self.log(f"embedded {done} chunk(s)")
                self._works_again("embedding")
            except Exception as exc:
                self._failed("embedding", exc)
                self._stop.wait(RETRY_S)
                self._vectors_wanted.set()
            finally:
                self.filling_vectors = False

    def _config_usable(self, settle: bool = True) -> bool:
        """Whether ``config.toml`` can be read, saying so only when that changes: a broken
        file is logged once (again only if it is rewritten and broken another way), a fixed one
        once. The file is parsed only when it changed since the last look, so the loops may ask
        on every round; and, after the first look, only once the change has held still for
        :data:`CONFIG_SETTLE_S` (until then the last verdict stands), so a save caught half
        done is not taken for the file. ``settle=False`` reads a changed file at once (a step
        that just failed on it)."""
        seen = file_signature(self.store.config_path)
        with self._config_lock:
            if seen == self._config_seen:
                return self._config_problem is None
            if settle and self._config_seen is not False:
                now = time.monotonic()
                if self._config_changing is None or self._config_changing[0] != seen:
                    self._config_changing = (seen, now)
                    return self._config_problem is None
                if now - self._config_changing[1] < CONFIG_SETTLE_S:
                    return self._config_problem is None
            self._config_changing = None
            try:
                self.store.config()
            except ConfigError as exc:
                # The same complaint again is not news: the signature taken before the read
                # may be that of a save still in progress (truncated, then written), which
                # makes the next round read the same broken text once more.
                again = str(exc) == self._config_problem
                self._config_seen, self._config_problem = seen, str(exc)
                self.last_error = self._config_problem
                if not again:
                    self.log(f"{exc} (indexing waits until the file is fixed)")
                return False
            self._config_seen = seen
            if self._config_problem is not None:
                if self.last_error == self._config_problem:
                    self.last_error = None
                self._config_problem = None
                self.log(f"{self.store.config_path} is valid again: indexing resumes")
            return True

    def log(self, line: str) -> None:
        """One line for the owner's log, never with a database password: the lines quote
        errors, and a driver's error may quote a connection string."""
        self._log(redact(line))

    def _failed(self, doing: str, exc: BaseException) -> None:
        if isinstance(exc, ConfigError) and not self._config_usable(settle=False):
            return  # broken between the check and the step: reported once, by the check
        self.last_error = redact(f"{doing}: {type(exc).__name__}: {exc}")
        self._failing = doing
        self.log(f"error while {self.last_error} (retrying)")

    def _works_again(self, doing: str) -> None:
        """A step that failed has just succeeded: its error leaves ``status`` (an agent reading
        an error that no longer holds would distrust a store that is fine), and the log says
        so once."""
        if self._failing == doing:
            self._failing = None
            self.last_error = None
            self.log(f"{doing} works again")
