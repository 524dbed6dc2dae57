"""The write path: remember writes a whole new file and indexes it, forget flips one key and
keeps every other byte, list shows what is there; no path leaves the store."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import apsw
import pytest

import engine.agents.write
from conftest import HashEmbedder
from engine import state as state_plane
from engine.agents.write import (
    KIND_FOLDERS,
    NotIndexed,
    WriteError,
    forget,
    list_memories,
    remember,
    set_archived,
    slug,
)
from engine.files.memory import parse_memory
from engine.indexing.indexer import index_store
from engine.ranking.scope import ScopeSpec
from engine.search import search
from engine.sqlite.db import open_index, read_meta

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def store(make_store):  # type: ignore[no-untyped-def]
    return make_store({"facts/port.md": "---\ntitle: Port\nkind: semantic\n---\nPort 6432.\n"})


def rows(store, sql, params=()):  # type: ignore[no-untyped-def]
    conn = open_index(store.index_path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


# --------------------------------------------------------------------------- remember


def test_remember_writes_markdown_with_front_matter_under_the_kind_folder(store):
    key = remember(
        store,
        "Staging DB: port 6432!",
        "Staging Postgres listens on 6432.",
        "semantic",
        ["Infra", "staging", "infra"],
        "2026-10-03",
    )
    assert key == "facts/staging-db-port-6432.md"
    memory = parse_memory(key, (store.root / key).read_bytes())
    assert memory.title == "Staging DB: port 6432!"
    assert memory.kind == "semantic"
    assert memory.tags == ("infra", "staging")
    assert memory.event_at == "2026-10-03 00:00:00"
    assert memory.body == "Staging Postgres listens on 6432."
    assert memory.archived is False


def test_remember_round_trips_a_datetime_event_in_utc(store):
    key = remember(store, "Deploy", "Went out.", "episodic", None, "2026-10-03T16:20:00+02:00")
    assert parse_memory(key, (store.root / key).read_bytes()).event_at == "2026-10-03 14:20:00"


def test_remember_never_overwrites_a_file_and_suffixes_the_clash(store):
    existing = store.root / "facts" / "port.md"
    existing.write_bytes(b"the user's own file\n")
    first = remember(store, "Port", "One.", "semantic")
    second = remember(store, "Port", "Two.", "semantic")
    assert (first, second) == ("facts/port-2.md", "facts/port-3.md")
    assert existing.read_bytes() == b"the user's own file\n"
    assert "One." in (store.root / first).read_text()
    assert "Two." in (store.root / second).read_text()


def test_remember_indexes_the_file_with_vectors_before_returning(store):
    embedder = HashEmbedder()
    index_store(store, embedder=embedder)
    key = remember(
        store, "Pager rota", "Ana carries the pager this week.", "semantic", embedder=embedder
    )
    result = search(store, "who carries the pager", embedder=embedder)
    assert result.hits[0].path == key
    assert "vector" in result.hits[0].arms
    [(coverage,)] = rows(
        store,
        "SELECT count(e.hash) * 1.0 / count(*) FROM chunks AS c "
        "LEFT JOIN embeddings AS e ON e.hash = c.hash",
    )
    assert coverage == 1.0


def test_remember_leaves_no_temporary_file(store):
    remember(store, "Port", "One.", "semantic")
    assert list((store.state_dir / "tmp").iterdir()) == []


def test_remember_into_a_store_without_an_index_creates_one(make_store):
    store = make_store({})
    key = remember(store, "First", "The first memory.", "semantic")
    assert rows(store, "SELECT path FROM files") == [(key,)]


@pytest.mark.parametrize(
    ("field", "kwargs", "message"),
    [
        ("kind", {"kind": "Bad Kind!"}, "not a valid kind"),
        ("kind", {"kind": "../escape"}, "not a valid kind"),
        ("kind", {"kind": ""}, "not a valid kind"),
        ("title", {"title": "   "}, "title is empty"),
        ("title", {"title": "x" * 301}, "keep it under 300"),
        ("body", {"body": "\n \n"}, "body is empty"),
        ("body", {"body": "a\x00b"}, "NUL"),
        ("event_at", {"event_at": "next tuesday"}, "not an ISO 8601 date"),
        ("event_at", {"event_at": "2026-13-45"}, "not an ISO 8601 date"),
        ("tags", {"tags": ["a,b"]}, "no commas"),
        ("tags", {"tags": "infra"}, "list of words"),
        ("tags", {"tags": [f"t{i}" for i in range(21)]}, "at most 20"),
    ],
)
def test_remember_refuses_a_bad_field_with_its_name_and_writes_nothing(
    store, field, kwargs, message
):
    args = {"title": "T", "body": "B", "kind": "semantic", "tags": None, "event_at": None}
    args.update(kwargs)
    with pytest.raises(WriteError, match=message) as caught:
        remember(store, **args)
    assert field in str(caught.value)
    assert sorted(p.name for p in store.root.iterdir()) == ["facts"]


def test_remember_lower_cases_the_kind(store):
    assert remember(store, "T", "B", " Episodic ").startswith("episodes/")


def test_remember_refuses_a_kind_folder_that_is_a_symlink(store, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (store.root / "procedures").symlink_to(outside)
    with pytest.raises(WriteError, match="not a plain folder"):
        remember(store, "T", "B", "procedural")
    assert list(outside.iterdir()) == []


def test_remember_refuses_a_memory_over_the_size_limit(store):
    (store.state_dir).mkdir(exist_ok=True)
    store.config_path.write_text("[limits]\nmax_file_bytes = 100\n")
    with pytest.raises(WriteError, match="over the store's 100-byte limit"):
        remember(store, "T", "x" * 200, "semantic")


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Staging DB: port 6432!", "staging-db-port-6432"),
        ("Café crème à Zürich", "café-crème-à-zürich"),
        ("東京 オフィス", "東京-オフィス"),
        ("!!!", "memory"),
        ("word " * 40, "-".join(["word"] * 12)),
        ("a" * 80, "a" * 60),
        ("../../etc/passwd", "etc-passwd"),
    ],
)
def test_slug_keeps_letters_of_any_script_and_nothing_else(title, expected):
    assert slug(title) == expected


KILLER = textwrap.dedent(
    """
    import sys
    from engine.files.store import open_store
    from engine.agents.write import kind_folder, remember, write_new_file
    store = open_store(sys.argv[1])
    print("ready", flush=True)
    if sys.argv[2] == "remember":
        body = "All work and no play makes a dull memory. " * 7000
        while True:
            remember(store, "Big memory", body, "semantic")
            print("wrote", flush=True)
    folder = kind_folder(store, "raw")
    while True:
        write_new_file(store, folder, "big", b"x" * 8_000_000)
        print("wrote", flush=True)
    """
)


def kill_at_random(root: Path, mode: str, times: int, window: tuple[float, float]) -> None:
    rng = random.Random(11)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    for _ in range(times):
        with subprocess.Popen(
            [sys.executable, "-c", KILLER, str(root), mode], stdout=subprocess.PIPE, env=env
        ) as child:
            assert child.stdout is not None
            assert child.stdout.readline() == b"ready\n"
            # One whole write first, however slow the machine: then every round has files
            # to check, and the kill lands at a random moment in a later one
            assert child.stdout.readline() == b"wrote\n"
            time.sleep(rng.uniform(*window))
            child.send_signal(signal.SIGKILL)


def test_sigkill_during_the_atomic_write_leaves_no_file_or_a_whole_one(tmp_path):
    """Kill a process that keeps writing 8 MB memories at random moments (a write takes tens
    of milliseconds, so kills land mid-write): every file left behind is whole."""
    root = tmp_path / "store"
    root.mkdir()
    kill_at_random(root, "write", 6, (0.05, 0.4))
    files = list((root / "raw").glob("*.md"))
    assert files
    assert all(path.read_bytes() == b"x" * 8_000_000 for path in files)


def test_sigkill_during_remember_leaves_no_file_or_a_whole_one(tmp_path):
    root = tmp_path / "store"
    root.mkdir()
    kill_at_random(root, "remember", 4, (0.2, 1.2))
    body = "All work and no play makes a dull memory. " * 7000
    for path in (root / "facts").glob("*.md") if (root / "facts").exists() else []:
        assert parse_memory(path.name, path.read_bytes()).body == body.strip(), path


# --------------------------------------------------------------------------- forget


def test_forget_sets_archived_and_keeps_every_other_byte(make_store):
    text = "---\ntitle: Port   # a comment\nkind: semantic\ntags: [a]\n---\n\nBody *kept*.\n"
    store = make_store({"facts/port.md": text})
    result = forget(store, "facts/port.md")
    assert result.changed is True
    after = (store.root / "facts/port.md").read_text()
    assert after == text.replace("tags: [a]\n", "tags: [a]\narchived: true\n")


def test_forget_replaces_an_existing_archived_line_in_place(make_store):
    text = "---\ntitle: Port\narchived: no\nkind: semantic\n---\nBody.\n"
    store = make_store({"port.md": text})
    forget(store, "port.md")
    assert (store.root / "port.md").read_text() == text.replace("archived: no", "archived: true")


def test_forget_adds_front_matter_to_a_file_without_any(make_store):
    store = make_store({"port.md": "# Port\n\nBody.\n"})
    forget(store, "port.md")
    assert (store.root / "port.md").read_text() == "---\narchived: true\n---\n\n# Port\n\nBody.\n"


def test_forget_keeps_crlf_line_endings_and_a_bom(tmp_path):
    data = b"\xef\xbb\xbf---\r\ntitle: Port\r\n---\r\nBody.\r\n"
    assert set_archived("a.md", data, True) == (
        b"\xef\xbb\xbf---\r\ntitle: Port\r\narchived: true\r\n---\r\nBody.\r\n"
    )


def test_forget_sets_a_meta_tag_in_an_html_memory(make_store):
    page = "<html><head><title>Deploy</title></head><body><p>Steps.</p></body></html>\n"
    store = make_store({"deploy.html": page})
    forget(store, "deploy.html")
    after = (store.root / "deploy.html").read_text()
    assert after == page.replace("<head>", '<head><meta name="archived" content="true">')
    assert parse_memory("deploy.html", after.encode()).archived is True


def test_forget_and_undo_keep_a_latin1_html_page_in_its_own_encoding(make_store):
    page = '<html><head><meta charset="iso-8859-1"></head><body><p>Caf\u00e9 \u20ac5</p></body>'
    original = page.encode("cp1252")
    store = make_store({})
    (store.root / "menu.html").write_bytes(original)
    forget(store, "menu.html")
    after = (store.root / "menu.html").read_bytes()
    assert after == original.replace(b"<head>", b'<head><meta name="archived" content="true">')
    assert parse_memory("menu.html", after).archived is True
    forget(store, "menu.html", archived=False)
    assert parse_memory("menu.html", (store.root / "menu.html").read_bytes()).archived is False


def counting_parses(monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    """The keys parse_memory is called with, by forget and by the index it updates."""
    import engine.agents.write
    import engine.indexing.pipeline

    calls: list[str] = []

    def counted(key: str, data: bytes):  # type: ignore[no-untyped-def]
        calls.append(key)
        return parse_memory(key, data)

    monkeypatch.setattr(engine.agents.write, "parse_memory", counted)
    monkeypatch.setattr(engine.indexing.pipeline, "parse_memory", counted)
    return calls


def test_forget_parses_the_file_as_it_is_and_as_written_and_the_index_parses_neither_again(
    make_store, monkeypatch
):
    """A large HTML page takes seconds to parse; the index is handed forget's second parse."""
    page = "<html><head><title>Deploy</title></head><body><p>Steps.</p></body></html>\n"
    store = make_store({"deploy.html": page})
    index_store(store, embed=False)
    calls = counting_parses(monkeypatch)
    forget(store, "deploy.html")
    assert calls == ["deploy.html", "deploy.html"]
    assert rows(store, "SELECT archived FROM files WHERE path = 'deploy.html'") == [(1,)]


