"""An HTML memory that declares its charset is decoded as a browser decodes it: the labels of
the WHATWG Encoding Standard, with the meanings browsers give them, and nothing else. A label
that is a Python codec but no web charset is one more reason to skip the page, never a crash of
the whole index run."""

from __future__ import annotations

import pytest

from engine.files.memory import Skip, parse_memory
from engine.files.web_charsets import WEB_CODECS
from engine.indexing.indexer import index_store


def page(label: str, body: bytes) -> bytes:
    return (
        b'<html><head><meta charset="'
        + label.encode()
        + b'"><title>T</title></head><body><p>'
        + body
        + b"</p></body></html>"
    )


def reason(data: bytes) -> str:
    with pytest.raises(Skip) as skipped:
        parse_memory("p.html", data)
    return skipped.value.reason


@pytest.mark.parametrize(
    "label", ["base64", "rot13", "hex", "zlib", "uu", "idna", "undefined", "quopri", "bz2"]
)
def test_a_python_codec_that_is_no_web_charset_is_a_skip_naming_it(label):
    assert f"{label!r}" in reason(page(label, b"caf\xe9"))


@pytest.mark.parametrize("label", ["raw_unicode_escape", "palmos", "utf-7", "cp037"])
def test_a_codec_browsers_do_not_know_does_not_decode_the_page(label):
    assert f"{label!r}" in reason(page(label, b"caf\xe9 \\u0041"))


def test_one_page_naming_a_python_codec_does_not_stop_the_index_run(make_store):
    store = make_store({"a.md": "# Alpha\n\nAlpha.\n"})
    (store.root / "b.html").write_bytes(page("base64", b"caf\xe9"))

    summary = index_store(store, embed=False)

    assert summary.indexed == ["a.md"]
    assert [path for path, _ in summary.skipped] == ["b.html"]


@pytest.mark.parametrize(
    ("label", "text", "python_codec"),
    [
        ("shift_jis", "\u2460\u756a\u76ee\u306e\u4f1a\u8b70", "cp932"),  # NEC circled one
        ("x-sjis", "\u4f1a\u8b70", "cp932"),
        ("windows-31j", "\u4f1a\u8b70", "cp932"),
        ("gb2312", "\u9555\u57fa", "gbk"),  # GBK-only characters in a 'gb2312' page
        ("euc-kr", "\ub620\ubc29\uac01\ud558", "cp949"),  # Unified Hangul syllables
        ("ks_c_5601-1987", "\ud68c\uc758", "cp949"),
        ("iso-8859-9", "\u201cToplant\u0131\u201d", "cp1254"),  # windows-1254's quotes
        ("tis-620", "\u0e01\u0e32\u0e23 \u2026", "cp874"),
        ("iso-8859-8-i", "\u05e9\u05dc\u05d5\u05dd", "iso8859_8"),
        ("big5", "\u6703\u8b70 \u5341", "big5hkscs"),
    ],
)
def test_a_label_means_what_it_means_to_browsers(label, text, python_codec):
    memory = parse_memory("p.html", page(label, text.encode(python_codec)))
    assert memory.body == text


def test_every_label_maps_to_a_codec_python_has():
    import codecs

    for label, codec in WEB_CODECS.items():
        assert codecs.lookup(codec).name, label


def test_an_iso_2022_jp_page_is_read_as_japanese_not_as_its_escape_bytes():
    """ISO-2022-JP is 7-bit, so every such page is also valid UTF-8: only its declaration
    tells a browser (and memsift) that ESC $ B starts Japanese text."""
    text = "\u3053\u3093\u306b\u3061\u306f \u4f1a\u8b70"
    memory = parse_memory("p.html", page("iso-2022-jp", text.encode("iso2022_jp")))
    assert memory.body == text


def test_forget_keeps_an_iso_2022_jp_page_byte_for_byte_around_the_flag():
    from engine.agents.write import set_archived

    original = page("iso-2022-jp", "\u4f1a\u8b70".encode("iso2022_jp"))
    archived = set_archived("p.html", original, True)

    assert archived.replace(b'<meta name="archived" content="true">', b"", 1) == original
    assert set_archived("p.html", archived, False) == original


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("path", ["notes/n.md", "p.html"])
def test_a_utf16_file_is_skipped_as_utf16_not_as_binary(codec, path):
    """Windows editors save 'Unicode' as UTF-16 with a byte order mark; saying 'binary' would
    send the user looking for the wrong problem."""
    data = "\ufeff# Notes\n\nPlain text.\n".encode(codec)
    with pytest.raises(Skip) as skipped:
        parse_memory(path, data)
    assert "UTF-16" in skipped.value.reason and "binary" not in skipped.value.reason


def test_a_page_whose_meta_says_utf16_is_held_to_utf8_as_browsers_hold_it():
    assert "declares 'utf-16'); re-save the file as UTF-8" in reason(page("utf-16", b"caf\xe9"))


CYRILLIC = "\u041f\u0440\u0438\u0432\u0435\u0442"


@pytest.mark.parametrize(
    "head",
    [
        b'<!-- was: <meta charset="utf-8"> --><meta charset="windows-1251">',
        b'<meta name="description" content="set charset=utf-8"><meta charset="windows-1251">',
        b'<meta content="text/html; charset=koi8-r"><meta charset="windows-1251">',
        b'<meta data-charset="utf-8" charset="windows-1251">',
        b'<meta charset="klingon-8"><meta charset="windows-1251">',
        b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">',
        b"<META HTTP-EQUIV=content-type CONTENT='text/html;charset=\"windows-1251\"'>",
    ],
    ids=[
        "in-a-comment",
        "in-a-description",
        "content-without-http-equiv",
        "another-attribute",
        "unknown-then-known",
        "http-equiv",
        "http-equiv-unquoted",
    ],
)
def test_the_charset_is_the_one_a_browsers_prescan_finds(head):
    data = b"<html><head>" + head + b"</head><body><p>" + CYRILLIC.encode("cp1251") + b"</p>"
    assert parse_memory("p.html", data).body == CYRILLIC


def test_a_latin1_page_with_bytes_windows_1252_leaves_undefined_is_read_as_browsers_do():
    """windows-1252 leaves 0x81, 0x8D, 0x8F, 0x90 and 0x9D undefined; browsers read them as
    the C1 controls ISO-8859-1 has there, so such a page is readable, not skipped."""
    data = page("iso-8859-1", b"caf\xe9 \x80 \x81\x8d\x8f\x90\x9d end")
    assert parse_memory("p.html", data).body == "caf\u00e9 \u20ac \x81\x8d\x8f\x90\x9d end"


def test_forget_keeps_such_a_page_byte_for_byte_around_the_flag():
    from engine.agents.write import set_archived

    original = page("latin1", b"caf\xe9 \x81 end")
    archived = set_archived("p.html", original, True)

    assert archived.replace(b'<meta name="archived" content="true">', b"", 1) == original
    assert set_archived("p.html", archived, False) == original
