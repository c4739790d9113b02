"""What is held and done elsewhere, as this clone can see it: every claim that holds now (this
repository's and the claims remote's), and the features that pass on the remote's branch.
Shared by `claim`, the views and the brief, below them all (no command imports another for
these)."""

from __future__ import annotations

from shiftkit.core import features
from shiftkit.core.errors import BadInput
from shiftkit.edge import claims, gitio, remote
from shiftkit.edge.context import Context


def taken(ctx: Context, with_branch: bool = False) -> dict[str, claims.Claim]:
    """Every claim that holds now: this repository's, and the remote's when there is one
    (the remote's word wins). ``with_branch``: the same fetch brings the remote's branch."""
    local = claims.list_claims(ctx.root)
    name = ctx.config.claims.remote
    if not name:
        return local
    remote.require_remote(ctx.root, name)
    branch = gitio.branch(ctx.root) if with_branch and ctx.config.claims.enabled else None
    return {**local, **remote.fetch(ctx.root, name, ctx.config.claims.ref_prefix, branch)}


def passing_on_remote(ctx: Context, feature_list: features.FeatureList, tracking: str) -> set[str]:
    """Features that pass on the claims remote's branch (``tracking``, as last fetched) but
    not here: nobody should do them again."""
    from shiftkit.edge.project import read_features_at

    try:
        there = read_features_at(ctx.root, tracking, ctx.config.features)
    except BadInput:
        return set()
    if there is None:
        return set()
    return {
        f.id
        for f in features.candidates(feature_list)
        if f.id in there.by_id and there.by_id[f.id].passes
    }