def test_forget_of_an_archived_memory_parses_it_once(make_store, monkeypatch):
    store = make_store({"a.md": "---\narchived: true\n---\nA.\n"})
    calls = counting_parses(monkeypatch)
    assert forget(store, "a.md").changed is False
    assert calls == ["a.md"]
    assert rows(store, "SELECT archived FROM files WHERE path = 'a.md'") == [(1,)]


def test_index_paths_uses_a_preparsed_memory_only_for_the_bytes_it_was_parsed_from(store):
    import hashlib
    from dataclasses import replace

    from engine.indexing.incremental import index_paths

    path = store.root / "facts/port.md"
    data = path.read_bytes()
    given = replace(parse_memory("facts/port.md", data), title="Handed over")
    index_paths(store, ["facts/port.md"], preparsed={"facts/port.md": ("0" * 64, given)})
    assert rows(store, "SELECT title FROM files") == [("Port",)]
    path.write_text(path.read_text().replace("6432", "64321"))  # another size
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    index_paths(store, ["facts/port.md"], preparsed={"facts/port.md": (digest, given)})
    assert rows(store, "SELECT title FROM files") == [("Handed over",)]


def test_forget_refuses_a_file_that_is_not_text_naming_why():
    with pytest.raises(WriteError, match="not valid UTF-8"):
        set_archived("a.md", b"caf\xe9\n", True)


