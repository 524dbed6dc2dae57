"""Quality findings: a registry that reads fine but would make a poor page or a leaky arm."""

from __future__ import annotations

import pytest
from arms_doc_testing import src

from arms_doc.checks import quality_findings
from arms_doc.reader import parse_registry
from engine.ranking.arm_rules import MIN_PROSE_WORDS

PROSE = " ".join(["word"] * MIN_PROSE_WORDS)

FINDER = f'''
    """Why the arms are data."""

    ARMS = (
        Arm(
            name="fts",
            weight=1.0,
            needs=(
                "query_terms",
            ),
            prose="{PROSE}",
            sql="SELECT path FROM f WHERE MATCH ?1 AND {{scope}} LIMIT ?2",
            label="full-text ranking",
        ),
    )
'''

PRIOR = (
    FINDER.replace('name="fts"', 'name="recency"')
    .replace('"query_terms",', "# none: a prior")
    .replace("MATCH ?1 AND {scope} LIMIT ?2", "{scope} AND f.path IN (SELECT path FROM candidates)")
)


def findings(text: str) -> list[tuple[int, str]]:
    registry = parse_registry(src(text), "arms.py")
    return [(finding.line, finding.message) for finding in quality_findings(registry)]


def test_a_sound_query_arm_has_no_findings():
    assert findings(FINDER) == []


def test_a_sound_prior_has_no_findings():
    assert findings(PRIOR) == []


def test_short_prose_is_a_finding_on_the_prose_line():
    ((line, message),) = findings(FINDER.replace(PROSE, "Ranks by words."))

    assert line == 10
    assert message.startswith("arm 'fts' has 3 words of prose")


def test_weight_zero_is_a_finding_on_the_weight_line():
    ((line, message),) = findings(FINDER.replace("weight=1.0", "weight=0.0"))

    assert line == 6
    assert "weight 0, so every search drops it" in message


def test_sql_without_the_shared_scope_is_a_finding():
    ((line, message),) = findings(FINDER.replace("AND {scope} ", ""))

    assert line == 11
    assert "never applies the shared {scope}" in message


def test_query_arm_not_cut_at_the_candidate_limit_is_a_finding():
    ((_, message),) = findings(FINDER.replace(" LIMIT ?2", ""))

    assert "does not cut its candidates at ?2" in message


def test_prior_that_ignores_the_candidates_is_a_finding():
    ((_, message),) = findings(PRIOR.replace(" AND f.path IN (SELECT path FROM candidates)", ""))

    assert "arm 'recency' is a prior" in message
    assert "candidates" in message


@pytest.mark.parametrize("number", [3, 5])
def test_placeholder_an_arm_may_not_use_is_a_finding(number):
    ((_, message),) = findings(FINDER.replace("LIMIT ?2", f"LIMIT ?2 OFFSET ?{number}"))

    assert f"uses ?{number}: " in message
    assert "it may use ?1 (the FTS5 query text), ?2 (" in message


def test_query_text_without_declaring_query_terms_is_a_finding():
    text = FINDER.replace('"query_terms",', '"query_vector",')

    ((_, message),) = findings(text)

    assert "uses ?1: ?1 belongs to the input 'query_terms', which the arm does not need" in message


def test_query_vector_without_declaring_it_is_a_finding():
    ((_, message),) = findings(FINDER.replace("MATCH ?1", "MATCH ?1 AND d(?4)"))

    assert "uses ?4: ?4 belongs to the input 'query_vector', which the arm does not need" in message


def test_state_plane_without_declaring_it_is_a_finding():
    ((_, message),) = findings(FINDER.replace("FROM f", "FROM f JOIN state.access"))

    assert "reads the state plane but does not need 'state_plane'" in message


def test_registry_without_docstring_is_a_finding_on_line_one():
    ((line, message),) = findings(FINDER.replace('"""Why the arms are data."""', ""))

    assert line == 1
    assert "no docstring" in message
