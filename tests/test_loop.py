"""`shiftkit run`'s decisions, pure: the order of the stop reasons and their exit codes."""

from __future__ import annotations

from shiftkit.core import loop
from shiftkit.core.loop import Limits, State


def test_each_reason_and_its_order() -> None:
    limits = Limits(max_sessions=5, budget_tokens=100.0, budget_usd=1.0, no_progress=2)
    fresh = State(total=3, passing=0, claimable=3)
    assert loop.decide(fresh, limits) is None
    done = loop.decide(fresh._replace(passing=3, claimable=0), limits)
    assert done is not None and done.code == loop.ALL_PASS == 0
    blocked = loop.decide(fresh._replace(claimable=0, spent_tokens=999), limits)
    assert blocked is not None and blocked.code == loop.ALL_BLOCKED
    repeated = fresh._replace(signatures=("F001: abc", "F001: abc"), without_progress=2)
    assert loop.decide(repeated, limits).code == loop.REPEATED_FAILURE  # type: ignore[union-attr]
    stuck = fresh._replace(without_progress=2, spent_tokens=999)
    assert loop.decide(stuck, limits).code == loop.NO_PROGRESS  # type: ignore[union-attr]
    spent = fresh._replace(spent_usd=1.0, sessions=5)
    assert loop.decide(spent, limits).code == loop.BUDGET  # type: ignore[union-attr]
    assert loop.decide(fresh._replace(sessions=5), limits).code == loop.MAX_SESSIONS  # type: ignore[union-attr]
    codes = {loop.ALL_PASS, loop.ALL_BLOCKED, loop.BUDGET, loop.NO_PROGRESS}
    codes |= {loop.REPEATED_FAILURE, loop.MAX_SESSIONS, loop.INTERRUPTED}
    assert len(codes) == 7 and not codes & {1, 2, 3, 4}


def test_progress_resets_and_failures_alternate() -> None:
    state = State(total=3, passing=1, claimable=2)
    state = loop.after(state, passing=1, claimable=2, signature="F002: x")
    state = loop.after(state, passing=2, claimable=1, signature=None)
    assert (state.sessions, state.without_progress, state.signatures) == (2, 0, ("F002: x", None))
    state = loop.after(state, passing=2, claimable=1, signature="F003: y")
    state = loop.after(state, passing=2, claimable=1, signature="F003: z")
    assert loop.decide(state, Limits(no_progress=3)) is None  # two different failures
    state = loop.after(state, passing=2, claimable=1, signature="F003: z")
    assert loop.decide(state, Limits(no_progress=5)).code == loop.REPEATED_FAILURE  # type: ignore[union-attr]


def test_claimable_reads_raw_items_and_prompt_placement() -> None:
    items = [
        {"id": "F001", "passes": True},
        {"id": "F002", "passes": False, "blocked": {"reason": "r"}},
        {"id": "F003", "passes": False, "depends_on": ["F002"]},
    ]
    assert loop.claimable(items) == 0
    assert loop.claimable([*items, {"id": "F004", "passes": False, "depends_on": ["F001"]}]) == 1
    assert loop.prompt(["F000"]) == loop.INITIALIZER_PROMPT
    assert loop.prompt(["F000", "F001"]) == loop.SHIFT_PROMPT
    assert loop.agent_argv(["agent", "-p"], "hi", False) == ["agent", "-p", "hi"]
    assert loop.agent_argv(["agent", "--x={prompt}", "-v"], "hi", False) == [
        "agent",
        "--x=hi",
        "-v",
    ]
    assert loop.agent_argv(["agent"], "hi", True) == ["agent"]


def test_an_exit_signature_needs_something_said() -> None:
    assert loop.exit_signature(1, "") is None
    assert loop.exit_signature(1, "\n  \n") is None  # (the hash of nothing: e3b0c44298fc)
    said = loop.exit_signature(1, "error: not logged in\n")
    assert said is not None and said.startswith("exit 1 (") and "e3b0c44298fc" not in said
    assert said == loop.exit_signature(1, "error: not logged in")
    assert said != loop.exit_signature(2, "error: not logged in")
    assert loop.tail([f"line {n}" for n in range(15)]) == [f"line {n}" for n in range(5, 15)]
    assert loop.tail(["x" * 300], width=10) == ["x" * 9 + "…"]
    stopped = loop.decide(State(1, 0, 1, sessions=1), Limits(max_sessions=1))
    assert stopped is not None and stopped.reason.startswith("1 session, the most")


def test_a_failed_start_step_in_one_line() -> None:
    line = loop.step_failure("smoke", "./init.sh smoke", "exit 1", "Error: no module 'todo'")
    assert line == (
        "smoke failed (exit 1 from `./init.sh smoke`: Error: no module 'todo'); the session's "
        "`shiftkit start` shows it"
    )
    long = loop.step_failure("init", "make", "exit 2", "x " * 200 + "the last words")
    assert "\n" not in long and ": …" in long and "the last words)" in long
    assert loop.step_failure("init", "make", "timed out after 900s", None).startswith(
        "init failed (timed out after 900s from `make`); "
    )