def test_forget_hides_the_memory_from_default_searches_only(store):
    embedder = HashEmbedder()
    index_store(store, embedder=embedder)
    forget(store, "facts/port.md")
    assert search(store, "port", embedder=embedder).hits == []
    archived = search(store, "port", embedder=embedder, scope=ScopeSpec(include_archived=True))
    assert [h.path for h in archived.hits] == ["facts/port.md"]


def test_forget_twice_changes_nothing_the_second_time(store):
    forget(store, "facts/port.md")
    path = store.root / "facts/port.md"
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    assert forget(store, "facts/port.md").changed is False
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_forget_undo_brings_the_memory_back(store):
    forget(store, "facts/port.md")
    forget(store, "facts/port.md", archived=False)
    assert parse_memory("p.md", (store.root / "facts/port.md").read_bytes()).archived is False


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_forget_then_undo_gives_back_a_file_without_front_matter_byte_for_byte(newline):
    original = f"\ufeff# Note{newline}{newline}Body.{newline}".encode()
    archived = set_archived("a.md", original, True)

    assert archived != original
    assert set_archived("a.md", archived, False) == original


def test_undo_keeps_front_matter_that_holds_more_than_the_flag():
    data = b"---\ntitle: T\narchived: true\n---\n\nBody.\n"

    assert set_archived("a.md", data, False) == b"---\ntitle: T\narchived: false\n---\n\nBody.\n"


