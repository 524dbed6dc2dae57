"""A database password out of every line memsift writes: errors, ``--debug`` tracebacks, logs.

A team store's connection string usually carries its password, and what memsift prints about a
failure ends up in terminals, CI logs and agents' transcripts. The driver makes it worse: libpq
quotes the token of a URL it cannot parse, and that token is often the password. So every
message, traceback and log line goes through :func:`redact`, which takes out

- every password of a connection string this process was given (:func:`hide_passwords_of` is
  called where ``config.toml``, ``MEMSIFT_DATABASE_URL`` or ``--database-url`` is read; the
  variable is also read here, so a traceback raised before any of that is covered too), as
  written and percent-decoded, and any 4+ character piece of one that the driver quotes;
- any password written in a connection string inside the text itself, whoever wrote it there:
  a URL's user info (``user:pw@host``, and ``user:pw/db`` with no ``@host``, where the password
  reads as a port), ``password=`` parameters of a URL, and libpq keyword strings
  (``password=pw`` or ``password='p w'``).

Redacting too much is the safe way to be wrong: a word that only looks like a password becomes
``***`` in an error message, where a real one would have been published.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import traceback
from urllib.parse import unquote, unquote_plus

#: The variable naming a team store's database; its value is a secret wherever it appears.
URL_VARIABLE = "MEMSIFT_DATABASE_URL"
HIDDEN = "***"

_remembered: set[str] = set()
_lock = threading.Lock()

#: A URL as it appears in running text: a scheme, then anything up to a blank or a quote.
URL_IN_TEXT = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]*")
#: ``password=`` in a libpq keyword string or a URL's query, and its value: a single-quoted
#: value (backslash escapes, possibly never closed) or everything up to a blank or a quote.
PASSWORD_PARAMETER = re.compile(
    r"(\bpassword\s*=\s*)('(?:[^'\\\n]|\\.)*(?:'|(?=\n)|$)|[^\s\"]+)", re.IGNORECASE
)
#: A token libpq or psycopg quotes in a message, long enough to be part of a password.
QUOTED = re.compile(r'"([^"\n]{4,})"')


def passwords(conninfo: str) -> set[str]:
    """The passwords ``conninfo`` (a URL or a libpq keyword string) carries, as written and
    decoded: each is a form in which the driver, or a message, may repeat it."""
    found: set[str] = set()
    if "://" in conninfo:
        rest = conninfo.split("://", 1)[1]
        authority = rest.split("/", 1)[0]  # libpq ends the user info at the first /
        userinfo, at, _hosts = authority.rpartition("@")
        if at and ":" in userinfo:
            found.add(userinfo.split(":", 1)[1])
        elif not at:
            found.update(non_numeric_ports(re.split(r"[?#]", authority, maxsplit=1)[0]))
        query = rest.partition("?")[2].partition("#")[0]
        for pair in query.split("&"):
            name, equals, value = pair.partition("=")
            if equals and unquote(name).strip().lower() == "password":
                found.add(value)
    else:
        for match in PASSWORD_PARAMETER.finditer(conninfo):
            value = match.group(2)
            found.add(value)
            if value.startswith("'"):
                inner = value[1:-1] if value.endswith("'") and len(value) > 1 else value[1:]
                found.update((inner, re.sub(r"\\(.)", r"\1", inner)))
    found |= {unquote(text) for text in found} | {unquote_plus(text) for text in found}
    return {text for text in found if text and text != HIDDEN}


def non_numeric_ports(hosts: str) -> set[str]:
    """In a URL with no ``@host``, ``user:secret`` reads as a host and a port: every "port" that
    is not a number may be a password (``postgresql://memsift:secret/team``)."""
    found = set()
    for host in hosts.split(","):
        host = re.sub(r"\[[^\]]*\]?", "", host)  # an IPv6 address holds colons of its own
        port = host.rpartition(":")[2] if ":" in host else ""
        if port and not port.isdigit():
            found.add(port)
    return found


def hide_passwords_of(conninfo: object) -> None:
    """Note the passwords of a connection string this process was given, so that no later
    message, traceback or log line shows them."""
    if isinstance(conninfo, str) and conninfo:
        secrets = passwords(conninfo)
        with _lock:
            _remembered.update(secrets)


def forget_passwords() -> None:
    """Forget every remembered password: each test starts as a new process would, so a
    password one test names does not turn up as ``***`` in another's expected output."""
    with _lock:
        _remembered.clear()


def known_secrets() -> list[str]:
    """Every remembered password and the variable's, longest first (a password that holds
    another is replaced whole)."""
    with _lock:
        secrets = set(_remembered)
    secrets |= passwords(os.environ.get(URL_VARIABLE) or "")
    return sorted(secrets, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every password it may hold replaced by ``***`` (see the module's
    docstring for what counts)."""
    if not text:
        return text
    secrets = known_secrets()
    for secret in secrets:
        text = text.replace(secret, HIDDEN)
    if secrets:
        text = QUOTED.sub(lambda m: hide_quoted(m, secrets), text)
    text = URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)
    return PASSWORD_PARAMETER.sub(lambda m: m.group(1) + HIDDEN, text)


def hide_quoted(match: re.Match[str], secrets: list[str]) -> str:
    """A quoted token that is a piece of a password (libpq quotes the part it choked on)."""
    token = match.group(1)
    return f'"{HIDDEN}"' if any(token in secret for secret in secrets) else match.group(0)


def redact_url(url: str) -> str:
    """One URL found in running text, its own passwords replaced (and only inside it: a
    one-letter password must not take every such letter out of the message)."""
    for secret in sorted(passwords(url), key=len, reverse=True):
        url = url.replace(secret, HIDDEN)
    return url


def redacted_traceback(exc: BaseException | None = None) -> str:
    """The traceback ``--debug`` prints (of ``exc``, or of the exception being handled), with
    every chained exception's message redacted."""
    if exc is None:
        return redact(traceback.format_exc())
    return redact("".join(traceback.format_exception(exc)))


class RedactingFilter(logging.Filter):
    """A handler filter that redacts a record's message and its traceback before any
    formatter sees them (the MCP SDK logs a tool's crash with its traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redacted_traceback(record.exc_info[1]).rstrip("\n")
            record.exc_info = None
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def redact_logging() -> None:
    """Redact every line the root logger's handlers write (call once its handlers exist)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
