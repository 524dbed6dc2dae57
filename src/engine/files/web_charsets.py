"""The charset labels a web page may declare, read as browsers read them.

Browsers honour a ``<meta charset>`` only when its label is one of the WHATWG Encoding
Standard's, and several labels do not mean what Python's codec of the same name means: a page
saying ``shift_jis`` is decoded with Microsoft's extensions (Python's ``cp932``), ``gb2312``
as GBK (``gb18030`` decodes it), ``euc-kr`` as Unified Hangul (``cp949``), ``iso-8859-1`` and
``us-ascii`` as windows-1252, ``iso-8859-9`` as windows-1254, ``tis-620`` as windows-874, and
``big5`` with the Hong Kong additions. Looking labels up here, and nowhere else, also keeps
Python's own codecs out of reach of a page: ``base64``, ``rot13`` or ``zlib`` are codecs to
Python but no charset to a browser, and a page naming one is skipped like any other unknown
label, not decoded with it.

Two more browser rules live here: the declaration is the one the HTML standard's prescan finds
(:func:`declared_label`: not in a comment, not a description mentioning "charset="), and
windows-1252 reads the five bytes it leaves undefined as C1 controls (a codec of its own).
"""

from __future__ import annotations

import codecs
import encodings.cp1252
import re

#: Python codec -> the WHATWG labels browsers decode with it. A page whose ``<meta>`` says
#: UTF-16 is read as UTF-8 (HTML's rule: a byte stream that reached the meta is not UTF-16), so
#: those labels are UTF-8's here. x-user-defined and the "replacement" encodings are left out:
#: neither makes a byte stream that is not UTF-8 readable.
CODEC_LABELS: dict[str, tuple[str, ...]] = {
    "utf-8": tuple(
        "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8 csunicode "
        "iso-10646-ucs-2 ucs-2 unicode unicodefeff unicodefffe utf-16 utf-16be utf-16le".split()
    ),
    "cp866": ("866", "cp866", "csibm866", "ibm866"),
    "iso8859_2": tuple(
        "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 "
        "latin2".split()
    ),
    "iso8859_3": tuple(
        "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 "
        "latin3".split()
    ),
    "iso8859_4": tuple(
        "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 "
        "latin4".split()
    ),
    "iso8859_5": tuple(
        "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 "
        "iso_8859-5:1988".split()
    ),
    "iso8859_6": tuple(
        "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 "
        "iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 "
        "iso_8859-6:1987".split()
    ),
    "iso8859_7": tuple(
        "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 "
        "iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek".split()
    ),
    "iso8859_8": tuple(
        "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 "
        "iso88598 iso_8859-8 iso_8859-8:1988 visual csiso88598i iso-8859-8-i logical".split()
    ),
    "iso8859_10": tuple(
        "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6".split()
    ),
    "iso8859_13": ("iso-8859-13", "iso8859-13", "iso885913"),
    "iso8859_14": ("iso-8859-14", "iso8859-14", "iso885914"),
    "iso8859_15": tuple("csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9".split()),
    "iso8859_16": ("iso-8859-16",),
    "koi8_r": ("cskoi8r", "koi", "koi8", "koi8-r", "koi8_r"),
    "koi8_u": ("koi8-ru", "koi8-u"),
    "mac_roman": ("csmacintosh", "mac", "macintosh", "x-mac-roman"),
    "cp874": tuple("dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874".split()),
    "cp1250": ("cp1250", "windows-1250", "x-cp1250"),
    "cp1251": ("cp1251", "windows-1251", "x-cp1251"),
    "memsift_windows_1252": tuple(
        "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 "
        "iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 "
        "x-cp1252".split()
    ),
    "cp1253": ("cp1253", "windows-1253", "x-cp1253"),
    "cp1254": tuple(
        "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 "
        "iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254".split()
    ),
    "cp1255": ("cp1255", "windows-1255", "x-cp1255"),
    "cp1256": ("cp1256", "windows-1256", "x-cp1256"),
    "cp1257": ("cp1257", "windows-1257", "x-cp1257"),
    "cp1258": ("cp1258", "windows-1258", "x-cp1258"),
    "mac_cyrillic": ("x-mac-cyrillic", "x-mac-ukrainian"),
    "gb18030": tuple(
        "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk "
        "gb18030".split()
    ),
    "big5hkscs": ("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"),
    "euc_jp": ("cseucpkdfmtjapanese", "euc-jp", "x-euc-jp"),
    "iso2022_jp_ext": ("csiso2022jp", "iso-2022-jp"),
    "cp932": tuple("csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis".split()),
    "cp949": tuple(
        "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 "
        "ksc5601 ksc_5601 windows-949".split()
    ),
}