def test_forget_keeps_the_file_mode(store):
    path = store.root / "facts/port.md"
    path.chmod(0o600)
    forget(store, "facts/port.md")
    assert path.stat().st_mode & 0o777 == 0o600


def test_forget_refuses_front_matter_it_cannot_edit_line_by_line(make_store):
    text = "---\n{title: Port, kind: semantic}\n---\nBody.\n"
    store = make_store({"port.md": text})
    with pytest.raises(WriteError, match="by hand"):
        forget(store, "port.md")
    assert (store.root / "port.md").read_text() == text


def test_forget_refuses_a_file_the_indexer_would_skip(make_store):
    store = make_store({"port.md": "---\ntitle: [unclosed\n---\nBody.\n"})
    with pytest.raises(WriteError, match="not a usable memory"):
        forget(store, "port.md")


# --------------------------------------------------------------------------- list


def test_list_shows_the_newest_memories_in_scope_first(make_store):
    store = make_store(
        {
            "a.md": "---\nkind: semantic\nevent_at: 2026-01-01\n---\nA.\n",
            "b.md": "---\nkind: episodic\nevent_at: 2026-03-01\n---\nB.\n",
            "c.md": "---\nkind: semantic\nevent_at: 2026-02-01\narchived: true\n---\nC.\n",
            "t.md": "---\nkind: task\nevent_at: 2026-04-01\n---\nT.\n",
        }
    )
    index_store(store, embed=False)
    assert [m["path"] for m in list_memories(store)] == ["b.md", "a.md"]
    assert [m["path"] for m in list_memories(store, ScopeSpec(kinds=("semantic",)))] == ["a.md"]
    every = list_memories(store, ScopeSpec(include_archived=True), limit=2)
    assert [m["path"] for m in every] == ["b.md", "c.md"]


def test_list_without_an_index_says_how_to_make_one(make_store):
    with pytest.raises(FileNotFoundError, match="memsift index"):
        list_memories(make_store({"a.md": "A.\n"}))


# --------------------------------------------------------------------------- incremental index


