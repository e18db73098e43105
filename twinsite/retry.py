"""Back-off for work that is retried later (resumes, e-mails, the digest)."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone


def backoff_delay(attempts: int, *, base: float, cap: float) -> float:
    """Seconds to wait after ``attempts`` failures: ``base`` doubled per attempt, at most ``cap``."""
    return min(base * 2 ** attempts, cap)


def retry_at(attempts: int, *, base: float, cap: float, now: dt.datetime | None = None) -> dt.datetime:
    """When to try again after ``attempts`` failures (see ``backoff_delay``)."""
    return (now or timezone.now()) + dt.timedelta(seconds=backoff_delay(attempts, base=base, cap=cap))
