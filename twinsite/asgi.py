"""ASGI entry point: HTTP (with static files) and the chat WebSocket."""

import logging
import os
import threading

from django.conf import settings
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twinsite.settings")
django_asgi_app = get_asgi_application()  # before importing anything that touches models

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from channels.sessions import SessionMiddlewareStack  # noqa: E402

from chat.outage import WebsocketUnavailable  # noqa: E402
from chat.routing import websocket_urlpatterns  # noqa: E402
from knowledge.embedders import get_embedders  # noqa: E402


def _one_blas_thread() -> None:
    """numpy's OpenBLAS on one thread in the serving process. By default it starts a thread per
    core for a product of matrices, which then spins waiting for the next one: with the offline
    provider (its sentence choice multiplies a few hundred vectors a turn) that thread alone
    took ~7 ms of CPU a turn on a 2-core VM, 10% of the process's, for matrices too small to gain
    from it; the other core serves Postgres and the other visitors' threads (BENCHMARKS.md,
    issue 59). The embedding models keep their own settings (``knowledge.embedders``)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")


def _warm() -> None:
    """Load the embedding models and embed the guard's exemplars in the background, so the first
    visitor does not wait for them; the knowledge base's words (for the search's translations),
    for the offline provider its sentences, and the pieces the claim check compares with."""
    from django.conf import settings
    from django.db import connection

    from chat.agent.screening import exemplar_screen
    from knowledge.embedders import embed_query
    from knowledge.search import warm_vocabulary

    embedders = get_embedders()
    embed_query(embedders, "warm up")  # every model loaded, its batcher thread started
    exemplar_screen(embedders[0])
    try:
        warm_vocabulary()
        if settings.TWIN_PROVIDER == "offline" and settings.TWIN_WARM_SENTENCES:
            from chat.providers.offline import dense

            dense.warm()
        if settings.TWIN_WARM_SENTENCES:  # the documents' sentences and clauses the claim check reads
            from knowledge import claims, selectors

            claims.warm(list(selectors.claim_sources(list(selectors.document_urls())).values()), embedders[0])
    except Exception:  # Postgres not there yet: the first turns embed them, as before
        logging.getLogger(__name__).warning("knowledge base not embedded at start", exc_info=True)
    finally:
        connection.close()


_one_blas_thread()

# Off in the test run (tests/settings.py): imported while tests are collected, the thread read the
# development database before pytest-django had made the test database, and Django's connection
# pool, made then, kept serving that database to the test process (seen with pytest-xdist).
if getattr(settings, "TWIN_WARM_AT_IMPORT", True):
    threading.Thread(target=_warm, name="warm-embedders", daemon=True).start()

application = ProtocolTypeRouter({
    # One process serves everything; static files through WhiteNoise's middleware.
    "http": django_asgi_app,
    # The session binds a socket to the conversations its browser started.
    # Postgres away during a handshake: an `unavailable` error and close 1013, not an HTTP 500.
    "websocket": AllowedHostsOriginValidator(WebsocketUnavailable(SessionMiddlewareStack(AuthMiddlewareStack(
        URLRouter(websocket_urlpatterns))))),
})
