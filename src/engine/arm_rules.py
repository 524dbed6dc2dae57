"""What an arm's name and weight must be, stated once.

The assembler checks the arms it folds and the docs plugin checks the registry it reads
statically; both call these functions, so they cannot disagree about an entry (they once did:
the plugin let ``_recency`` through and the assembler refused it, blaming the wrong line).
"""

from __future__ import annotations

import math
import re

#: An arm's name becomes part of SQL identifiers (``arm_<name>``, ``<name>_rank``), a key of
#: ``config.toml``'s ``[weights]`` and of ``--json`` output: a lower-case word, no quoting.
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
NAME_RULE = "a name starts with a lower-case letter and holds only lower-case letters, digits and _"

#: Weights are inlined into the SQL as numeric literals, so they must print as plain numbers.
WEIGHT_RULE = "a weight is a finite number >= 0"


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot name an arm (a sentence ending in the rule), or None if it can."""
    if isinstance(name, str) and NAME_PATTERN.fullmatch(name):
        return None
    return f"arm name {name!r} cannot be part of a SQL identifier; {NAME_RULE}"


def weight_problem(weight: object) -> str | None:
    """What ``weight`` is instead of a finite number >= 0 ("negative", "not finite", ...), or
    None when it is one.

    ``True`` is not a number here, and an integer too large for a float (a 401-digit literal)
    is refused instead of raising OverflowError where it is used.
    """
    if isinstance(weight, bool) or not isinstance(weight, int | float):
        return f"not a number but a {type(weight).__name__}"
    try:
        value = float(weight)
    except OverflowError:
        return "too large for a number"
    if math.isnan(value) or math.isinf(value):
        return "not finite"
    if value < 0:
        return "negative"
    return None
