"""Rule 9 on a commit message, with no imports at all: the reference-transaction hook checks
every new commit's subject, and `re` (with `enum`) would be most of its start-up."""

from __future__ import annotations

MAX_SUBJECT = 72
GENERIC_SUBJECTS = frozenset(
    {
        "wip",
        "fix",
        "fixes",
        "fixed",
        "update",
        "updates",
        "updated",
        "change",
        "changes",
        "changed",
        "edit",
        "edits",
        "stuff",
        "misc",
        "tmp",
        "temp",
        "test",
        "tests",
        "commit",
        "save",
        "progress",
        "work",
        "more",
        "minor",
        "cleanup",
        "done",
        "refactor",
        "todo",
    }
)
SCISSORS = "# ------------------------ >8 ------------------------"
_GIT_SPACE = " \t\n\r"  # what git's isspace() strips: no other control or Unicode space


def message_body(raw: str) -> str:
    """The message as git will store it with its default cleanup (``strip``): nothing from
    the scissors line on, no ``#`` comment lines, no trailing whitespace, no leading or
    trailing blank lines, runs of blank lines squeezed to one."""
    kept: list[str] = []
    for line in raw.split("\n"):
        if line.startswith(SCISSORS):
            break
        if line.startswith("#"):
            continue
        line = line.rstrip(_GIT_SPACE)
        if line or (kept and kept[-1]):
            kept.append(line)
    return "\n".join(kept).strip("\n")


def subject(message: str) -> str:
    """The subject as git forms it: the first paragraph, its lines joined with spaces."""
    first_paragraph = message_body(message).split("\n\n", 1)[0]
    return " ".join(first_paragraph.split("\n")).strip()


def subject_problem(raw: str) -> str | None:
    """Why the subject breaks rule 9 (empty, over 72 characters, one generic word), or None."""
    first = subject(raw)
    if not first:
        return "the commit message is empty; say what changed"
    if len(first) > MAX_SUBJECT:
        return (
            f"the subject is {len(first)} characters; keep it to {MAX_SUBJECT} and put the "
            f"detail in the body"
        )
    # Words as `\w+` would find them: punctuation is a separator.
    folded = "".join(c if c.isalnum() or c == "_" or c.isspace() else " " for c in first.lower())
    words = folded.split()
    if not words or (len(words) == 1 and words[0] in GENERIC_SUBJECTS):
        return (
            f"the subject {first!r} says nothing; write what changed and why, e.g. "
            f"'F012: add the todo list endpoint'"
        )
    return None


def approval_key(parents: list[str] | tuple[str, ...], tree: str, message: str) -> str:
    """What identifies a commit before it exists: its parents, its tree and its message as git
    stores it. The commit hooks record the key of a change they accepted, so the
    reference-transaction hook does not judge the same change twice."""
    text = "\0".join([*parents, tree, message_body(message)])
    return _sha256_hex(text.encode("utf-8", "surrogateescape"))


def _sha256_hex(data: bytes) -> str:
    """`hashlib.sha256(data).hexdigest()`: the same digest from CPython's own sha256 module
    where there is one, since `hashlib` loads OpenSSL's binding first (3-5 ms of the
    reference-transaction hook's start, on every commit)."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # (Python 3.11)
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # (3.12 on)
        except ImportError:
            import hashlib

            return hashlib.sha256(data).hexdigest()
    digest: str = sha256(data).hexdigest()
    return digest
