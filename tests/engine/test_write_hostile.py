"""The write path against files and arguments nobody meant to give it.

`forget` must change nothing but the archived flag, whatever the file looks like; `remember`
must write a whole file or none, wherever `.memsift/` lives, and refuse what it cannot write with
the field's name; reads for an agent stop at the store's size limit as the CLI's do.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from engine.agents.service import MemoryService
from engine.agents.write import WriteError, forget, remember, set_archived, slug
from engine.files.memory import parse_memory
from engine.indexing.indexer import index_store
from engine.sqlite.db import open_index

# --------------------------------------------------------------------------- forget keeps bytes


def test_forget_keeps_a_comment_on_the_archived_line():
    data = b"---\ntitle: X\narchived: no   # set by the sync bot\n---\nBody.\n"
    assert set_archived("a.md", data, True) == (
        b"---\ntitle: X\narchived: true   # set by the sync bot\n---\nBody.\n"
    )


def test_forget_sets_the_flag_in_front_matter_whose_fence_ends_in_blanks():
    data = b"--- \ntitle: X\n---\t\nBody.\n"
    assert set_archived("a.md", data, True) == b"--- \ntitle: X\narchived: true\n---\t\nBody.\n"


def test_forget_keeps_the_spelling_of_the_archived_key():
    data = b"---\ntitle: X\narchived :\tfalse\r\n---\r\nBody.\r\n"
    after = set_archived("a.md", data, True)
    assert after == b"---\ntitle: X\narchived :\ttrue\r\n---\r\nBody.\r\n"


@pytest.mark.parametrize("name", ["archived-date", "archived_by", "archived.note"])
def test_forget_leaves_other_meta_tags_whose_name_starts_with_archived(make_store, name):
    page = (
        f'<html><head><meta name="{name}" content="2020-01-01"><title>T</title></head>'
        "<body><p>Steps.</p></body></html>\n"
    )
    store = make_store({"page.html": page})
    forget(store, "page.html")
    after = (store.root / "page.html").read_text()
    assert after == page.replace("<head>", '<head><meta name="archived" content="true">')


def test_forget_sets_only_the_value_of_an_unquoted_archived_meta_tag():
    page = "<html><head><META NAME=archived CONTENT=no></head><body>x</body></html>"
    after = set_archived("p.html", page.encode(), True).decode()
    assert after == "<html><head><META NAME=archived CONTENT=true></head><body>x</body></html>"


@pytest.mark.parametrize(
    ("tag", "archived_tag"),
    [
        ('<META NAME="Archived" CONTENT="false">', '<META NAME="Archived" CONTENT="true">'),
        ("<meta content='no' name=archived />", "<meta content='true' name=archived />"),
        ('<meta name=archived content="false" />', '<meta name=archived content="true" />'),
    ],
)
def test_forget_then_undo_keeps_the_page_s_own_archived_tag_where_forget_would_put_one(
    tag, archived_tag
):
    """A tag the user wrote right after <head> is theirs: forget sets its value (it rewrote the
    whole tag in its own spelling), and undo sets it back instead of deleting it. (A tag the
    user wrote exactly as forget writes its own, in the same place, is still taken for forget's:
    the bytes cannot tell them apart.)"""
    page = f"<html><head>{tag}<title>T</title></head><body>x</body></html>".encode()
    archived = set_archived("p.html", page, True)
    assert archived == page.replace(tag.encode(), archived_tag.encode())
    back = set_archived("p.html", archived, False)
    assert back == page.replace(b"'no'", b"'false'")


def test_forget_adds_content_to_an_archived_tag_that_has_none():
    page = b'<html><head><title>T</title><meta name="archived"></head><body>x</body></html>'
    after = set_archived("p.html", page, True)
    assert after == page.replace(b'"archived">', b'"archived" content="true">')


def test_forget_of_a_page_without_head_keeps_the_doctype_first(make_store):
    """Anything before <!DOCTYPE html> puts a browser in quirks mode: the tag goes after it."""
    page = "<!DOCTYPE html>\n<p>No head here.</p>\n"
    store = make_store({"page.html": page})
    forget(store, "page.html")
    after = (store.root / "page.html").read_text()
    assert after == '<!DOCTYPE html>\n<meta name="archived" content="true">\n<p>No head here.</p>\n'
    assert parse_memory("page.html", after.encode()).archived is True


# --------------------------------------------------------------------------- size limit


@pytest.fixture
def small_limit_store(make_store):  # type: ignore[no-untyped-def]
    store = make_store(
        {
            ".memsift/config.toml": '[limits]\nmax_file_bytes = 200\n[embedder]\nmodel = "none"\n',
            "big.md": "---\ntitle: Big\n---\n" + "word " * 100,
            "small.md": "---\ntitle: Small\n---\nFits.\n",
        }
    )
    index_store(store)
    return store


def test_forget_refuses_a_file_over_the_size_limit_and_leaves_it(small_limit_store):
    before = (small_limit_store.root / "big.md").read_bytes()
    with pytest.raises(WriteError, match="over the 200-byte limit"):
        forget(small_limit_store, "big.md")
    assert (small_limit_store.root / "big.md").read_bytes() == before


def test_an_agents_read_of_a_file_over_the_size_limit_is_refused_as_the_clis_is(
    small_limit_store,
):
    service = MemoryService(small_limit_store)
    with pytest.raises(ValueError, match=r"big\.md: .*over the 200-byte limit"):
        service.read("big.md")
    assert service.read("small.md")["text"].endswith("Fits.\n")


# --------------------------------------------------------------------------- remember


@pytest.mark.parametrize(
    ("field", "args"),
    [
        ("title", ("Caf\udce9", "Body.", "semantic")),
        ("body", ("Title", "Body \ud800 text.", "semantic")),
    ],
)
def test_remember_refuses_text_that_is_not_unicode_naming_the_field(make_store, field, args):
    """A shell passes undecodable bytes as lone surrogates: refused by name, nothing written."""
    store = make_store({})
    with pytest.raises(WriteError, match=f"^{field} .*UTF-8"):
        remember(store, *args)
    assert [p for p in store.root.rglob("*.md")] == []


@pytest.mark.parametrize("title", ["CON", "nul", "Aux", "com1", "LPT9", "prn"])
def test_a_title_never_names_a_file_windows_cannot_check_out(title):
    assert slug(title) not in {"con", "nul", "aux", "com1", "lpt9", "prn"}
    assert slug(title).startswith(title.lower())


@pytest.mark.parametrize("kind", ["con", "nul", "aux", "com1", "lpt3", "prn"])
def test_a_kind_never_names_a_folder_windows_cannot_check_out(make_store, kind):
    store = make_store({})
    with pytest.raises(WriteError, match="Windows reserves"):
        remember(store, "Title", "Body.", kind)
    assert not (store.root / kind).exists()


def other_filesystem(than: Path) -> Path | None:
    """A writable folder on another device than ``than`` (tmpfs is usual), or None."""
    here = os.stat(than).st_dev
    for candidate in ("/dev/shm", "/run/user", tempfile.gettempdir(), "/var/tmp"):
        try:
            if os.stat(candidate).st_dev != here and os.access(candidate, os.W_OK):
                return Path(tempfile.mkdtemp(prefix="memsift-other-", dir=candidate))
        except OSError:
            continue
    return None


@pytest.fixture
def split_store(make_store, tmp_path):  # type: ignore[no-untyped-def]
    """A store whose .memsift/ is a link to another filesystem (kept out of a synced folder,
    say), so a file staged in .memsift/tmp cannot be linked or renamed into the store."""
    other = other_filesystem(tmp_path)
    if other is None:
        pytest.skip("no second writable filesystem to put .memsift/ on")
    store = make_store({"port.md": "---\ntitle: Port\n---\nPort 6432.\n"})
    store.state_dir.symlink_to(other)
    yield store
    for path in sorted(other.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    other.rmdir()


def test_remember_with_memsift_on_another_filesystem_writes_a_whole_file(split_store):
    key = remember(split_store, "Cross device", "Written whole.", "semantic")
    assert key == "facts/cross-device.md"
    written = parse_memory(key, (split_store.root / key).read_bytes())
    assert written.body == "Written whole."
    assert sorted(p.name for p in (split_store.root / "facts").iterdir()) == ["cross-device.md"]


def test_forget_with_memsift_on_another_filesystem_archives_in_place(split_store):
    assert forget(split_store, "port.md").changed is True
    after = (split_store.root / "port.md").read_text()
    assert after == "---\ntitle: Port\narchived: true\n---\nPort 6432.\n"
    assert sorted(p.name for p in split_store.root.iterdir()) == [".memsift", "port.md"]


FORGETTER = """
import sys
from engine.files.store import open_store
from engine.agents.write import forget
store = open_store(sys.argv[1])
print("ready", flush=True)
while True:
    forget(store, "big.md")
    forget(store, "big.md", archived=False)
