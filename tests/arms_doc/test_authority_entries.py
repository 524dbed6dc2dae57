"""Authority signals in the registry: read statically like the arms, checked by the engine's own
rule (an error at the entry's line), part of the ranking's fingerprint, and on the page."""

from __future__ import annotations

from pathlib import Path

import pytest
from arms_doc_testing import src

from arms_doc.page import generate_page
from arms_doc.reader import RegistryError, parse_registry
from engine.arms import AUTHORITY
from engine.measure.fingerprint import ranking

REPO = Path(__file__).resolve().parents[2]
#: A registry that assembles and prepares (the golden page's), without authority signals.
SNAPSHOT = (Path(__file__).parent / "fixtures" / "registry_snapshot.py").read_text()

ARM = '''
    ARMS = (
        Arm(
            name="fts",
            label="full-text ranking",
            weight=1.0,
            needs=("query_terms",),
            prose="Ranks by words.",
            sql="SELECT 1",
        ),
    )
'''


def signal(factor: str = "1.2", effect: str = "raise", tags: str = '("pinned",)') -> str:
    return f'''
    AUTHORITY = (
        Authority(
            name="pinned",
            label="pinned",
            tags={tags},
            effect="{effect}",
            factor={factor},
            prose="Pinned memories first.",
        ),
    )
'''


def test_a_registry_without_authority_reads_none():
    assert parse_registry(src(ARM), "arms.py").authority == ()


def test_an_authority_entry_is_read_as_written():
    (entry,) = parse_registry(src(ARM + signal()), "arms.py").authority
    assert (entry.name, entry.tags, entry.effect, entry.factor, entry.factor_text) == (
        "pinned",
        ("pinned",),
        "raise",
        1.2,
        "1.2",
    )
    assert entry.prose == "Pinned memories first."


def test_a_raise_below_one_is_an_error_at_its_entry_line():
    with pytest.raises(RegistryError) as caught:
        parse_registry(src(ARM + signal(factor="0.8")), "arms.py")
    assert caught.value.line == src(ARM + signal()).splitlines().index("    Authority(") + 1
    assert "raises by 0.8" in caught.value.message


def test_a_computed_factor_is_refused():
    with pytest.raises(RegistryError, match="not a number literal"):
        parse_registry(src(ARM + signal(factor="1 + 0.2")), "arms.py")


def test_the_project_registry_reads_as_the_engine_has_it():
    registry = parse_registry((REPO / "src/engine/arms.py").read_text(), "arms.py")
    assert [(e.name, e.tags, e.effect, e.factor) for e in registry.authority] == [
        (s.name, s.tags, s.effect, s.factor) for s in AUTHORITY
    ]
    assert ranking(registry.arms, authority=registry.authority) == ranking(
        registry.arms, authority=AUTHORITY
    )


def test_a_changed_factor_changes_the_fingerprint_in_words():
    before = parse_registry(src(ARM + signal()), "arms.py")
    after = parse_registry(src(ARM + signal(factor="1.3")), "arms.py")
    changes = ranking(after.arms, authority=after.authority).changes_since(
        ranking(before.arms, authority=before.authority)
    )
    assert changes == ["authority pinned: raise 1.2 on pinned -> raise 1.3 on pinned"]


def test_the_page_shows_each_signal_and_the_statement_applies_it(tmp_path: Path):
    registry = tmp_path / "arms.py"
    registry.write_text(SNAPSHOT + src(signal(effect="cap", factor="0.5")), encoding="utf-8")
    page = generate_page(registry, display="arms.py").markdown
    assert "## Authority" in page
    assert "| [pinned](#pinned) | `pinned` | cap | 0.5 |" in page
    assert "Pinned memories first." in page
    assert "fused_score * authority" in page


def test_a_page_without_signals_has_no_authority_section(tmp_path: Path):
    registry = tmp_path / "arms.py"
    registry.write_text(SNAPSHOT, encoding="utf-8")
    page = generate_page(registry, display="arms.py").markdown
    assert "## Authority" not in page and "fused_score * authority" not in page
