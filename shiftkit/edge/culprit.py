"""Who broke it: the first failing commit whose parents pass, searched among every commit
(both sides of merges) between the feature's last pass and the failing tip — for a merge
whose sides pass alone, the merge itself. The verification cache (keyed by tree) answers
before any verifier runs, and each pass found is recorded (decision records 0057, 0093).

Where the search may look: the commits whose feature list marks the feature passing (before
it was marked, a failure is no break: the work was not done yet). What passes without a
run: a commit whose `Shiftkit-Feature` trailer names the feature (`finish` verified it
there), one whose list marks it passing where no parent's does (rule 4 verified that flip),
and a tree with a recorded pass. Along one line of first parents the search bisects; at a
merge whose other side fails, it follows that side."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from shiftkit.core import features
from shiftkit.core.errors import ShiftkitError
from shiftkit.edge import gitio, verify

LOOK_BACK = 512  # commits read (every side of merges) for the last pass: no verifier runs
PROBES = 12  # verifier runs at most (a bisect of 64 commits, and a merged side of 32)
CHECKOUT = "checkout"  # (the cache's mode for a pass in a temporary checkout: `regression`)


class Culprit(NamedTuple):
    """The first failing commit found, and the last known pass before it."""

    commit: str
    subject: str
    since: str | None  # a parent known to pass (None: none known, or beyond the search)
    exact: bool  # False: the search was cut short, ``commit`` fails and so may some before
    merged: tuple[str, ...] = ()  # a merge whose parents each pass alone: its parents
    cut: str = ""  # where and why the search stopped short (when not ``exact``)

    def text(self) -> str:
        """ "first fails at 1234567 'Tidy up' (last passed at 89abcde)"."""
        subject = self.subject if len(self.subject) <= 50 else self.subject[:49] + "…"
        at = f"{self.commit[:7]} {subject!r}"
        if self.exact and self.merged:
            sides = " and ".join(parent[:7] for parent in self.merged)
            return f"first fails at {at}, the merge of {sides} (each passes alone)"
        if self.exact:
            return f"first fails at {at}" + (
                f" (last passed at {self.since[:7]})" if self.since else ""
            )
        why = f": {self.cut}" if self.cut else ""
        if self.since:
            return f"first fails after {self.since[:7]}, at or before {at} (search cut short{why})"
        return f"fails at {at}; no pass found before it (search cut short{why})"


class Node(NamedTuple):
    oid: str
    parents: tuple[str, ...]
    tree: str
    subject: str
    features: tuple[str, ...]  # the Shiftkit-Feature trailers: a finish verified them here


def history(root: Path, tip: str, limit: int = LOOK_BACK) -> dict[str, Node]:
    """``tip`` and its ancestors on every side of merges, newest first, at most ``limit``."""
    listing = gitio.out(
        [
            "log",
            "-z",
            "--topo-order",
            f"--max-count={limit}",
            "--format=%H%x01%P%x01%T%x01%s%x01"
            "%(trailers:key=Shiftkit-Feature,valueonly,separator=%x2C)",
            tip,
            "--",
        ],
        root,
    )
    nodes = {}
    for record in listing.split("\0"):
        parts = record.strip("\n").split("\x01")
        if len(parts) == 5:
            named = tuple(item.strip() for item in parts[4].split(",") if item.strip())
            nodes[parts[0]] = Node(parts[0], tuple(parts[1].split()), parts[2], parts[3], named)
    return nodes


def marked_at(
    root: Path, oids: Sequence[str], feature_id: str, features_name: str
) -> dict[str, bool]:
    """Whether each commit's feature list marks ``feature_id`` passing (an unreadable or
    missing list: no)."""
    texts = gitio.read_blobs(root, [f"{oid}:{features_name}" for oid in oids])
    marked = {}
    for oid, text in zip(oids, texts, strict=True):
        try:
            listing = features.loads(text, features_name) if text else None
        except ShiftkitError:
            listing = None
        found = listing.get(feature_id) if listing is not None else None
        marked[oid] = found is not None and found.passes
    return marked


def passed_at(common_dir: Path, tree: str, command: str) -> bool:
    """A pass of ``command`` recorded at ``tree`` (in a checkout, or in a work tree)."""
    return verify.is_cached(
        common_dir, tree, verify.cache_command(command, CHECKOUT)
    ) or verify.is_cached(common_dir, tree, command)


class _CutShort(Exception):
    """The verifier-run budget is spent."""


class _Search:
    """One feature's search: what is known of each commit, and the runs it took."""

    def __init__(
        self,
        root: Path,
        common_dir: Path,
        feature_id: str,
        command: str,
        nodes: dict[str, Node],
        marked: dict[str, bool],
        run: tuple[str, float, bool],
    ) -> None:
        self.root, self.common_dir, self.feature_id, self.command = (
            root,
            common_dir,
            feature_id,
            command,
        )
        self.nodes, self.marked = nodes, marked
        self.init, self.timeout, self.isolated = run
        self.by_tree: dict[str, bool] = {}
        self.probes = 0

    def inside(self, oid: str) -> bool:
        """Within the search: read, and its list marks the feature passing."""
        return oid in self.nodes and self.marked.get(oid, False)

    def known(self, oid: str) -> bool:
        """Passes without a run: verified there by a finish, a flip, or a recorded pass."""
        node = self.nodes[oid]
        if self.feature_id in node.features:
            return True
        if not any(self.inside(parent) for parent in node.parents) and all(
            parent in self.nodes for parent in node.parents
        ):
            return True  # (the flip: rule 4 verified it at this tree)
        if node.tree in self.by_tree:
            return self.by_tree[node.tree]
        return not self.isolated and passed_at(self.common_dir, node.tree, self.command)

    def passes(self, oid: str) -> bool:
        node = self.nodes[oid]
        if self.known(oid):
            return True
        if node.tree in self.by_tree:
            return self.by_tree[node.tree]
        if self.probes >= PROBES:
            raise _CutShort
        self.probes += 1
        outcome = verify.run_in_checkout(
            self.root, node.tree, self.command, self.init, self.timeout, self.isolated, tip=oid
        )
        if outcome.ok:
            verify.record_pass(
                self.common_dir, node.tree, verify.cache_command(self.command, CHECKOUT)
            )
        self.by_tree[node.tree] = outcome.ok
        return outcome.ok

    def line(self, oid: str) -> tuple[list[str], str | None]:
        """``oid``'s first-parent line within the search, newest first, down to (excluded)
        the first commit known to pass — returned second — or the edge of the search."""
        found = [oid]
        while True:
            parents = self.nodes[found[-1]].parents
            if not parents or not self.inside(parents[0]):
                return found, None
            if self.known(parents[0]):
                return found, parents[0]
            found.append(parents[0])