#: The web's windows-1252: Python's cp1252 with the five bytes it leaves undefined (0x81, 0x8D,
#: 0x8F, 0x90, 0x9D) read as the C1 controls ISO-8859-1 has there, as the WHATWG index does,
#: so a page labelled Latin-1 that holds one is read (and written back) as browsers read it.
WEB_1252 = "memsift_windows_1252"
WEB_1252_DECODING = "".join(
    chr(byte) if char == "\ufffe" else char
    for byte, char in enumerate(encodings.cp1252.decoding_table)
)
WEB_1252_ENCODING = codecs.charmap_build(WEB_1252_DECODING)


class Web1252IncrementalDecoder(codecs.IncrementalDecoder):
    def decode(self, data: bytes, final: bool = False) -> str:  # type: ignore[override]
        return codecs.charmap_decode(data, self.errors, WEB_1252_DECODING)[0]


class Web1252IncrementalEncoder(codecs.IncrementalEncoder):
    def encode(self, text: str, final: bool = False) -> bytes:  # type: ignore[override]
        return codecs.charmap_encode(text, self.errors, WEB_1252_ENCODING)[0]


def find_web_1252(name: str) -> codecs.CodecInfo | None:
    """The codec search function that makes :data:`WEB_1252` a codec Python knows."""
    if name.replace("-", "_") != WEB_1252:
        return None
    return codecs.CodecInfo(
        name=WEB_1252,
        encode=lambda text, errors="strict": codecs.charmap_encode(text, errors, WEB_1252_ENCODING),
        decode=lambda data, errors="strict": codecs.charmap_decode(data, errors, WEB_1252_DECODING),
        incrementalencoder=Web1252IncrementalEncoder,
        incrementaldecoder=Web1252IncrementalDecoder,
    )


codecs.register(find_web_1252)

#: A declared label (ASCII, lower case, surrounding spaces stripped) -> its Python codec.
WEB_CODECS: dict[str, str] = {
    label: codec for codec, labels in CODEC_LABELS.items() for label in labels
}


def web_codec(label: str) -> str | None:
    """The Python codec a browser's decoder for ``label`` matches, or None when browsers do
    not read such a label as a byte encoding (pure)."""
    return WEB_CODECS.get(label.strip().lower())


#: Browsers look for a declaration in the first 1,024 bytes only.
PRESCAN_BYTES = 1024
COMMENT = re.compile(rb"<!--.*?(?:-->|\Z)", re.S)
META_TAG = re.compile(rb"<meta(?=[\s/>])([^>]*)", re.I)
ATTRIBUTE = re.compile(rb"""([^\s/>=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?""")
CONTENT_CHARSET = re.compile(rb"""charset\s*=\s*["']?([^"'\s;]+)""", re.I)


def declared_label(data: bytes) -> str | None:
    """The charset label a browser's prescan finds at the start of an HTML page (pure).

    As the HTML standard's prescan reads it: comments are passed over, only a ``<meta>`` tag's
    own ``charset`` attribute counts, or its ``content`` when ``http-equiv`` says
    ``content-type`` (a description mentioning "charset=" is not a declaration), the first
    value of an attribute wins, and a label browsers do not know is passed over for a later
    one. A page naming only unknown labels gets the first of them back, for the message."""
    head = COMMENT.sub(b" ", data[:PRESCAN_BYTES])
    first_unknown = None
    for tag in META_TAG.finditer(head):
        attributes: dict[bytes, bytes] = {}
        for name, *values in ATTRIBUTE.findall(tag.group(1)):
            value = next((v for v in values if v), b"")
            attributes.setdefault(name.lower(), value)
        label = attributes.get(b"charset")
        if label is None and attributes.get(b"http-equiv", b"").lower() == b"content-type":
            found = CONTENT_CHARSET.search(attributes.get(b"content", b""))
            label = found.group(1) if found else None
        if not label:
            continue
        text = label.decode("ascii", "replace").strip().lower()
        if web_codec(text) is not None:
            return text
        first_unknown = first_unknown or text
    return first_unknown
