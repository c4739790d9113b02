"""Bounded JSON reading: every JSON and JSONL reader of shiftkit parses through `loads`.

Python's `json` reads what the standard allows, and some of that is a crash or a stall for
the code after it: an integer of more than `sys.get_int_max_str_digits()` digits raises
ValueError (and one just below the limit costs quadratic time to convert), a document
nested deeper than the interpreter's recursion limit raises RecursionError (and one nested a
few hundred deep does so later, in the schema validator or `json.dumps`), a line of a
hundred megabytes is read whole. Files shiftkit reads are written by shiftkit, a harness or
git, but any of them can be edited by hand or committed past the hooks, so each bound is a
`BadInput` naming where (file and line), never another exception (decision 0061).
"""

from __future__ import annotations

import json
import re
from itertools import accumulate

from shiftkit.core.errors import BadInput

TYPE_CHECKING = False  # (typing is not imported on the guard's path: decision 0070)
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 64  # arrays and objects inside each other: shiftkit's own files nest 4 deep
MAX_DIGITS = 64  # digits of one integer: counts and attempts are far below 10**20
MAX_LINE = 1_000_000  # characters of one JSONL line shiftkit writes (a ledger entry is ~300)

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_LINE_OF_FILE = re.compile(r"(^| )line \d+$")  # `where` names one line of a JSONL file
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class _TooLong(Exception):
    def __init__(self, digits: int) -> None:
        self.digits = digits


def depth(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets inside strings do not
    count). Cheap when the text holds few brackets: it cannot nest deeper than it has."""
    opening = text.count("[") + text.count("{")
    if opening == 0:
        return 0
    skeleton = _STRING.sub("", text) if '"' in text else text
    return max(accumulate(_STEP[c] for c in _BRACKET.findall(skeleton)), default=0)


def loads(
    text: str,
    where: str,
    *,
    max_depth: int | None = MAX_DEPTH,
    max_digits: int = MAX_DIGITS,
    max_length: int | None = None,
) -> Any:
    """``text`` parsed, or a `BadInput` ``"<where>: ..."`` (one line) when it is not JSON or
    passes a bound: longer than ``max_length`` characters, nested deeper than
    ``max_depth`` (None: as deep as the parser reads, about the interpreter's recursion
    limit), an integer of more than ``max_digits`` digits."""
    if max_length is not None and len(text) > max_length:
        raise BadInput(f"{where}: {len(text):,} characters, more than the {max_length:,} read")
    if (
        max_depth is not None
        and text.count("[") + text.count("{") > max_depth
        and depth(text) > max_depth
    ):
        raise BadInput(f"{where}: JSON nested more than {max_depth} deep")

    def bounded_int(digits: str) -> int:
        if len(digits.lstrip("-")) > max_digits:
            raise _TooLong(len(digits.lstrip("-")))
        return int(digits)

    try:
        return json.loads(text, parse_int=bounded_int)
    except _TooLong as exc:
        raise BadInput(
            f"{where}: a number of {exc.digits:,} digits (at most {max_digits} are read)"
        ) from None
    except json.JSONDecodeError as exc:
        if _LINE_OF_FILE.search(where) is None:  # a document: where in it
            raise BadInput(
                f"{where}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from None
        raise BadInput(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # (a bound above was not enough: say so plainly)
        raise BadInput(f"{where}: not JSON shiftkit can read ({type(exc).__name__})") from None
