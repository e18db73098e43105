"""ASGI entry point: HTTP (with static files) and the chat WebSocket."""

import os
import threading

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twinsite.settings")
django_asgi_app = get_asgi_application()  # before importing anything that touches models

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from chat.routing import websocket_urlpatterns  # noqa: E402
from knowledge.embedders import get_embedders  # noqa: E402

# Load the embedding models in the background, so the first visitor does not wait for them.
threading.Thread(target=get_embedders, name="warm-embedders", daemon=True).start()

application = ProtocolTypeRouter({
    # One process serves everything, admin CSS included, with no separate static server.
    "http": ASGIStaticFilesHandler(django_asgi_app),
    "websocket": AllowedHostsOriginValidator(URLRouter(websocket_urlpatterns)),
})
