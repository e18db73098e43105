"""A rough token count (about four characters a token), for budgets and offline usage figures."""

from __future__ import annotations

import json


def approx_tokens(value: object) -> int:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return (len(text) + 3) // 4
