"""A stress set for length bias: focused notes mixed with huge files, in BEIR layout.

A memory store of real documents holds short, focused notes beside a few huge files
(changelogs, release notes) that mention nearly everything. A ranking that scores whole files
lets the huge ones crowd every result list. This script builds such a set from any folder of
real Markdown: every second- or third-level section of the ordinary documents becomes a
focused note, every file over ``--huge`` bytes is kept whole, and queries are drawn from the
notes (their heading, or the first sentence of their text), each judged relevant to the note
it came from. Nothing of the source is copied into the repository: the set is written where
you say, e.g. a temporary folder.

    python benchmarks/stress_set.py path/to/markdown-docs $TMPDIR/stress   # e.g. Node.js docs

The figure to watch besides nDCG@10 is how often a huge file takes one of the top three places.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

HEADING = re.compile(r"^(#{2,3})\s+(.+?)\s*#*\s*$")
SEED = 20261130


def sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) of every ## / ### section, code fences respected."""
    out: list[tuple[str, str]] = []
    heading, body, fenced = None, [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        match = None if fenced else HEADING.match(line)
        if match:
            if heading:
                out.append((heading, "\n".join(body).strip()))
            heading, body = match.group(2), []
        elif heading:
            body.append(line)
    if heading:
        out.append((heading, "\n".join(body).strip()))
    return out


def plain(text: str) -> str:
    """Heading or sentence text as a user would type it: markup and punctuation out."""
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"[`*_\[\]()#>{}|]", " ", text)
    return " ".join(text.split())


def first_sentence(body: str) -> str | None:
    for paragraph in body.split("\n\n"):
        paragraph = paragraph.strip()
        if not paragraph or paragraph.startswith(("```", "*", "-", "<", "|", ">", "#")):
            continue
        sentence = re.split(r"(?<=[.!?])\s", " ".join(paragraph.split()))[0]
        words = plain(sentence).split()
        if 5 <= len(words) <= 30:
            return " ".join(words)
    return None


def build(source: Path, out: Path, huge: int, queries: int) -> dict[str, int]:
    corpus: list[dict[str, str]] = []
    notes: list[tuple[str, str, str]] = []  # id, heading, body
    for path in sorted(source.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(text.encode("utf-8")) >= huge:
            corpus.append({"_id": f"huge:{path.name}", "title": path.stem, "text": text})
            continue
        for number, (heading, body) in enumerate(sections(text)):
            if len(body) < 200:
                continue
            doc_id = f"{path.stem}#{number}"
            corpus.append({"_id": doc_id, "title": plain(heading), "text": body})
            notes.append((doc_id, heading, body))
    rng = random.Random(SEED)
    picked = rng.sample(notes, min(queries, len(notes)))
    rows, qrels = [], []
    for number, (doc_id, heading, body) in enumerate(picked):
        text = plain(heading) if number % 2 == 0 else first_sentence(body)
        if not text or len(text.split()) < 2:
            continue
        rows.append({"_id": f"q{number}", "text": text})
        qrels.append(f"q{number}\t{doc_id}\t1")
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for row in corpus:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    (out / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "\n".join(qrels) + "\n", encoding="utf-8"
    )
    return {
        "notes": len(notes),
        "huge": sum(r["_id"].startswith("huge:") for r in corpus),
        "queries": len(rows),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="a folder of real Markdown documents")
    parser.add_argument("out", type=Path, help="where to write the set (outside the repo)")
    parser.add_argument("--huge", type=int, default=300_000, help="bytes that make a file huge")
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    print(build(args.source, args.out, args.huge, args.queries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
