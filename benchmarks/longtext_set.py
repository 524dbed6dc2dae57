"""A known-item set of licence questions over real documents, long and short, in BEIR layout.

Issue 21's fourth fault: on real documents, "what license covers the zlib code bundled in the
JDK" put a 128 KB GPL text first (fts #4, vector #14) above the zlib licence (fts #38, vector
#1). Two middling agreements beat one strong match under weighted RRF. This script builds a set
with that shape from what the machine itself holds, written by nobody on this project:

- the licence texts of ``/usr/share/common-licenses`` (GPL, LGPL, GFDL, Apache, MPL, BSD ...);
- every distinct ``/usr/share/doc/<package>/copyright`` file (identical copies, as libx11-6's
  and libx11-dev's, are one document, named after the first package holding it), whole: a few
  are long generic texts (perl's, nodejs's, openjdk's, boost's two megabytes) that mention
  nearly every licence and many a library, beside hundreds of short ones that state one
  package's licence.

The questions are this project's own (``benchmarks/longtext/questions.json``): each is
answered by one short, specific document, while long generic ones share several of its words.
A question names its document by package (any package of a group of identical copies will
do) or by licence name; one whose document this machine lacks is left out and counted.
Nothing of the documents is copied into the repository: the set is written where you say.

    python benchmarks/longtext_set.py $TMPDIR/sets/licences
    python benchmarks/fusion_lab.py extract --work $TMPDIR/lab --extra $TMPDIR/sets/licences \
        --only licences
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUESTIONS = REPO / "benchmarks" / "longtext" / "questions.json"
DOC = Path("/usr/share/doc")
LICENSES = Path("/usr/share/common-licenses")
#: Bigger files are left out: above this a copyright file is a concatenation of upstream
#: files (boost's is 2 MB), which the set keeps, but not without bound.
MAX_BYTES = 4_000_000


def licence_docs(folder: Path = LICENSES) -> dict[str, dict[str, str]]:
    """``licenses/<name>`` -> row, for every licence text (symlinks such as GPL -> GPL-3 are
    aliases, not documents)."""
    rows = {}
    if not folder.is_dir():
        return rows
    for path in sorted(folder.iterdir()):
        if path.is_symlink() or not path.is_file():
            continue
        doc_id = f"licenses/{path.name}"
        text = path.read_text(encoding="utf-8", errors="replace")
        rows[doc_id] = {"_id": doc_id, "title": f"common-licenses: {path.name}", "text": text}
    return rows


def copyright_docs(doc: Path = DOC) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """``debian/<package>`` -> row for every distinct copyright text, and package -> the id of
    the document holding its text (so a question may name any package of a group)."""
    groups: dict[str, list[Path]] = {}
    if not doc.is_dir():
        return {}, {}
    for path in sorted(doc.glob("*/copyright")):
        if path.is_symlink() or path.parent.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if not data.strip() or len(data) > MAX_BYTES:
            continue
        groups.setdefault(hashlib.sha256(data).hexdigest(), []).append(path)
    rows: dict[str, dict[str, str]] = {}
    owner: dict[str, str] = {}
    for paths in groups.values():
        first = min(paths, key=lambda p: p.parent.name)
        doc_id = f"debian/{first.parent.name}"
        text = first.read_text(encoding="utf-8", errors="replace")
        rows[doc_id] = {"_id": doc_id, "title": f"{first.parent.name}: copyright", "text": text}
        owner.update({p.parent.name: doc_id for p in paths})
    return dict(sorted(rows.items())), owner


def resolve(expect: str, rows: dict[str, dict[str, str]], owner: dict[str, str]) -> str | None:
    """The document id an ``expect`` names: ``licenses/<name>`` or ``debian:<package>``."""
    if expect.startswith("debian:"):
        return owner.get(expect.removeprefix("debian:"))
    return expect if expect in rows else None


def build(out: Path, questions: Path = QUESTIONS) -> dict[str, int]:
    rows = licence_docs()
    copyrights, owner = copyright_docs()
    rows.update(copyrights)
    spec = json.loads(questions.read_text(encoding="utf-8"))
    queries, qrels, missing = [], [], []
    for number, item in enumerate(spec["questions"]):
        found = [resolve(e, rows, owner) for e in item["expect"]]
        if not all(found):
            missing.append(item["q"])
            continue
        qid = f"q{number:02d}"
        queries.append({"_id": qid, "text": item["q"]})
        qrels += [f"{qid}\t{doc_id}\t1" for doc_id in found]
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows.values():
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for row in queries:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    (out / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "\n".join(qrels) + "\n", encoding="utf-8"
    )
    for text in missing:
        print(f"left out (its document is not on this machine): {text}", file=sys.stderr)
    return {"documents": len(rows), "questions": len(queries), "left_out": len(missing)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="where to write the set (outside the repo)")
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    args = parser.parse_args()
    print(build(args.out, args.questions))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