"""


def test_sigkill_during_forget_leaves_the_memory_whole_in_one_state_or_the_other(make_store):
    """A process archives and unarchives a 2 MB memory without pause and is killed at random
    moments: the file is always exactly the original or exactly the archived text."""
    original = "---\ntitle: Big   # a comment\nkind: semantic\n---\n" + "All the words. " * 140_000
    store = make_store({".memsift/config.toml": '[embedder]\nmodel = "none"\n', "big.md": original})
    archived = original.replace("kind: semantic\n", "kind: semantic\narchived: true\n")
    unarchived = original.replace("kind: semantic\n", "kind: semantic\narchived: false\n")
    rng = random.Random(7)
    src = Path(__file__).resolve().parents[2] / "src"
    for _ in range(8):
        with subprocess.Popen(
            [sys.executable, "-c", FORGETTER, str(store.root)],
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(src)},
        ) as child:
            assert child.stdout is not None
            assert child.stdout.readline() == b"ready\n"
            time.sleep(rng.uniform(0.05, 0.6))
            child.send_signal(signal.SIGKILL)
        assert (store.root / "big.md").read_text() in (original, archived, unarchived)
        assert sorted(p.name for p in store.root.iterdir()) == [".memsift", "big.md"]


def test_forget_refuses_a_read_only_memory_and_leaves_it(make_store):
    """Replacing a file needs only its folder to be writable: a memory its owner made
    read-only (chmod a-w) would be rewritten behind their back."""
    store = make_store({"kept.md": "---\ntitle: Kept\n---\nDo not touch.\n"})
    path = store.root / "kept.md"
    path.chmod(0o444)
    with pytest.raises(WriteError, match="read-only"):
        forget(store, "kept.md")
    assert path.read_text() == "---\ntitle: Kept\n---\nDo not touch.\n"


def test_a_write_clears_temporary_files_left_by_killed_writers_and_nothing_else(make_store):
    """A writer killed mid-write leaves its temporary file (up to the size limit) behind; the
    next write removes those of dead processes once they are old, and nothing else."""
    store = make_store({})
    tmp = store.state_dir / "tmp"
    tmp.mkdir(parents=True)
    hour_ago = time.time() - 3600
    names = {
        "dead_old": "write-999999999-0a1b2c.tmp",  # no such process, an hour old: removed
        "dead_new": "write-999999998-0a1b2c.tmp",  # no such process but just written: kept
        "alive_old": f"write-{os.getppid()}-0a1b2c.tmp",  # a live process: kept
        "other": "notes.txt",  # not a memsift temporary file: kept
    }
    for label, name in names.items():
        (tmp / name).write_bytes(b"x" * 100)
        if label != "dead_new":
            os.utime(tmp / name, (hour_ago, hour_ago))
    remember(store, "Fresh", "A new memory.", "semantic")
    left = {path.name for path in tmp.iterdir()}
    assert left == {names["dead_new"], names["alive_old"], names["other"]}


def test_concurrent_remembers_of_one_title_each_get_a_file_of_their_own(make_store):
    """An agent firing calls in parallel: twelve threads remember under one title at once;
    each gets its own whole file, none replaced, and the index holds all twelve."""
    store = make_store({".memsift/config.toml": '[embedder]\nmodel = "none"\n'})
    index_store(store)
    with ThreadPoolExecutor(max_workers=12) as pool:
        keys = list(
            pool.map(lambda n: remember(store, "Same title", f"Body {n}.", "semantic"), range(12))
        )
    assert len(set(keys)) == 12
    bodies = {parse_memory(k, (store.root / k).read_bytes()).body for k in keys}
    assert bodies == {f"Body {n}." for n in range(12)}
    conn = open_index(store.index_path)
    try:
        assert {p for (p,) in conn.execute("SELECT path FROM files")} == set(keys)
    finally:
        conn.close()


def test_forget_reads_front_matter_exactly_as_the_indexer_does():
    """'--- ' with a trailing space opens front matter for the indexer, so forget sets the flag
    in that front matter: the indexer then reads the same title and body, now archived."""
    data = b"--- \ntitle: X\n---\nBody.\n"
    before = parse_memory("a.md", data)
    after = parse_memory("a.md", set_archived("a.md", data, True))
    assert (after.title, after.body, after.archived) == (before.title, before.body, True)
    assert (before.title, before.body) == ("X", "Body.")
