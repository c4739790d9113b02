"""The bundled price table (decision 0060): dated, sourced, read whole, overridden per model by
`[shiftkit.prices]`, a dated model name priced as its undated one; an unknown model is said."""

from __future__ import annotations

import json

import pytest

from shiftkit.core import cost, prices
from shiftkit.core.config import CostConfig, ModelPrice
from shiftkit.core.ledger import Entry, Usage
from shiftkit.edge import prices as bundled

OURS = ModelPrice(1.0, 0.1, 1.0, 2.0)


def test_the_table_is_dated_sourced_and_licensed() -> None:
    document = json.loads(bundled.TABLE.read_text(encoding="utf-8"))
    assert document["date"] == "2026-12-01" and "LiteLLM" in document["source"]
    assert "MIT" in (bundled.TABLE.parent / "LICENSE-litellm").read_text(encoding="utf-8")
    book = bundled.book(())
    assert len(book.bundled) == len(document["models"]) > 100  # every entry read
    # the models the real harnesses in the suite use, at their list prices per million
    assert book.get("claude-sonnet-4-5") == ModelPrice(3.0, 0.3, 3.75, 15.0)
    assert book.get("gpt-5.5") == ModelPrice(5.0, 0.5, 5.0, 30.0)


def test_configured_prices_win_and_dated_names_fall_back() -> None:
    book = bundled.book((("claude-sonnet-4-5", OURS),))
    assert book.get("claude-sonnet-4-5") == OURS
    assert book.get("claude-haiku-4-5-20991231") == book.get("claude-haiku-4-5")
    assert book.get("gpt-5.5-2099-01-01") == book.get("gpt-5.5")
    assert book.get("no-such-model") is None and book.get("") is None


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"models": []}', '{"models": {"m": 1}}'])
def test_an_unreadable_table_prices_nothing(text: str) -> None:
    assert prices.parse(text)[0] == {}


def test_usage_of_a_known_model_is_priced_without_configuration_and_unknown_is_said() -> None:
    def usage(model: str) -> Entry:
        return Entry(
            "usage",
            f"id-{model}",
            "2026-12-01T00:00:00.000Z",
            feature=None,
            session="s",
            model=model,
            usage=Usage(1_000_000, 0, 0, 1_000_000),
        )

    rep = cost.report([usage("claude-sonnet-4-5"), usage("mystery")], [], CostConfig(), book())
    assert rep.totals.usd == pytest.approx(3.0 + 15.0)
    assert rep.unpriced_models == ("mystery",)
    assert "no price known for mystery" in cost.table(rep, CostConfig())


def book() -> prices.Book:
    return bundled.book(())
