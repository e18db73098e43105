"""Prices per million tokens: input, cached input, output (USD). Overridable by settings.

``TWIN_PRICING_OVERRIDES`` is JSON: {"provider/model": [input, cached, output], ...}.
Unknown models are priced at the provider's most expensive listed model, never at zero:
the budget must fail closed, not open.
"""

from __future__ import annotations

import json
from decimal import ROUND_CEILING, Decimal

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from chat.providers.base import Usage
from text.tokens import approx_tokens

PRICES: dict[str, tuple[str, str, str]] = {
    "offline/offline-extractive": ("0", "0", "0"),
    "openai/gpt-4.1-mini": ("0.40", "0.10", "1.60"),
    "openai/gpt-4.1-nano": ("0.10", "0.025", "0.40"),
    "openai/gpt-4.1": ("2.00", "0.50", "8.00"),
    "openai/gpt-4o-mini": ("0.15", "0.075", "0.60"),
    "openai/gpt-4o": ("2.50", "1.25", "10.00"),
    "gemini/gemini-2.5-flash": ("0.30", "0.075", "2.50"),
    "gemini/gemini-2.5-pro": ("1.25", "0.31", "10.00"),
    "deepseek/deepseek-chat": ("0.27", "0.07", "1.10"),
    "kimi/kimi-k2-0905-preview": ("0.60", "0.15", "2.50"),
}
MILLION = Decimal(1_000_000)


def price_table() -> dict[str, tuple[Decimal, Decimal, Decimal]]:
    table = {key: tuple(Decimal(v) for v in value) for key, value in PRICES.items()}
    raw = settings.TWIN_PRICING_OVERRIDES
    if raw:
        try:
            overrides = json.loads(raw)
            for key, value in overrides.items():
                inp, cached, out = (Decimal(str(v)) for v in value)
                table[key] = (inp, cached, out)
        except (ValueError, TypeError, ArithmeticError) as exc:
            raise ImproperlyConfigured(
                'TWIN_PRICING_OVERRIDES must be JSON like {"openai/gpt-4.1-mini": [0.4, 0.1, 1.6]}'
            ) from exc
    return table


def prices_for(provider: str, model: str) -> tuple[Decimal, Decimal, Decimal]:
    table = price_table()
    key = f"{provider}/{model}"
    if key in table:
        return table[key]
    same_provider = [v for k, v in table.items() if k.startswith(f"{provider}/")]
    candidates = same_provider or list(table.values())
    return max(candidates, key=lambda p: p[2])


def cost_usd(provider: str, model: str, usage: Usage) -> Decimal:
    inp, cached, out = prices_for(provider, model)
    uncached = max(usage.input_tokens - usage.cached_tokens, 0)
    # Not rounded here: a turn sums several calls; it is rounded once, when stored.
    return (uncached * inp + usage.cached_tokens * cached + usage.output_tokens * out) / MILLION


def round_usd(amount: Decimal) -> Decimal:
    """Stored amounts have six decimals; round up so the ledger never under-counts."""
    return amount.quantize(Decimal("0.000001"), rounding=ROUND_CEILING)


def prompt_estimate(messages: list[dict], tools: list[dict]) -> int:
    """A prompt's tokens estimated generously: a quarter more than the character estimate, plus
    per-message overhead and the tool schemas."""
    prompt = approx_tokens(json.dumps(messages, ensure_ascii=False)) + approx_tokens(json.dumps(tools))
    return int(prompt * 1.25) + 8 * len(messages)


def estimated_usage(messages: list[dict], tools: list[dict], result_text: str) -> Usage:
    """What a call used when its provider did not say: the generous prompt estimate, uncached,
    and the streamed output (text and tool-call arguments) by the same character estimate."""
    return Usage(input_tokens=prompt_estimate(messages, tools), output_tokens=int(approx_tokens(result_text) * 1.25))


def worst_case_usd(provider: str, model: str, messages: list[dict], tools: list[dict], max_tokens: int) -> Decimal:
    """What one call can cost at most: the prompt (estimated generously: a quarter more than
    the character estimate, plus per-message overhead and the tool schemas) at the uncached
    input price, and ``max_tokens`` at the output price."""
    inp, _cached, out = prices_for(provider, model)
    if not inp and not out:
        return Decimal("0")
    return round_usd((prompt_estimate(messages, tools) * inp + max_tokens * out) / MILLION)
