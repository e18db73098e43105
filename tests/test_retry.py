from __future__ import annotations

import datetime as dt

from twinsite.retry import backoff_delay, retry_at


def test_the_delay_doubles_per_attempt_up_to_its_cap() -> None:
    assert [backoff_delay(n, base=60, cap=3600) for n in range(8)] == [60, 120, 240, 480, 960, 1920, 3600, 3600]


def test_retry_at_is_the_delay_after_now() -> None:
    now = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    assert retry_at(2, base=300, cap=4 * 3600, now=now) == now + dt.timedelta(seconds=1200)