def test_a_written_file_state_row_follows_its_rename(store):
    from engine.indexing.incremental import index_paths

    index_store(store, embed=False)
    state_plane.record_access(store, "facts/port.md")
    (store.root / "facts/port.md").rename(store.root / "facts/port-renamed.md")
    report = index_paths(store, ["facts/port.md", "facts/port-renamed.md"])
    assert report.renamed == [("facts/port.md", "facts/port-renamed.md")]
    assert state_plane.state_paths(store) == ["facts/port-renamed.md"]


def test_index_paths_touches_only_the_files_named(store):
    from engine.indexing.incremental import index_paths

    index_store(store, embed=False)
    (store.root / "facts/new.md").write_text("New.\n")
    (store.root / "facts/other.md").write_text("Other.\n")
    report = index_paths(store, ["facts/new.md"])
    assert report.indexed == ["facts/new.md"]
    assert sorted(p for (p,) in rows(store, "SELECT path FROM files")) == [
        "facts/new.md",
        "facts/port.md",
    ]


def test_index_paths_removes_a_deleted_or_symlinked_file(store, tmp_path):
    from engine.indexing.incremental import index_paths

    index_store(store, embed=False)
    (store.root / "facts/port.md").unlink()
    (tmp_path / "elsewhere.md").write_text("Elsewhere.\n")
    (store.root / "facts/port.md").symlink_to(tmp_path / "elsewhere.md")
    report = index_paths(store, ["facts/port.md"])
    assert report.removed == ["facts/port.md"]
    assert report.skipped == [("facts/port.md", "symlink (not followed)")]
    assert rows(store, "SELECT path FROM files") == []


def test_index_paths_ignores_names_that_are_not_memories(store):
    from engine.indexing.incremental import index_paths

    assert index_paths(store, [".memsift/index.db", "facts/x.txt", "../x.md"]).indexed == []


def test_fill_missing_brings_a_lexical_index_to_full_coverage(store):
    from engine.indexing.incremental import fill_missing

    index_store(store, embed=False)
    embedder = HashEmbedder()
    assert fill_missing(store, embedder) == 1
    conn = open_index(store.index_path)
    try:
        assert read_meta(conn, "embedded_chunks") == read_meta(conn, "chunks") == "1"
        assert read_meta(conn, "model") == embedder.name
    finally:
        conn.close()


def test_fill_missing_leaves_a_model_switch_to_a_full_run(store):
    from engine.indexing.incremental import fill_missing

    index_store(store, embedder=HashEmbedder("model-a"))
    assert fill_missing(store, HashEmbedder("model-b")) is None


def test_index_paths_survives_a_writer_committing_between_its_read_and_its_write(
    store, monkeypatch
):
    """Another process (a full run, another server) may commit between a transaction's first
    read and its first write; a deferred transaction then fails at once with "database is
    locked". The incremental writer takes the write lock first, so the other writer waits."""

    import engine.sqlite.incremental
    from engine.indexing.incremental import index_paths
    from engine.sqlite.db import connect, write_meta

    index_store(store, embed=False)
    (store.root / "facts/new.md").write_text("New.\n")
    real_read_meta = engine.sqlite.incremental.read_meta
    other_writes: list[str] = []

    def read_then_someone_writes(conn, key):  # type: ignore[no-untyped-def]
        value = real_read_meta(conn, key)
        if not conn.in_transaction:
            return value  # a read on its own cannot be caught out
        other = connect(store.index_path)
        other.set_busy_timeout(100)
        try:
            with other:
                write_meta(other, "other_writer", 1)
            other_writes.append("committed")
        except apsw.BusyError:
            other_writes.append("waited")
        finally:
            other.close()
        return value

    monkeypatch.setattr(engine.sqlite.incremental, "read_meta", read_then_someone_writes)
    assert index_paths(store, ["facts/new.md"]).indexed == ["facts/new.md"]
    assert other_writes
    assert "committed" not in other_writes


def test_index_paths_does_not_rerun_the_schema_script_on_an_existing_index(store, monkeypatch):
    """The schema script reads before it writes (CREATE ... IF NOT EXISTS, then the version):
    beside another writer that fails at once with "database is locked", so an existing index
    of the current layout is opened plainly."""
    import engine.sqlite.incremental
    from engine.indexing.incremental import index_paths

    index_store(store, embed=False)
    opened: list[bool] = []
    real_open_index = engine.sqlite.incremental.open_index

    def spy(path, *, create=False):  # type: ignore[no-untyped-def]
        opened.append(create)
        return real_open_index(path, create=create)

    monkeypatch.setattr(engine.sqlite.incremental, "open_index", spy)
    (store.root / "facts/new.md").write_text("New.\n")
    assert index_paths(store, ["facts/new.md"]).indexed == ["facts/new.md"]
    assert opened == [False]


