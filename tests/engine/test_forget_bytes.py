"""forget and its undo change the archived flag and nothing else, in every encoding a page
may declare: the bytes around the flag are never decoded and encoded again (some legacy
encodings spell one character two ways, and re-encoding would respell it), and undoing what
forget added takes it away again."""

from __future__ import annotations

import pytest

from engine.agents.write import WriteError, forget, set_archived
from engine.files.memory import parse_memory

TAG = b'<meta name="archived" content="true">'


def big5_page() -> bytes:
    """A Big5 page holding A2CC, which decodes to U+5341 ('ten') like A451 does: encoding the
    text again would write A451 in its place."""
    body = "\u6703\u8b70".encode("big5") + b" \xa2\xcc"
    return b'<html><head><meta charset="big5"><title>T</title></head><body><p>' + body + b"</p>"


def test_a_big5_character_with_two_spellings_keeps_its_own_through_forget():
    original = big5_page()
    archived = set_archived("p.html", original, True)

    assert archived.replace(TAG, b"", 1) == original
    assert parse_memory("p.html", archived).archived is True


def test_a_big5_character_with_two_spellings_keeps_its_own_through_undo(make_store):
    original = big5_page()
    store = make_store({})
    (store.root / "p.html").write_bytes(original)

    forget(store, "p.html")
    forget(store, "p.html", archived=False)

    assert (store.root / "p.html").read_bytes() == original


@pytest.mark.parametrize(
    "page",
    [
        b"<html><head><title>T</title></head><body><p>Steps.</p></body></html>\n",
        b"<!DOCTYPE html>\n<p>No head here.</p>\n",
        b"<!DOCTYPE html><p>No head, no newline.</p>\n",
        b"<p>Neither head nor doctype.</p>\r\n",
    ],
    ids=["head", "doctype", "doctype-inline", "bare"],
)
def test_undo_gives_back_an_html_page_byte_for_byte(page):
    archived = set_archived("p.html", page, True)

    assert archived != page
    assert set_archived("p.html", archived, False) == page


def test_undo_sets_false_on_an_archived_tag_the_page_had_before():
    page = b'<html><head><title>T</title><meta name="archived" content="yes"></head></html>'

    after = set_archived("p.html", page, False)

    assert after == page.replace(b'content="yes"', b'content="false"')


def test_undo_of_a_tag_forget_did_not_place_sets_it_false():
    page = b"<html><head><title>T</title>" + TAG + b"</head><body>x</body></html>"

    after = set_archived("p.html", page, False)

    assert after == page.replace(b'content="true"', b'content="false"')


def test_forget_passes_over_a_head_tag_inside_a_comment():
    page = (
        b"<!-- template: <head> goes here --><html><head><title>T</title></head>"
        b"<body>x</body></html>"
    )
    archived = set_archived("p.html", page, True)

    assert archived == page.replace(b"<html><head>", b"<html><head>" + TAG)
    assert set_archived("p.html", archived, False) == page


def test_forget_leaves_a_commented_out_archived_tag_alone():
    page = b'<html><head><!-- <meta name="archived" content="true"> --><title>T</title></head>'
    archived = set_archived("p.html", page, True)

    assert archived == page.replace(b"<html><head>", b"<html><head>" + TAG)


def test_a_page_forget_cannot_edit_is_refused_naming_the_meta_tag(make_store, monkeypatch):
    store = make_store({})
    (store.root / "p.html").write_bytes(b"<html><head><title>T</title></head><body>x</body>")
    monkeypatch.setattr(
        "engine.agents.write.archived_edit", lambda key, text, archived: (0, 0, "<!--")
    )  # an edit that would swallow the page

    with pytest.raises(WriteError, match="meta tag"):
        forget(store, "p.html")
