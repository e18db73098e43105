"""The background worker: runs queued tasks (django-tasks-db) and, at start and every
TWIN_WORKER_SWEEP_SECONDS, the sweeps: approvals (expiry, retries of resumes and deliveries),
turns left open by a dead process (chat.turns.recovery), expired budget reservations, old counters.
Owner jobs (queue "owner": knowledge sync, eval runs) run in a thread of their own, and the data
lifecycle purge (chat.lifecycle.retention_purge) every TWIN_PURGE_INTERVAL and the owner's daily
digest (digest.services.digest_scheduled) at TWIN_DIGEST_TIME in another, which also reads the
owner's imported sources again every TWIN_IMPORT_EVERY (knowledge.services.knowledge_refresh). The owner's notices of
waiting contact requests (twinsite.outbox.notices) go out from a thread of their own, every few seconds, so
a slow receiver delays nothing else."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import close_old_connections
from django_tasks_db.management.commands.db_worker import Worker

from budget.services import reservations_expire
from chat.lifecycle import retention_purge
from chat.turns.decisions import approvals_sweep
from chat.turns.recovery import turns_sweep
from digest.services import digest_scheduled
from guards.limits import counters_purge
from guards.login import purge as login_failures_purge
from knowledge.services import knowledge_refresh
from ops.services import OWNER_QUEUE, jobs_fail_stale
from twinsite.outbox.notices import notices_purge, notices_run

log = logging.getLogger("twinsite.worker")
NOTICE_POLL_SECONDS = 10


class Command(BaseCommand):
    help = "Run the task worker with the approvals sweep (make run starts it beside daphne)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--once", action="store_true",
                            help="sweep once, run every queued task, then exit (tests, cron)")
        parser.add_argument("--interval", type=float, default=0.5, help="seconds between queue polls")

    def handle(self, *args, once: bool = False, interval: float = 0.5, **options) -> None:
        worker = Worker(queue_names=["*"], interval=interval, batch=once, backend_name="default",
                        startup_delay=False, max_tasks=None, excluded_queue_names=[],
                        worker_id=f"{socket.gethostname()}-{os.getpid()}"[:64])
        if once:
            self.stdout.write(f"sweep: {turns_sweep() | approvals_sweep()}")
            notices_run()
            _follow_sources(self.stdout.write)
            worker.run()
            return
        stop = threading.Event()
        sweeper = threading.Thread(target=self._sweep_forever, args=(stop,), name="approvals-sweep", daemon=True)
        sweeper.start()
        # A knowledge sync or an eval run takes minutes: its own worker thread, so resumes and
        # e-mails never queue behind it. A job cut off by a shutdown is marked failed later.
        worker.excluded_queue_names = [OWNER_QUEUE]
        owner = Worker(queue_names=[OWNER_QUEUE], interval=max(interval, 1.0), batch=False, backend_name="default",
                       startup_delay=False, max_tasks=None, excluded_queue_names=[],
                       worker_id=f"{socket.gethostname()}-{os.getpid()}-owner"[:64])
        threading.Thread(target=owner.run, name="owner-jobs", daemon=True).start()
        threading.Thread(target=self._housekeeping_forever, args=(stop,), name="lifecycle", daemon=True).start()
        threading.Thread(target=self._notices_forever, args=(stop,), name="owner-notices", daemon=True).start()
        self.stdout.write(f"twin_worker {worker.worker_id}: tasks and approvals sweep "
                          f"every {settings.TWIN_WORKER_SWEEP_SECONDS}s")
        worker.configure_signals()
        try:
            worker.run()
        finally:
            stop.set()

    @staticmethod
    def _sweep_forever(stop: threading.Event) -> None:
        def sweep() -> None:  # a sweep at start picks up what a restart left behind
            # turns first: a dead turn's reservations are charged and linked to its record
            counts = turns_sweep() | approvals_sweep() | {"expired_reservations": reservations_expire(),
                                                          "old_rate_counters": counters_purge(),
                                                          "old_login_failures": login_failures_purge()}
            if any(counts.values()):
                log.info("sweep: %s", counts)

        _every(stop, settings.TWIN_WORKER_SWEEP_SECONDS, sweep, "approvals sweep")

    @staticmethod
    def _notices_forever(stop: threading.Event) -> None:
        """Every NOTICE_POLL_SECONDS: bundle what waits into a notice and send what is due (a
        request reaches the owner within about that, plus the receiver's time)."""
        def notices() -> None:
            for delivery, outcome in notices_run().sent:
                log.info("owner notice %s by %s: %s", delivery.notice_id, delivery.channel, outcome)

        _every(stop, NOTICE_POLL_SECONDS, notices, "owner notices")

    @staticmethod
    def _housekeeping_forever(stop: threading.Event) -> None:
        """Owner jobs whose worker died are marked failed; the retention purge runs at start and
        every TWIN_PURGE_INTERVAL (several workers may purge at once: each batch locks its rows);
        the digest goes out once a day, at or after TWIN_DIGEST_TIME."""
        next_purge = time.monotonic()

        def housekeeping() -> None:
            nonlocal next_purge
            jobs_fail_stale()
            if settings.TWIN_PURGE_INTERVAL and time.monotonic() >= next_purge:
                counts = retention_purge() | {"old_owner_notices": notices_purge()}
                next_purge = time.monotonic() + settings.TWIN_PURGE_INTERVAL  # a failure retries soon
                if any(counts.values()):
                    log.info("retention purge: %s", counts)
            # at TWIN_DIGEST_TIME, once a day across workers (digest.services: the day's row)
            if (outcome := digest_scheduled()) is not None:
                log.info("owner's digest: %s", outcome)
            # the owner's imported sources, every TWIN_IMPORT_EVERY (one worker at a time)
            _follow_sources(log.info)

        _every(stop, 60, housekeeping, "housekeeping")


def _follow_sources(say) -> None:
    """Read the owner's imported sources again when they are due, and sync what changed."""
    report = knowledge_refresh(root=settings.TWIN_KNOWLEDGE_DIR)
    if report is not None:
        say(f"refreshed the imported sources: {report.total('updated')} updated, {report.total('new')} new, "
            f"{report.total('gone')} gone, {len(report.failed)} could not be read")


def _every(stop: threading.Event, seconds: float, step, what: str) -> None:
    """Run ``step`` now and every ``seconds`` until ``stop``, each time on a fresh connection; a
    failure (the database may be away) is logged and the next round tries again."""
    while True:
        try:
            close_old_connections()
            step()
        except Exception:
            log.exception("%s failed", what)
        if stop.wait(seconds):
            return
