"""The one token estimate, for budgets, bounds and offline usage figures (no tokenizer is shipped).

Two ratios of the same count: ``TYPICAL`` (about four characters a token, real tokenizers' figure
for English prose) for estimates that are compared with real usage, and ``BOUND`` (two characters
a token) where the estimate must not be exceeded by any real tokenizer: Dutch, numbers and
Markdown give fewer characters a token, and the knowledge prefix must stay under its bound.
"""

from __future__ import annotations

import json

TYPICAL = 4
BOUND = 2


def approx_tokens(value: object, *, chars_per_token: int = TYPICAL) -> int:
    """Tokens in a text (or the JSON of any other value), rounded up."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return (len(text) + chars_per_token - 1) // chars_per_token
