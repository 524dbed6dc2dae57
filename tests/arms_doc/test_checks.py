"""The engine's registry rules as the docs build applies them: warnings are quality findings at
the line of the field they are about; errors stop the reader at that line."""

from __future__ import annotations

import pytest
from arms_doc_testing import src

from arms_doc.checks import quality_findings
from arms_doc.reader import RegistryError, parse_registry
from engine.arm_rules import MIN_PROSE_WORDS

PROSE = " ".join(["word"] * MIN_PROSE_WORDS)

FINDER = f'''
    """Why the arms are data."""

    ARMS = (
        Arm(
            name="fts",
            weight=1.0,
            needs=("query_terms",),
            prose="{PROSE}",
            sql="SELECT path FROM f WHERE MATCH ?1 AND {{scope}} LIMIT ?2",
        ),
    )
'''

PRIOR = (
    FINDER.replace('name="fts"', 'name="recency"')
    .replace('needs=("query_terms",)', "needs=()")
    .replace("MATCH ?1 AND {scope} LIMIT ?2", "{scope} AND f.path IN (SELECT path FROM candidates)")
)


def findings(text: str) -> list[tuple[int, str]]:
    registry = parse_registry(src(text), "arms.py")
    return [(finding.line, finding.message) for finding in quality_findings(registry)]


def refusal(text: str) -> RegistryError:
    with pytest.raises(RegistryError) as caught:
        parse_registry(src(text), "arms.py")
    return caught.value


def test_a_sound_query_arm_has_no_findings():
    assert findings(FINDER) == []


def test_a_sound_prior_has_no_findings():
    assert findings(PRIOR) == []


def test_short_prose_is_a_finding_on_the_prose_line():
    ((line, message),) = findings(FINDER.replace(PROSE, "Ranks by words."))

    assert line == 8
    assert message.startswith("arm 'fts' has 3 words of prose")


def test_weight_zero_is_a_finding_on_the_weight_line():
    ((line, message),) = findings(FINDER.replace("weight=1.0", "weight=0.0"))

    assert line == 6
    assert "weight 0, so every search drops it" in message


def test_sql_without_the_shared_scope_is_a_finding_on_the_sql_line():
    ((line, message),) = findings(FINDER.replace("AND {scope} ", ""))

    assert line == 9
    assert "never applies the shared {scope}" in message


def test_query_arm_not_cut_at_the_candidate_limit_is_a_finding():
    ((_, message),) = findings(FINDER.replace(" LIMIT ?2", ""))

    assert "does not cut its candidates at ?2" in message


def test_prior_that_ignores_the_candidates_is_a_finding():
    ((_, message),) = findings(PRIOR.replace(" AND f.path IN (SELECT path FROM candidates)", ""))

    assert "arm 'recency' is a prior" in message
    assert "candidates" in message


@pytest.mark.parametrize("number", [3, 99])
def test_a_placeholder_an_arm_may_not_use_stops_the_reader_at_the_sql_line(number):
    problem = refusal(FINDER.replace("LIMIT ?2", f"LIMIT ?2 OFFSET ?{number}"))

    assert problem.line == 9
    assert f"arm 'fts' uses ?{number}" in problem.message


def test_query_text_without_needing_query_terms_stops_the_reader():
    problem = refusal(FINDER.replace('needs=("query_terms",)', 'needs=("query_vector",)'))

    assert "uses ?1: ?1 belongs to the input 'query_terms', which the arm does not need" in str(
        problem
    )


def test_the_state_plane_without_needing_it_stops_the_reader():
    problem = refusal(FINDER.replace("FROM f", "FROM f JOIN state.access"))

    assert "reads the state plane but does not need 'state_plane'" in problem.message


def test_an_unknown_input_stops_the_reader_at_the_needs_line():
    problem = refusal(FINDER.replace('needs=("query_terms",)', 'needs=("query_terms", "mood")'))

    assert problem.line == 7
    assert "needs 'mood', which is not an input" in problem.message


def test_registry_without_docstring_is_a_finding_on_line_one():
    ((line, message),) = findings(FINDER.replace('"""Why the arms are data."""', ""))

    assert line == 1
    assert "no docstring" in message
