"""The text edits that switch a project to the `signed` people policy (`shiftkit setup
--signed`, decision record 0101): the policy line in `.shiftkit.toml` and the person's line
in `.shiftkit/allowed_signers`, everything else in both files left as it was."""

from __future__ import annotations

import re

SECTION = "[shiftkit.people]"
POLICY_LINE = 'policy = "signed"'
_POLICY = re.compile(r"^\s*policy\s*=")
_HEADER = re.compile(r"^\s*\[")


def with_signed_policy(config: str | None) -> str:
    """``config`` (the text of `.shiftkit.toml`, None: no file) with `policy = "signed"` in
    `[shiftkit.people]`: the policy line replaced, or added under the section (or with it)."""
    lines = (config or "").splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == SECTION), None)
    if start is None:
        while lines and not lines[-1].strip():
            lines.pop()
        return "\n".join([*lines, *([""] if lines else []), SECTION, POLICY_LINE]) + "\n"
    end = next((i for i in range(start + 1, len(lines)) if _HEADER.match(lines[i])), len(lines))
    for index in range(start + 1, end):
        if _POLICY.match(lines[index]):
            lines[index] = POLICY_LINE
            break
    else:
        lines.insert(start + 1, POLICY_LINE)
    return "\n".join(lines) + "\n"


def with_signer(signers: str | None, line: str) -> str:
    """``signers`` (the allowed_signers text, None: no file) with ``line`` (`EMAIL KEYTYPE
    KEY`) added unless a line lists that key already."""
    text = signers or ""
    key = " ".join(line.split()[1:3])
    if any(key in " ".join(kept.split()) for kept in text.splitlines()):
        return text
    return text + ("" if not text or text.endswith("\n") else "\n") + line + "\n"