def find(
    root: Path,
    common_dir: Path,
    feature_id: str,
    command: str,
    tip: str,
    init: str,
    timeout: float,
    isolated: bool = False,
    features_name: str = "features.json",
) -> Culprit | None:
    """The first commit since ``feature_id`` last passed at which ``command`` fails, every
    parent of it passing (``tip`` itself known to fail); None without a history to search.
    ``isolated`` (CI): each run in `verify.isolated_environment`, no recorded pass trusted."""
    nodes = history(root, tip)
    if tip not in nodes:
        tip = next(iter(nodes), "")
        if not tip:
            return None
    marked = marked_at(root, list(nodes), feature_id, features_name)
    marked[tip] = True  # (it fails where it is judged: the search starts there)
    search = _Search(
        root, common_dir, feature_id, command, nodes, marked, (init, timeout, isolated)
    )
    failing, since = tip, None
    try:
        while True:
            failing, since = _bisect(search, failing)
            node = nodes[failing]
            if since is None and node.parents and node.parents[0] not in nodes:
                return _cut(node, None, f"it looked back {LOOK_BACK} commits")
            sides = [p for p in node.parents[1:] if search.inside(p)]
            broken = next((p for p in sides if not search.passes(p)), None)
            if broken is None:
                break
            failing = broken  # (the break came in with the merged side: follow it)
    except _CutShort as spent:
        if isinstance(spent, _Partial):
            failing, since = spent.failing, spent.since
        return _cut(nodes[failing], since, f"it ran the verifier {PROBES} times")
    node = nodes[failing]
    judged = [p for p in node.parents if search.inside(p)]  # (each passes: searched above)
    merged = tuple(judged) if len(judged) > 1 else ()
    return Culprit(node.oid, node.subject, since or next(iter(judged), None), True, merged)


def _bisect(search: _Search, failing: str) -> tuple[str, str | None]:
    """On ``failing``'s line of first parents: the oldest failing commit whose first
    parent passes (None: no first parent within the search), by bisection — the line
    passes, then fails (a commit between two of the same outcome is taken to share it)."""
    line, good = search.line(failing)
    span = list(reversed(line))  # oldest first, ``failing`` last
    low, high = -1, len(span) - 1  # span[low] passes (-1: ``good``), span[high] fails
    try:
        while high - low > 1:
            middle = (low + high) // 2
            if search.passes(span[middle]):
                low = middle
            else:
                high = middle
    except _CutShort:
        raise _Partial(span[high], span[low] if low >= 0 else good) from None
    return span[high], span[low] if low >= 0 else good


class _Partial(_CutShort):
    """Cut short inside a bisect: the narrowest bounds found."""

    def __init__(self, failing: str, since: str | None) -> None:
        super().__init__()
        self.failing, self.since = failing, since


def _cut(node: Node, since: str | None, why: str) -> Culprit:
    return Culprit(node.oid, node.subject, since, False, (), why)
