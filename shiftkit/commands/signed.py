"""`shiftkit setup --signed`: a person switches an existing project to the `signed` people
policy — the policy and their SSH signing key as an allowed signer, in one commit signed with
that key (decision record 0101). The commit changes an enforcement setting: a person action
itself, and the commit `audit --strict` proves the later ones from."""

from __future__ import annotations

from collections.abc import Callable

from shiftkit.core import people_policy
from shiftkit.core.config import CONFIG_FILE, parse_or_default
from shiftkit.core.errors import OK, BadInput, Refused
from shiftkit.edge import gitio
from shiftkit.edge.context import Context, short
from shiftkit.edge.judge import SIGNERS_FILE

MESSAGE = "Person actions need a signature from now on (the `signed` policy)"


def switch_cmd(ctx: Context, say: Callable[[str], None]) -> int:
    from shiftkit.commands.scaffold import signing_offer
    from shiftkit.edge import committing, proof
    from shiftkit.edge.atomic import atomic_write

    root = ctx.root
    if gitio.head_oid(root) is not None and proof.policy_at(root, "HEAD") == "signed":
        say("setup: the people policy is `signed` already, nothing to do")
        return OK
    offer = signing_offer(root)
    signer = offer.get("people_signer")
    if not isinstance(signer, str):
        raise Refused(
            "git is not set to sign with an SSH key here, and the switch to `signed` is a "
            "commit signed with the key it lists: set `git config gpg.format ssh` and `git "
            "config user.signingkey PATH.pub` (and `user.email`), then run this again"
        )
    paths = [CONFIG_FILE, SIGNERS_FILE]
    dirty = gitio.run(["status", "--porcelain", "--", *paths], root).stdout.strip()
    if dirty:
        raise Refused(
            f"{dirty.splitlines()[0][3:]} has uncommitted changes; commit or stash them, then "
            f"run this again (the switch commits both files as it writes them)"
        )
    before = {path: _read(ctx, path) for path in paths}
    config = people_policy.with_signed_policy(before[CONFIG_FILE])
    try:
        switched = parse_or_default(config).people.policy == "signed"
    except BadInput:
        switched = False
    if not switched:
        raise Refused(
            f"{CONFIG_FILE}: the people policy could not be set here; write `policy = "
            f'"signed"` under [shiftkit.people] by hand and commit it signed (`git commit -S`)'
        )
    (root / ".shiftkit").mkdir(exist_ok=True)
    atomic_write(root / CONFIG_FILE, config)
    atomic_write(root / SIGNERS_FILE, people_policy.with_signer(before[SIGNERS_FILE], signer))
    try:
        made = committing.commit(ctx, MESSAGE, paths, sign=True)
    except Exception:
        for path, text in before.items():
            if text is None:
                (root / path).unlink(missing_ok=True)
            else:
                atomic_write(root / path, text)
        raise
    say(
        f"committed {short(made)} (signed): person actions need a signature by a key in "
        f"{SIGNERS_FILE} from now on ({signer.split()[0]}); push it, and `shiftkit audit "
        f"--strict` proves every later one"
    )
    return OK


def _read(ctx: Context, path: str) -> str | None:
    try:
        return (ctx.root / path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
