"""What one line off the MCP wire is, judged before the SDK reads it (pure).

The SDK answers nothing for a line it cannot read as a message, and it reads some requests
as notifications (an id of ``true`` or ``1.5`` is dropped as an unknown field), so their
clients would wait forever. JSON-RPC 2.0 asks for an answer to every request; this module
says which answer, by these rules (docs/agents.md lists them for clients):

- text that is not JSON (``NaN`` and ``Infinity`` included, and nesting too deep to read):
  ``-32700`` Parse error, id null;
- JSON that is not one object (a batch, a bare number), an object without ``"jsonrpc": "2.0"``,
  without ``method`` (and not an answer), with a ``method`` that is not a string, or with
  ``params`` that are not an object (``null`` counts as absent): ``-32600`` Invalid Request;
  ``params`` given as an array: ``-32602`` Invalid params (MCP names every parameter);
- an id that is not a string or an integer (``true``, ``null``, ``1.5``, ``1.0``, an object):
  ``-32600`` with id null, since MCP allows no other id and the SDK would drop the request;
- a string (key or value) holding a lone surrogate (``"\\ud800"``, not half of a pair) or
  bytes that are not UTF-8: not Unicode text, so ``-32602`` when it is under ``params``,
  ``-32600`` elsewhere, naming where it is;

each answered with the request's id when the id itself is valid, else null. A notification
(no id) is answered only when it is not a JSON-RPC message at all, as JSON-RPC 2.0's own
examples do; one whose params cannot be read is dropped with a line in the log, since a
notification must never be answered. A client's answer that cannot be read is dropped with a
log line too: an error sent back with its id could be taken for the answer to one of the
client's own requests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
SURROGATE = re.compile("[\ud800-\udfff]")
PART_CHARS = 60  # a key named in a message is cut to this many characters

RequestId = str | int


@dataclass(frozen=True)
class Verdict:
    """What to do with a line: pass it on (``answer`` and ``note`` both None), answer it with
    the JSON-RPC error ``answer`` (one line), or drop it with ``note`` for the log.
    ``request_id`` is the valid id of a request, for an answer the SDK may still owe."""

    answer: str | None = None
    note: str | None = None
    request_id: RequestId | None = None


def error_line(request_id: RequestId | None, code: int, message: str) -> str:
    answer = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(answer, separators=(",", ":")) + "\n"


def refused(request_id: RequestId | None, code: int, message: str) -> Verdict:
    return Verdict(answer=error_line(request_id, code, message), request_id=request_id)


def judge(line: str) -> Verdict:
    """The verdict on one line (text decoded with ``surrogateescape``, so bytes that are not
    UTF-8 show as lone surrogates of U+DC80..U+DCFF)."""
    not_utf8 = SURROGATE.search(line) is not None  # escapes are ASCII: only bad bytes do this
    try:
        message = json.loads(line, parse_constant=not_a_json_number)
    except RecursionError:
        return refused(None, PARSE_ERROR, "Parse error: the JSON is nested too deeply to read")
    except json.JSONDecodeError as exc:
        cause = "bytes that are not UTF-8" if not_utf8 else f"{exc.msg} at character {exc.pos}"
        return refused(None, PARSE_ERROR, f"Parse error: the line is not JSON ({cause})")
    except ValueError as exc:  # NaN or Infinity
        return refused(None, PARSE_ERROR, f"Parse error: the line is not JSON ({exc})")
    if isinstance(message, list):
        return refused(
            None,
            INVALID_REQUEST,
            "Invalid Request: a batch (JSON array) is not part of MCP; send each message on a "
            "line of its own",
        )
    if not isinstance(message, dict):
        return refused(None, INVALID_REQUEST, f"Invalid Request: {kind_of(message)}, not an object")
    if "method" in message:
        return judge_request(message, not_utf8)
    if "result" in message or "error" in message:
        return judge_answer(message, not_utf8)
    request_id, _ = read_id(message)
    return refused(
        request_id,
        INVALID_REQUEST,
        'Invalid Request: expected "method" (a request or notification), or "result" or '
        '"error" (an answer)',
    )


def judge_request(message: dict[str, object], not_utf8: bool) -> Verdict:
    """A request (it has an id) or a notification (it has none)."""
    request_id, id_problem = read_id(message)
    is_request = "id" in message

    def invalid(code: int, what: str) -> Verdict:
        return refused(request_id, code, f"{CODE_NAMES[code]}: {what}")

    if message.get("jsonrpc") != "2.0":
        return invalid(INVALID_REQUEST, '"jsonrpc" must be "2.0"')
    if id_problem is not None:
        return invalid(INVALID_REQUEST, id_problem)
    method = message["method"]
    if not isinstance(method, str):
        return invalid(INVALID_REQUEST, f'"method" must be a string, not {kind_of(method)}')
    params = message.get("params")
    if isinstance(params, list):
        return invalid(INVALID_PARAMS, '"params" must be an object: MCP names every parameter')
    if params is not None and not isinstance(params, dict):
        return invalid(INVALID_REQUEST, f'"params" must be an object, not {kind_of(params)}')
    where = first_surrogate(message)
    if where is None:
        return Verdict(request_id=request_id)
    problem = not_unicode(where, not_utf8)
    if where[0] == "params":
        if not is_request:
            return Verdict(note=f"dropped notification {method!r}: {problem}")
        return invalid(INVALID_PARAMS, problem)
    return invalid(INVALID_REQUEST, problem)


def judge_answer(message: dict[str, object], not_utf8: bool) -> Verdict:
    """A client's answer to a request of the server's: passed on when the SDK can read it,
    else dropped with a note (see the module's docstring for why it is not answered)."""
    request_id, id_problem = read_id(message)
    problem = None
    if message.get("jsonrpc") != "2.0":
        problem = '"jsonrpc" must be "2.0"'
    elif id_problem is not None and not ("error" in message and message.get("id") is None):
        problem = id_problem
    elif "result" in message and not isinstance(message["result"], dict):
        problem = f'"result" must be an object, not {kind_of(message["result"])}'
    elif (where := first_surrogate(message)) is not None:
        problem = not_unicode(where, not_utf8)
    if problem is None:
        return Verdict()
    return Verdict(note=f"dropped an answer from the client (id {request_id!r}): {problem}")


CODE_NAMES = {INVALID_REQUEST: "Invalid Request", INVALID_PARAMS: "Invalid params"}


def read_id(message: dict[str, object]) -> tuple[RequestId | None, str | None]:
    """The message's id when it is one MCP allows (a string of Unicode text, or an integer),
    and what is wrong with it otherwise (None when it is valid or absent)."""
    if "id" not in message:
        return None, None
    value = message["id"]
    if isinstance(value, str):
        if SURROGATE.search(value):
            return None, "the id must be Unicode text: it holds a lone surrogate or bad bytes"
        return value, None
    if isinstance(value, int) and not isinstance(value, bool):
        return value, None
    shown = repr(value) if isinstance(value, float) else kind_of(value)
    return None, f"the id must be a string or an integer (MCP allows no other), not {shown}"


def kind_of(value: object) -> str:
    """A JSON value's kind, as a client's author would say it."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def not_a_json_number(constant: str) -> object:
    raise ValueError(f"{constant} is not a JSON number")


def first_surrogate(message: dict[str, object]) -> tuple[str, ...] | None:
    """Where (``("params", "arguments", "query")``) the first string holding a surrogate is,
    or None. Iterative: ``json.loads`` nests deeper than a recursive walk may."""
    for where, text in strings(message):
        if SURROGATE.search(text):
            return where
    return None


def strings(value: object) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every string in ``value`` (keys too), with the keys and indexes that lead to it."""
    stack: list[tuple[tuple[str, ...], object]] = [((), value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            yield where, item
        elif isinstance(item, dict):
            for key, child in item.items():
                yield (*where, key), key
                stack.append(((*where, key), child))
        elif isinstance(item, list):
            stack.extend(((*where, str(index)), child) for index, child in enumerate(item))


def place(where: tuple[str, ...]) -> str:
    """A place in a message as a message names it: ``params.arguments.tags.0``, each key in
    ASCII and cut to :data:`PART_CHARS` characters."""
    parts = []
    for part in where:
        text = part.encode("ascii", "backslashreplace").decode("ascii")
        parts.append(text if len(text) <= PART_CHARS else text[:PART_CHARS] + "...")
    return ".".join(parts) or "the message"


def not_unicode(where: tuple[str, ...], not_utf8: bool) -> str:
    what = "bytes that are not UTF-8" if not_utf8 else "a lone surrogate (half of a \\u pair)"
    return f"{place(where)} holds {what}, which is not Unicode text; send the text as UTF-8"


LEADING_MEMBER = re.compile(
    r'\s*"((?:[^"\\]|\\.){0,200})"\s*:\s*'
    r'("(?:[^"\\]|\\.){0,200}"|-?(?:0|[1-9][0-9]{0,30})(?![.eE0-9])|true|false|null)\s*,'
)


def leading_id(head: bytes) -> RequestId | None:
    """The id of a message of which only ``head`` (its first bytes) is kept, when the id is
    a valid one among the simple members (strings, integers, literals) it starts with, as
    clients write ``{"jsonrpc": "2.0", "id": 7, "method": …`` before the long params; else
    None. Used for a line too long to read whole."""
    text = head.decode("utf-8", "surrogateescape")
    start = re.match(r"\s*\{", text)
    if start is None:
        return None
    position = start.end()
    while member := LEADING_MEMBER.match(text, position):
        position = member.end()
        try:
            key, value = json.loads(f'"{member[1]}"'), json.loads(member[2])
        except ValueError:
            return None
        if key == "id":
            request_id, problem = read_id({"id": value})
            return request_id if problem is None else None
    return None