def test_index_paths_of_unchanged_files_takes_no_write_lock(store):
    """A watcher re-reports files it just indexed; checking them must not queue for the write
    lock behind a long write (here: one that never ends during the call)."""
    from engine.indexing.incremental import index_paths

    index_store(store, embed=False)
    writer = open_index(store.index_path)
    writer.execute("BEGIN IMMEDIATE")
    try:
        report = index_paths(store, ["facts/port.md"])
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert (report.indexed, report.removed, report.unchanged) == ([], [], 1)


def test_vectors_of_another_model_left_by_a_killed_switch_are_not_mixed_with(store):
    """A model switch killed half-way leaves the old model's name in meta and the new model's
    vectors in the table: adding the old model's vectors then would mix two models."""
    from engine.indexing.incremental import fill_missing

    index_store(store, embedder=HashEmbedder("model-a"))
    conn = open_index(store.index_path)
    try:
        with conn:
            conn.execute("UPDATE embeddings SET model = 'model-b'")
    finally:
        conn.close()
    assert fill_missing(store, HashEmbedder("model-a")) is None


# --------------------------------------------------------------------------- index refused


def test_remember_with_the_index_locked_keeps_the_file_and_says_it_is_not_indexed(
    store, index_locked
):
    with pytest.raises(NotIndexed) as caught:
        remember(store, "Pager", "Ana carries the pager.", "semantic")
    assert caught.value.key == "facts/pager.md"
    assert (store.root / "facts" / "pager.md").is_file()
    message = str(caught.value)
    assert message.startswith("facts/pager.md was written, but the index has not taken it")
    assert "index.db" in message and "memsift index" in message


def test_forget_with_the_index_locked_archives_the_file_and_says_it_is_not_indexed(
    store, index_locked
):
    with pytest.raises(NotIndexed) as caught:
        forget(store, "facts/port.md")
    assert caught.value.done == "archived"
    assert "archived: true" in (store.root / "facts" / "port.md").read_text()


def test_remember_in_a_folder_the_user_cannot_write_names_it_and_the_fix(store, monkeypatch):
    (store.root / ".memsift" / "tmp").mkdir(parents=True, exist_ok=True)

    def refused(*_args: object, **_kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted", str(store.root / ".memsift" / "tmp"))

    monkeypatch.setattr(engine.agents.write, "temp_file", refused)
    with pytest.raises(WriteError) as caught:
        remember(store, "Pager", "Ana carries the pager.", "semantic")
    assert str(caught.value) == (
        f"{store.root / '.memsift' / 'tmp'}: cannot be written (Operation not permitted); "
        "make the store writable for this user, or run as its owner"
    )
    assert not (store.root / "facts" / "pager.md").exists()


# --------------------------------------------------------------------------- kind folders


@pytest.mark.parametrize(
    ("kind", "folder"),
    [("semantic", "facts"), ("episodic", "episodes"), ("procedural", "procedures"),
     ("person", "people"), ("task", "tasks"), ("preference", "preferences"), ("recipe", "recipe")],
)
def test_remember_files_each_kind_under_its_conventional_folder(store, kind, folder):
    assert remember(store, "T", "B", kind) == f"{folder}/t.md"


def test_a_store_that_files_a_kind_under_its_own_name_keeps_doing_so(store):
    (store.root / "episodic").mkdir()

    assert remember(store, "T", "B", "episodic") == "episodic/t.md"
    assert not (store.root / "episodes").exists()


def test_the_example_store_files_every_kind_where_remember_would(store):
    examples = Path(__file__).resolve().parents[2] / "examples"
    misplaced = []
    for path in examples.rglob("*.md"):
        key = path.relative_to(examples).as_posix()
        kind = parse_memory(key, path.read_bytes()).kind
        folder = key.split("/")[0]
        if kind and folder != "archive" and folder != KIND_FOLDERS.get(kind, kind):
            misplaced.append((key, kind))
    assert misplaced == []
