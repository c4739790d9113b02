from __future__ import annotations

import sys

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


# -- [shiftkit.cost] and [shiftkit.prices] ------------------------------------------------------

PRICE = "{ input = 3, cache_read = 0.3, cache_write = 3.75, output = 15 }"


def test_ratios_and_prices_are_read_whole_numbers_as_numbers() -> None:
    cfg = config.parse(
        "[shiftkit.cost]\ncache_read_ratio = 0\noutput_ratio = 4\n"
        f'[shiftkit.prices]\n"claude-b" = {PRICE}\n"claude-a" = {PRICE.replace("15", "0")}\n'
    )
    assert cfg.cost == config.CostConfig(0.0, 1.25, 4.0)
    assert type(cfg.cost.output_ratio) is float
    assert cfg.prices == (  # in the file's order
        ("claude-b", config.ModelPrice(3.0, 0.3, 3.75, 15.0)),
        ("claude-a", config.ModelPrice(3.0, 0.3, 3.75, 0.0)),
    )
    assert all(type(p) is float for _, price in cfg.prices for p in price)
    assert config.parse("").prices == () and config.parse("[shiftkit.prices]\n").prices == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[shiftkit]\nprices = 3\n", "'shiftkit.prices' must be a table ([shiftkit.prices])"),
        (
            "[shiftkit.prices]\nm = [3, 0.3, 3.75, 15]\n",
            "key 'shiftkit.prices.m' must be a table like "
            "{ input = 3.0, cache_read = 0.3, cache_write = 3.75, output = 15.0 }",
        ),
        (
            f"[shiftkit.prices]\nm = {PRICE[:-1]}, cache = 1 }}\n",
            "unknown key 'shiftkit.prices.m.cache'",
        ),
        (
            "[shiftkit.prices]\nm = { input = 1 }\n",
            "key 'shiftkit.prices.m' lacks cache_read, cache_write, output",
        ),
        (
            f"[shiftkit.prices]\nm = {PRICE.replace('3,', '-3,', 1)}\n",
            "key 'shiftkit.prices.m.input' must be a number of 0 or more, got -3",
        ),
        (
            "[shiftkit.prices]\nm = " + PRICE.replace("15", '"15"') + "\n",
            "key 'shiftkit.prices.m.output' must be a number of 0 or more, got '15'",
        ),
        (
            f"[shiftkit.prices]\nm = {PRICE.replace('0.3', 'false')}\n",
            "key 'shiftkit.prices.m.cache_read' must be a number of 0 or more, got False",
        ),
        (
            "[shiftkit.cost]\noutput_ratio = -0.5\n",
            "key 'shiftkit.cost.output_ratio' must be 0 or more, got -0.5",
        ),
        (
            "[shiftkit.cost]\noutput_ratio = true\n",
            "key 'shiftkit.cost.output_ratio' must be a number, got a boolean True",
        ),
        (
            "[shiftkit]\nregression_sample = -1\n",
            "key 'shiftkit.regression_sample' must be 0 or more, got -1",
        ),
        ("[shiftkit.log]\nblock = 0\n", "key 'shiftkit.log.block' must be at least 1, got 0"),
        ("[shiftkit]\ncost = 1\n", "'shiftkit.cost' must be a table ([shiftkit.cost])"),
    ],
)
def test_cost_and_price_errors_name_the_key(text: str, expected: str) -> None:
    with pytest.raises(BadInput) as caught:
        config.parse(text, "cfg.toml")
    assert caught.value.message == f"cfg.toml: {expected}"


def test_a_model_name_in_an_error_is_shown_on_one_line() -> None:
    with pytest.raises(BadInput) as caught:
        config.parse('[shiftkit.prices]\n"claude\\nnew" = 3\n')
    assert caught.value.message.startswith(
        ".shiftkit.toml: key 'shiftkit.prices.claude\\nnew' must be a table"
    )


HUGE = "1" + "0" * 400  # a whole number, too large for a float


@pytest.mark.parametrize(
    ("number", "shown"),
    [("nan", "nan"), ("-nan", "nan"), ("inf", "inf"), ("+inf", "inf"), (HUGE, HUGE[:57] + "...")],
)
def test_a_ratio_or_a_price_is_a_finite_number(number: str, shown: str) -> None:
    """nan or inf would turn the report's figures into nan (and `cost --json` into text that is
    not JSON), and a whole number too large for a float made a traceback: refused like any
    other bad value."""
    with pytest.raises(BadInput) as caught:
        config.parse(f"[shiftkit.cost]\ncache_write_ratio = {number}\n")
    assert caught.value.message == (
        f".shiftkit.toml: key 'shiftkit.cost.cache_write_ratio' must be a finite number, "
        f"got {shown}"
    )
    with pytest.raises(BadInput) as caught:
        config.parse(f"[shiftkit.prices]\nm = {PRICE.replace('3.75', number)}\n")
    assert caught.value.message == (
        f".shiftkit.toml: key 'shiftkit.prices.m.cache_write' must be a finite number, got {shown}"
    )


def test_the_largest_whole_number_a_float_holds_is_a_ratio() -> None:
    largest = config.parse(f"[shiftkit.cost]\noutput_ratio = {int(sys.float_info.max)}\n")
    assert largest.cost.output_ratio == sys.float_info.max
    with pytest.raises(BadInput, match=r"'shiftkit\.cost\.output_ratio' must be a finite number"):
        config.parse(f"[shiftkit.cost]\noutput_ratio = {int(sys.float_info.max) * 2}\n")


def test_the_cost_settings_are_no_enforcement_settings() -> None:
    cheap = config.parse(f"[shiftkit.cost]\noutput_ratio = 1\n[shiftkit.prices]\nm = {PRICE}\n")
    assert config.enforcement_changes(config.Config(), cheap) == []
    assert config.setting(cheap, "cost.output_ratio") == 1.0


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[shiftkit.claims]\nttl_hours = 9999999999\n", "shiftkit.claims.ttl_hours"),
        ("[shiftkit]\nverify_timeout = 10000000000000000000000\n", "shiftkit.verify_timeout"),
        ("[shiftkit]\nmax_attempts = 99999999999\n", "shiftkit.max_attempts"),
        ("[shiftkit]\nregression_sample = 99999999999\n", "shiftkit.regression_sample"),
        ("[shiftkit.log]\nkeep = 99999999999\n", "shiftkit.log.keep"),
    ],
)
def test_whole_numbers_have_upper_bounds(text: str, key: str) -> None:
    """`ttl_hours = 9999999999` made `claim` exit 4 (a timedelta overflow): refused as a bad
    setting, in one line naming the key."""
    with pytest.raises(BadInput) as caught:
        config.parse(text)
    assert caught.value.message.startswith(f".shiftkit.toml: key '{key}' must be at most ")
    assert "\n" not in caught.value.message
    assert config.parse("[shiftkit.claims]\nttl_hours = 87600\n").claims.ttl_hours == 87600
