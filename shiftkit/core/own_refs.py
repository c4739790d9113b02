"""The mark shiftkit's own ref updates carry (decision record 0091): the reference-transaction
shim lets an update under `refs/shiftkit/` through only when the environment git gives it has
``MARKER=1``. `edge.gitio.run` sets it for `MARKING` commands alone (they run no other hook);
the guard refuses a command that names it."""

from __future__ import annotations

TYPE_CHECKING = False  # imported by gitio on every commit: nothing it does not run
if TYPE_CHECKING:
    from collections.abc import Sequence

MARKER = "SHIFTKIT_OWN_REF_UPDATE"
MARKING = frozenset({"update-ref", "fetch"})  # the git commands that move shiftkit's refs


def marks(args: Sequence[str]) -> bool:
    """Whether shiftkit's ``git ARGS`` carries the mark."""
    return bool(args) and args[0] in MARKING


def named_in(command: str) -> str | None:
    """Why a shell command that names the mark must not run, or None."""
    if MARKER not in command:
        return None
    return (
        f"{MARKER} is the mark of shiftkit's own updates of refs/shiftkit/ (claims): an agent "
        f"does not set it; take and let go of claims with `shiftkit claim` and `shiftkit "
        f"release` (a person clearing a stale claim runs the command in their own shell)"
    )
