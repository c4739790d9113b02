from __future__ import annotations

import pytest

from shiftkit.core import config
from shiftkit.core.errors import BadInput


def test_defaults_for_every_key() -> None:
    cfg = config.parse("")
    assert cfg == config.Config()
    assert (cfg.log.keep, cfg.log.block, cfg.claims.enabled, cfg.verify_timeout) == (
        20,
        10,
        True,
        900,
    )


def test_values_are_read() -> None:
    cfg = config.parse(
        '[shiftkit]\nmax_attempts = 5\nverify = "make test"\n[shiftkit.log]\nkeep = 7\n'
    )
    assert (cfg.max_attempts, cfg.verify, cfg.log.keep, cfg.log.block) == (5, "make test", 7, 10)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[shiftkit]\nverfy = 'x'\n",
            r"unknown key 'shiftkit.verfy' \(did you mean 'shiftkit.verify'\?\)",
        ),
        ("[shiftkit.log]\nkeeep = 3\n", r"unknown key 'shiftkit.log.keeep'"),
        (
            "[shiftkit]\nmax_attempts = '3'\n",
            r"key 'shiftkit.max_attempts' must be an integer, got a string",
        ),
        ("[shiftkit.claims]\nenabled = 1\n", r"key 'shiftkit.claims.enabled' must be a boolean"),
        ("[shiftkit]\nverify_timeout = 0\n", r"key 'shiftkit.verify_timeout' must be at least 1"),
        ("[shiftkit\n", r"malformed TOML"),
        ("[other]\nx = 1\n", r"unknown table \[other\]"),
        ("shiftkit = 3\n", r"'shiftkit' must be a table"),
        ("[shiftkit]\nlog = 3\n", r"'shiftkit.log' must be a table"),
    ],
)
def test_errors_name_file_and_key(text: str, expected: str) -> None:
    with pytest.raises(BadInput, match=r"^\.shiftkit\.toml: " + expected):
        config.parse(text, ".shiftkit.toml")


def test_choices_and_enforcement_changes() -> None:
    with pytest.raises(BadInput, match=r"'shiftkit\.verify_in' must be 'worktree' or 'checkout'"):
        config.parse('[shiftkit]\nverify_in = "docker"\n')
    with pytest.raises(BadInput, match=r"'shiftkit\.people\.policy' must be 'trailer' or 'signed'"):
        config.parse('[shiftkit.people]\npolicy = "trust-me"\n')
    old = config.parse_or_default(None)
    new = config.parse('[shiftkit]\nverify = "true"\n[shiftkit.claims]\nenabled = false\n')
    assert config.enforcement_changes(old, new) == ["verify", "claims.enabled"]
    assert config.enforcement_changes(old, config.parse('[shiftkit]\nsmoke = "true"\n')) == []
    assert config.setting(new, "claims.enabled") is False


def test_a_long_or_unprintable_value_is_shown_on_one_short_line() -> None:
    with pytest.raises(BadInput) as caught:
        config.parse('[shiftkit]\nmax_attempts = "' + "x\\n" * 50 + '"\n')
    assert "\n" not in caught.value.message and len(caught.value.message) < 200
