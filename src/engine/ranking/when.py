"""When a query asks about: dates and periods named in its text, as a time window.

"What did Elise buy on 7 Jan 2024?", "the football match Kevin watched in 2017", "what did I
decide last week": a memory store knows when each memory happened (``event_at``), and a
question that names a time is best answered by a memory from that time. This module reads such
expressions with rules, no language model: absolute dates in the common written forms (ISO,
day-month-year and month-day-year with month names, numeric dates with a four-digit year),
months and years, and a few relative ones ("yesterday", "last week", "3 days ago") against the
moment of the search. "before"/"after" just ahead of a date turn it into an open side.

The result is one window (the first expression found; a question rarely names two times and
guessing between them would be worse than using the first). Anything not understood yields
None, and the temporal arm then simply drops out.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

from engine.files.memory import format_utc

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "query_window",
]

MONTHS = {
    name.lower(): number
    for number in range(1, 13)
    for name in (calendar.month_name[number], calendar.month_abbr[number])
}
MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_QUALIFIER = r"(?:(?P<qualifier>before|after|since|until|by)\s+(?:the\s+)?)?"

#: How far an open side reaches ("before 7 Jan" looks back this far, not to the beginning).
OPEN_SIDE = dt.timedelta(days=30)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (unit, re.compile(_QUALIFIER + body, re.IGNORECASE))
    for unit, body in (
        ("day", r"\b(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})\b"),
        ("day", r"\b(?P<a>\d{1,2})(?P<sep>[./])(?P<b>\d{1,2})(?P=sep)(?P<year>\d{4})\b"),
        ("day", rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b"),
        ("day", rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b"),
        ("month", rf"\b{_MONTH}\s+(?:of\s+)?{_YEAR}\b"),
        ("year", rf"\b(?:in|of|during|from|since|before|after|year)\s+{_YEAR}\b"),
        ("relative", r"\b(?P<word>yesterday|today|tonight|this morning)\b"),
        ("relative", r"\b(?P<word>last|this|past)\s+(?P<period>week|month|year|weekend)\b"),
        (
            "relative",
            r"\b(?P<count>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
            r"(?P<period>day|week|month|year)s?\s+ago\b",
        ),
    )
)
#: What every pattern but the relative ones needs somewhere (the same ``\d`` they use).
_DIGIT = re.compile(r"\d")
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip


@dataclass(frozen=True)
class Window:
    """A half-open span of time [start, end) the query asks about, and the text that named it."""

    start: dt.datetime
    end: dt.datetime
    said: str

    def bounds(self) -> tuple[str, str]:
        """Start and end in the index's time format (UTC, second precision): the end's last
        second (a window held at the calendar's end ends at its last moment, not a midnight)."""
        last = self.end - dt.timedelta(microseconds=1)
        return format_utc(self.start), format_utc(last)


def query_window(
    text: str, now: dt.datetime | None = None, *, relative: bool = True
) -> Window | None:
    """The time window the query names, or None when it names none that these rules know.

    ``relative=False`` reads only absolute expressions: in conversational text "today" and
    "yesterday" usually speak of the conversation, not of the memory it is looking for.
    """
    found = time_expressions(text, now, relative=relative)
    if not found:
        return None
    return min(found, key=lambda item: item[0][0])[1]


def time_spans(text: str, *, relative: bool = False) -> list[tuple[int, int]]:
    """Where in ``text`` the time expressions these rules read lie (start, end): words that
    name a time, not a topic (the search's coverage test leaves them out)."""
    return [span for span, _ in time_expressions(text, None, relative=relative)]


def time_expressions(
    text: str, now: dt.datetime | None, *, relative: bool
) -> list[tuple[tuple[int, int], Window]]:
    """Every time expression of ``text`` these rules read, with the window it names.

    Every absolute expression holds a digit (a year, a day), so a text without one has none
    and the patterns are not run (most queries: nine patterns cost a hundredth of a search)."""
    if not relative and _DIGIT.search(text) is None:
        return []
    now = now or dt.datetime.now(dt.UTC).replace(tzinfo=None)
    found: list[tuple[tuple[int, int], Window]] = []
    claimed: list[tuple[int, int]] = []  # text a more specific pattern already read
    for unit, pattern in _PATTERNS:  # most specific first
        if unit == "relative" and not relative:
            continue
        for match in pattern.finditer(text):
            if any(match.start() < end and start < match.end() for start, end in claimed):
                continue  # "of 2024" inside "of 2024-03-05"; "Feb 2024" of "31 Feb 2024"
            claimed.append(match.span())
            span = read_span(unit, match, now)
            if span is not None:
                window = qualify(span, match.group("qualifier"), match.group(0).strip())
                if window.start < window.end:  # "before 0001-01-01": no time is left
                    found.append((match.span(), window))
    return found


def shifted(moment: dt.datetime, delta: dt.timedelta) -> dt.datetime:
    """``moment + delta``, held to the calendar a datetime holds: the day after 9999-12-31,
    or a month before 0001-01-10, is past it (an OverflowError for any query naming it)."""
    try:
        return moment + delta
    except OverflowError:
        return dt.datetime.max if delta > dt.timedelta(0) else dt.datetime.min


def read_span(
    unit: str, match: re.Match[str], now: dt.datetime
) -> tuple[dt.datetime, dt.datetime] | None:
    """The span one matched expression names (None for an impossible date)."""
    groups = match.groupdict()
    try:
        if unit == "relative":
            return relative_span(groups, now)
        year = int(groups["year"])
        if unit == "year":
            return dt.datetime(year, 1, 1), dt.datetime(year + 1, 1, 1)
        month = month_number(groups)
        if unit == "month":
            start = dt.datetime(year, month, 1)
            return start, add_months(start, 1)
        day = int(groups["day"]) if groups.get("day") else day_of(groups)
        start = dt.datetime(year, month, day)
        return start, shifted(start, dt.timedelta(days=1))
    except (ValueError, KeyError, TypeError, OverflowError):  # "99999999999 days ago"
        return None


def month_number(groups: dict[str, str | None]) -> int:
    """A month name or number; for a numeric date, the month by the usual conventions."""
    month = groups.get("month")
    if month is not None:
        return int(month) if month.isdigit() else MONTHS[month.lower().rstrip(".")]
    first, second = int(groups["a"] or 0), int(groups["b"] or 0)
    if first > 12:
        return second  # 25.01.2024: day first
    if second > 12:
        return first  # 01/25/2024: month first
    # Both could be the month: dots are written day-first, slashes month-first (US).
    return second if groups["sep"] == "." else first


def day_of(groups: dict[str, str | None]) -> int:
    first, second = int(groups["a"] or 0), int(groups["b"] or 0)
    return second if month_number(groups) == first else first


def add_months(moment: dt.datetime, months: int) -> dt.datetime:
    index = moment.year * 12 + moment.month - 1 + months
    return moment.replace(year=index // 12, month=index % 12 + 1, day=1)


def relative_span(
    groups: dict[str, str | None], now: dt.datetime
) -> tuple[dt.datetime, dt.datetime] | None:
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    word, period = (groups.get("word") or "").lower(), (groups.get("period") or "").lower()
    if word in ("today", "tonight", "this morning"):
        return today, today + dt.timedelta(days=1)
    if word == "yesterday":
        return today - dt.timedelta(days=1), today
    if groups.get("count"):
        count = groups["count"].lower()
        amount = int(count) if count.isdigit() else _NUMBERS[count]
        days = {"day": 1, "week": 7, "month": 30, "year": 365}[period] * amount
        centre = today - dt.timedelta(days=days)
        slack = dt.timedelta(days=max(1, days // 7))
        return centre - slack, centre + slack + dt.timedelta(days=1)
    if period == "weekend":
        saturday = today - dt.timedelta(days=(today.weekday() - 5) % 7)
        return saturday, saturday + dt.timedelta(days=2)
    length = {"week": 7, "month": 30, "year": 365}[period]
    if word == "this":
        return today - dt.timedelta(days=length), today + dt.timedelta(days=1)
    return today - dt.timedelta(days=2 * length), today + dt.timedelta(days=1)


def qualify(span: tuple[dt.datetime, dt.datetime], qualifier: str | None, said: str) -> Window:
    """ "before X" is the time just ahead of X, "after X" the time just after it."""
    start, end = span
    qualifier = (qualifier or "").lower()
    if qualifier in ("before", "until", "by"):
        return Window(shifted(start, -OPEN_SIDE), start, said)
    if qualifier in ("after", "since"):
        return Window(end, shifted(end, OPEN_SIDE), said)
    return Window(start, end, said)
