from django.urls import re_path

from chat.consumers import ChatConsumer, NotFoundConsumer

websocket_urlpatterns = [
    # Any segment matches, so a malformed id gets an error event instead of "No route found" (a 500).
    re_path(r"^ws/chat/(?P<conversation_id>[^/]+)/$", ChatConsumer.as_asgi()),
    # Any other path: the handshake is refused cleanly (403), never "No route found" (a 500).
    re_path(r"", NotFoundConsumer.as_asgi()),
]
