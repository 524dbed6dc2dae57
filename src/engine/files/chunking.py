"""Split a memory body into sentence-packed chunks for embedding.

A small embedding model reads at most 256 word pieces, so a long memory is embedded in pieces
and the vector arm keeps the best piece per file. Pieces are whole sentences packed up to a
target size: a cut inside a sentence (or a word) would give the model a fragment to embed.
"""

from __future__ import annotations

import re

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "chunk_text",
]

MIN_CHARS = 1000
MAX_CHARS = 2000

# A sentence ends at . ! ? (optionally closed by up to three quotes/brackets, which stay with
# it) before whitespace, or at a blank line (paragraph, list or heading boundary in Markdown).
# Only whitespace is consumed, so no character of the body is lost.
_SENTENCE_END = re.compile(
    r"(?:(?<=[.!?])|(?<=[.!?][\"')\]])|(?<=[.!?][\"')\]]{2})|(?<=[.!?][\"')\]]{3}))\s+"
    r"|\n\s*\n"
)


def split_sentences(text: str) -> list[str]:
    """Sentences (or paragraphs without end punctuation), whitespace-trimmed, none empty."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


def split_long(sentence: str, max_chars: int) -> list[str]:
    """Break an over-long sentence at whitespace; a single word longer than the cap stays whole
    unless it alone exceeds it, in which case it is cut (there is no better place)."""
    pieces: list[str] = []
    current = ""
    for word in sentence.split():
        while len(word) > max_chars:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(word[:max_chars])
            word = word[max_chars:]
        candidate = f"{current} {word}" if current else word
        if len(candidate) > max_chars:
            pieces.append(current)
            current = word
        else:
            current = candidate
    if current:
        pieces.append(current)
    return pieces


def chunk_text(text: str, min_chars: int = MIN_CHARS, max_chars: int = MAX_CHARS) -> list[str]:
    """Pack sentences into chunks of about ``min_chars``..``max_chars`` characters.

    A chunk is closed as soon as it reaches ``min_chars``, or when the next sentence would push
    it past ``max_chars``. A short trailing chunk is folded into its predecessor when the two fit
    together, so a body never ends on a scrap. An empty body yields no chunks.
    """
    sentences: list[str] = []
    for sentence in split_sentences(text):
        sentences.extend(
            split_long(sentence, max_chars) if len(sentence) > max_chars else [sentence]
        )
    chunks: list[str] = []
    current = ""
    for sentence in sentences:
        candidate = f"{current} {sentence}" if current else sentence
        if current and len(candidate) > max_chars:
            chunks.append(current)
            current = sentence
        else:
            current = candidate
        if len(current) >= min_chars:
            chunks.append(current)
            current = ""
    if current:
        if (
            chunks
            and len(chunks[-1]) + 1 + len(current) <= max_chars
            and len(current) < min_chars // 2
        ):
            chunks[-1] = f"{chunks[-1]} {current}"
        else:
            chunks.append(current)
    return chunks
