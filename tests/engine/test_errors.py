"""Database errors name the database that failed and the fix that fits it.

A damaged index is deleted and rebuilt; a damaged state.db must never be, so the advice depends
on which one failed. These tests break each database for real (garbage bytes, corrupt pages, a
read-only folder, a full disk, a first run caught half-way) and read what the user is told.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner

from engine.cli import cli
from engine.errors import Database, DatabaseError, Problem, explain
from engine.files.store import Store, open_store
from engine.sqlite import db
from engine.sqlite.errors import classify, from_exception

LEXICAL = '[embedder]\nmodel = "none"\n'


def run(store: Store | Path, *args: str):  # type: ignore[no-untyped-def]
    root = store.root if isinstance(store, Store) else store
    return CliRunner().invoke(cli, ["--store", str(root), *args], catch_exceptions=False)


@pytest.fixture
def store(make_store) -> Store:  # type: ignore[no-untyped-def]
    """A small lexical store, indexed, with one memory read (so state.db exists)."""
    made = make_store(
        {
            ".memsift/config.toml": LEXICAL,
            "facts/deploy.md": "---\ntitle: Deploy\n---\nDeploy with make deploy.\n",
            "facts/port.md": "# Staging port\n\nThe staging database listens on 5432.\n",
        }
    )
    assert run(made, "index").exit_code == 0
    assert run(made, "read", "facts/deploy.md").exit_code == 0
    return made


def checkpoint(path: Path) -> None:
    """Fold the -wal into the file and drop it, as a clean last close does."""
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    conn.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def garble_header(path: Path) -> None:
    checkpoint(path)
    path.write_bytes(b"this is not a SQLite database\n" * 200)


def garble_pages(path: Path) -> None:
    """Keep the header and schema page, break the table pages behind them."""
    checkpoint(path)
    with path.open("r+b") as handle:
        handle.seek(4096)
        handle.write(b"\xff" * 4096 * 8)


def fill_state(store: Store, rows: int = 3000) -> None:
    """Enough state rows that the access table spans many pages."""
    conn = apsw.Connection(str(store.state_path))
    with conn:
        conn.executemany(
            "INSERT INTO access(path, access_count, last_accessed_at) "
            "VALUES (?, 1, '2026-01-01 00:00:00')",
            [(f"gone/{n:05d}.md",) for n in range(rows)],
        )
    conn.close()


# --- the pure mapping -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "problem"),
    [
        (apsw.CorruptError("database disk image is malformed"), Problem.CORRUPT),
        (apsw.NotADBError("file is not a database"), Problem.CORRUPT),
        (apsw.ReadOnlyError("attempt to write a readonly database"), Problem.READ_ONLY),
        (apsw.FullError("database or disk is full"), Problem.FULL),
        (apsw.BusyError("database is locked"), Problem.BUSY),
        (apsw.LockedError("database table is locked"), Problem.BUSY),
        (apsw.CantOpenError("unable to open database file"), Problem.CANT_OPEN),
        (apsw.IOError("disk I/O error"), Problem.IO),
        (apsw.SQLError("no such table: files"), Problem.EMPTY),
        (apsw.SQLError("near 'x': syntax error"), Problem.OTHER),
        (OSError(errno.ENOSPC, "No space left on device"), Problem.FULL),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), Problem.FULL),
        (OSError(errno.EROFS, "Read-only file system"), Problem.READ_ONLY),
        (OSError(errno.EACCES, "Permission denied"), Problem.READ_ONLY),
        (OSError(errno.EIO, "Input/output error"), Problem.IO),
    ],
)
def test_each_exception_maps_to_the_problem_a_user_can_act_on(exc, problem):
    assert classify(exc) is problem


def test_only_a_damaged_index_is_ever_advised_to_be_deleted():
    index = explain(Database.INDEX, "s/.memsift/index.db", Problem.CORRUPT, "malformed")
    state = explain(Database.STATE, "s/.memsift/state.db", Problem.CORRUPT, "malformed")
    assert "delete it and run `memsift index`" in index
    assert "do not delete it" in state
    assert '`sqlite3 s/.memsift/state.db ".recover"' in state
    assert "backup" in state
    assert "durable" in state


@pytest.mark.parametrize("problem", list(Problem))
@pytest.mark.parametrize("database", list(Database))
def test_every_message_is_one_line_naming_the_database(database, problem):
    path = f"s/.memsift/{database.value}"
    message = explain(database, path, problem, "detail", culprit="s/.memsift")
    assert "\n" not in message
    assert path in message
    if database is Database.STATE:
        assert "delete it and run" not in message


def test_a_read_only_error_names_the_folder_that_stops_the_write():
    message = explain(Database.INDEX, "s/.memsift/index.db", Problem.READ_ONLY, "", "s/.memsift")
    assert message.startswith("s/.memsift is read-only")
    assert "searches, `status` and `read` still work" in message


def test_an_os_error_brings_its_own_file_as_the_culprit():
    exc = PermissionError(errno.EACCES, "Permission denied", "s/.memsift/index.lock")
    error = from_exception(Database.INDEX, "s/.memsift/index.db", exc)
    assert error.problem is Problem.READ_ONLY
    assert error.culprit == "s/.memsift/index.lock"
    assert "Permission denied" in str(error)


# --- a damaged state.db -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ("search", "deploy"),
        ("read", "facts/deploy.md"),
        ("reinforce", "facts/deploy.md", "--outcome", "1"),
        ("status",),
        ("state", "prune", "--dry-run"),
    ],
    ids=lambda c: c[0] if c[0] != "state" else "prune",
)
def test_a_state_db_that_is_not_a_database_is_named_and_never_blamed_on_the_index(store, command):
    garble_header(store.state_path)
    before = store.state_path.read_bytes()
    result = run(store, *command)
    assert result.exit_code == 2
    assert str(store.state_path) in result.stderr
    assert "do not delete it" in result.stderr
    assert ".recover" in result.stderr
    assert "delete it and run" not in result.stderr
    assert result.stderr.count("\n") == 1
    assert store.state_path.read_bytes() == before


def test_a_search_blames_state_db_when_its_pages_are_damaged(store):
    fill_state(store)
    garble_pages(store.state_path)
    result = run(store, "search", "deploy")
    assert result.exit_code == 2
    assert "state.db (the durable state plane" in result.stderr
    assert "index.db" not in result.stderr.replace("index.db is not the cause", "")


# --- a damaged index.db -----------------------------------------------------------------------


def test_a_damaged_index_is_named_with_the_advice_to_rebuild_it(store):
    garble_header(store.index_path)
    result = run(store, "search", "deploy")
    assert result.exit_code == 2
    assert f"{store.index_path} (the derived index) is damaged" in result.stderr
    assert "delete it and run `memsift index`" in result.stderr


def test_read_prints_a_healthy_memory_and_counts_it_when_the_index_is_damaged(store):
    garble_header(store.index_path)
    result = run(store, "read", "facts/deploy.md", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["text"].endswith("Deploy with make deploy.\n")
    assert (data["access_count"], data["counted"]) == (2, True)


def test_reinforce_works_when_the_index_is_damaged(store):
    garble_header(store.index_path)
    assert run(store, "reinforce", "facts/deploy.md", "--outcome", "1").exit_code == 0


# --- a read-only store ------------------------------------------------------------------------


@contextmanager
def read_only(*paths: Path) -> Iterator[None]:
    """Make ``paths`` read-only for real: file modes for a normal user; the immutable flag for
    root, whom modes do not stop. Skips where neither can be done."""
    if os.geteuid() != 0:
        modes = {path: path.stat().st_mode for path in paths}
        for path in paths:
            path.chmod(modes[path] & ~0o222)
        try:
            yield
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", *paths], capture_output=True).returncode:
        pytest.skip("running as root without chattr +i: cannot make a folder read-only")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", *paths], check=True)


@contextmanager
def read_only_store(store: Store, *, wal: bool) -> Iterator[None]:
    """The store's folders and databases read-only; ``wal``: with -wal/-shm files beside them
    (a store copied while in use), else cleanly closed (the usual read-only copy)."""
    for path in (store.index_path, store.state_path):
        checkpoint(path)
        if wal:
            conn = db.connect(path)
            conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
            conn.close()
    memsift = sorted(store.state_dir.iterdir())
    folders = [store.state_dir, *sorted(p for p in store.root.rglob("*") if p.is_dir())]
    with read_only(*memsift, *folders, store.root):
        assert not os.access(store.state_dir, os.W_OK)
        yield


@pytest.mark.parametrize("wal", [False, True], ids=["clean", "with-wal"])
def test_a_read_only_store_is_searchable(store, wal):
    with read_only_store(store, wal=wal):
        result = run(store, "search", "staging port", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert "facts/port.md" in [hit["path"] for hit in data["hits"]]
    assert "salience" in data["arms_fired"]  # state.db was attached read-only


@pytest.mark.parametrize("wal", [False, True], ids=["clean", "with-wal"])
def test_status_works_in_a_read_only_store(store, wal):
    with read_only_store(store, wal=wal):
        result = run(store, "status", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["state_rows"] == 1


@pytest.mark.parametrize("wal", [False, True], ids=["clean", "with-wal"])
def test_list_works_in_a_read_only_store(store, wal):
    # it opened index.db for writing, and was refused as `index` is
    with read_only_store(store, wal=wal):
        result = run(store, "list", "--json")
    assert result.exit_code == 0, result.stderr
    assert "facts/port.md" in [memory["path"] for memory in json.loads(result.stdout)]


def test_read_in_a_read_only_store_prints_the_memory_and_warns_it_was_not_counted(store):
    with read_only_store(store, wal=False):
        plain = run(store, "read", "facts/deploy.md")
        data = json.loads(run(store, "read", "facts/deploy.md", "--json").stdout)
    assert plain.exit_code == 0
    assert plain.stdout.endswith("Deploy with make deploy.\n")
    assert plain.stderr == (
        f"memsift: warning: the access was not counted: {store.state_dir} is read-only\n"
    )
    assert (data["access_count"], data["counted"]) == (1, False)


@pytest.mark.parametrize(
    "command", [("index",), ("reinforce", "facts/deploy.md", "--outcome", "1")]
)
def test_a_write_to_a_read_only_store_names_the_read_only_folder(store, command):
    with read_only_store(store, wal=False):
        result = run(store, *command)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"memsift: {store.state_dir} is read-only, so ")
    assert result.stderr.count("\n") == 1


def test_remember_in_a_read_only_store_names_the_folder_not_a_file_it_never_made(store):
    (store.state_dir / "tmp").mkdir(exist_ok=True)  # where a new memory is staged
    with read_only_store(store, wal=False):
        result = run(store, "remember", "--title", "New", "--body", "text", "--kind", "semantic")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"memsift: {store.state_dir / 'tmp'}: cannot be written (")
    assert result.stderr.count("\n") == 1


def test_index_in_a_store_whose_folder_is_read_only_names_that_folder(make_store):
    made = make_store({"a.md": "# A\n\nalpha"})
    with read_only(made.root):
        result = run(made, "index", "--no-embed")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"memsift: {made.root} is read-only, so ")
    assert not made.state_dir.exists()


# --- a full disk ------------------------------------------------------------------------------


class FullDisk(apsw.VFS):
    """The default VFS while a test runs: writes to files under ``root`` fail with SQLITE_FULL
    once ``budget`` bytes have been written (a full disk, without needing one)."""

    def __init__(self, root: Path, budget: int) -> None:
        self.root, self.budget = str(root), budget
        super().__init__("full-disk", base="", makedefault=True)

    def xOpen(self, name, flags):  # type: ignore[no-untyped-def]
        return FullDiskFile(self, name, flags)


class FullDiskFile(apsw.VFSFile):
    def __init__(self, disk: FullDisk, name, flags) -> None:  # type: ignore[no-untyped-def]
        self.disk = disk
        self.watched = str(name.filename() if hasattr(name, "filename") else name).startswith(
            disk.root
        )
        super().__init__("unix", name, flags)

    def xWrite(self, data, offset) -> None:  # type: ignore[no-untyped-def]
        if self.watched:
            if self.disk.budget < len(data):
                raise apsw.FullError("database or disk is full")
            self.disk.budget -= len(data)
        super().xWrite(data, offset)


@contextmanager
def full_disk(root: Path, budget: int = 0) -> Iterator[FullDisk]:
    disk = FullDisk(root, budget)
    try:
        yield disk
    finally:
        disk.unregister()


@pytest.fixture
def big_store(make_store) -> Store:  # type: ignore[no-untyped-def]
    files = {".memsift/config.toml": LEXICAL}
    for n in range(120):
        files[f"notes/n{n:03d}.md"] = f"# Note {n}\n\n" + f"staging fact number {n}. " * 80
    return make_store(files)


def test_an_index_run_on_a_full_disk_says_so_and_names_index_db(big_store):
    with full_disk(big_store.root, budget=300_000):
        result = run(big_store, "index")
    assert result.exit_code == 2
    # Progress lines may come first (stderr is not a terminal); the error is the last line.
    assert result.stderr.splitlines()[-1].startswith("memsift: the disk is full: ")
    assert str(big_store.index_path) in result.stderr
    assert "Traceback" not in result.output


def test_the_wal_left_by_a_full_disk_run_blocks_no_later_command(big_store):
    with full_disk(big_store.root, budget=300_000) as disk:
        assert run(big_store, "index").exit_code == 2
        assert Path(f"{big_store.index_path}-wal").exists()
        disk.budget = 0  # still full: reading must not need to write
        assert run(big_store, "search", "staging fact").exit_code in (0, 1)
        assert run(big_store, "status").exit_code == 0
    finished = run(big_store, "index", "--json")  # space again: the run completes
    assert finished.exit_code == 0
    assert json.loads(run(big_store, "status", "--json").stdout)["files"] == 120
    conn = db.connect(big_store.index_path)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()


def test_read_on_a_full_disk_names_state_db(store):
    with full_disk(store.root):
        result = run(store, "read", "facts/deploy.md")
    assert result.exit_code == 2
    assert result.stderr.startswith("memsift: the disk is full: ")
    assert f"{store.state_path} (the durable state plane" in result.stderr


# --- a first index run caught half-way --------------------------------------------------------


@contextmanager
def index_run_holding_the_lock(store: Store) -> Iterator[None]:
    """What a concurrent first run looks like from outside: the lock held, index.db created
    (WAL mode), its tables not yet committed."""
    import fcntl

    store.state_dir.mkdir(exist_ok=True)
    db.connect(store.index_path).close()
    with (store.state_dir / db.LOCK_NAME).open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield


def test_a_search_during_a_first_run_waits_for_its_tables(make_store, monkeypatch):
    store = make_store({".memsift/config.toml": LEXICAL, "a.md": "# Alpha\n\nalpha"})
    waits = []

    def first_run_commits_its_schema(seconds: float) -> None:
        waits.append(seconds)
        db.open_index(store.index_path, create=True).close()

    monkeypatch.setattr(db, "sleep", first_run_commits_its_schema, raising=False)
    with index_run_holding_the_lock(store):
        result = run(store, "search", "alpha")
    assert len(waits) == 1
    assert result.exit_code == 1  # an empty index: no hits, and no error
    assert "memsift: semantic ranking off: " in result.stderr  # it ran and said how


def test_a_first_run_that_takes_too_long_is_reported_as_indexing_in_progress(
    make_store, monkeypatch
):
    store = make_store({".memsift/config.toml": LEXICAL, "a.md": "# Alpha\n\nalpha"})
    monkeypatch.setattr(db, "sleep", lambda seconds: None, raising=False)
    with index_run_holding_the_lock(store):
        result = run(store, "search", "alpha")
    assert result.exit_code == 2
    assert "indexing in progress" in result.stderr
    assert "retry in a moment" in result.stderr
    assert "damaged" not in result.stderr


def test_an_index_without_tables_and_no_run_says_to_index(make_store):
    store = make_store({"a.md": "# Alpha\n\nalpha"})
    store.state_dir.mkdir()
    db.connect(store.index_path).close()
    result = run(store, "status")
    assert result.exit_code == 2
    assert "holds no index yet" in result.stderr and "run `memsift index`" in result.stderr


def test_a_database_error_carries_which_database_failed(store):
    garble_header(store.state_path)
    from engine import state

    with pytest.raises(DatabaseError) as caught:
        state.record_access(open_store(store.root), "facts/deploy.md")
    assert caught.value.database is Database.STATE
    assert caught.value.problem is Problem.CORRUPT
