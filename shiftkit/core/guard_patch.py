"""The guard on Codex CLI's `apply_patch`: which files a patch adds, deletes, updates or moves.

A patch is plain text in Codex's own envelope (`*** Begin Patch` ... `*** End Patch`) whose file
sections start with a header line: `*** Add File: PATH`, `*** Delete File: PATH`,
`*** Update File: PATH`, optionally followed by `*** Move to: NEW PATH`. Only the headers name
files; hunk lines (` `, `-`, `+`, `@@`) never do. Whether a named file is protected is the
file tools' rule (the caller's `kind_of`), so a patch is judged as a Write or an Edit of the
same path would be (decision 0039).
"""

from __future__ import annotations

from collections.abc import Callable

BEGIN = "*** Begin Patch"
HEADERS = {
    "*** Add File:": "adds",
    "*** Delete File:": "deletes",
    "*** Update File:": "updates",
    "*** Move to:": "moves a file to",
}


def patch_files(text: str) -> list[tuple[str, str]]:
    """(verb, path) for every file header of the patch, in order. Header lines are read with
    surrounding blanks stripped, as Codex's lenient parser reads them (a patch inside a
    here-document may be indented)."""
    found: list[tuple[str, str]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("*** "):
            continue
        for header, verb in HEADERS.items():
            if stripped.startswith(header):
                path = stripped[len(header) :].strip()
                if path:
                    found.append((verb, path))
                break
    return found


def check_patch(
    text: str, kind_of: Callable[[str], str | None], say: Callable[[str, str, str], str]
) -> str | None:
    """Why this patch must not be applied, or None. ``kind_of(path)``: which protected file
    the path is (None: not protected); ``say(verb, path, kind)``: the reason line for it."""
    for verb, path in patch_files(text):
        if "\0" in path:
            return f"apply_patch names a file with a NUL byte ({path!r}), which cannot be checked"
        kind = kind_of(path)
        if kind is not None:
            return say(verb, path, kind)
    return None


def looks_like_patch(text: str) -> bool:
    """Whether a shell command carries a patch (`apply_patch <<'EOF'` ... in a Bash call)."""
    return BEGIN in text
