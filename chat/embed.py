"""The embeddable twin: a launcher script for any website and the chat in an iframe.

Inside another site's iframe a cookie is a third-party cookie, which browsers increasingly drop,
so an embedded conversation is carried by a signed token instead: the iframe's page keeps it in
its (partitioned) local storage, sends it with the WebSocket and the feedback calls, and a reload
of the host page finds the conversation again. The token names one conversation and nothing
else; it is signed with SECRET_KEY and expires with conversation retention.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core import signing

_SALT = "twinsite.embed.conversation"


def conversation_token(conversation_id: uuid.UUID | str) -> str:
    return signing.dumps(str(conversation_id), salt=_SALT, compress=False)


def conversation_from_token(token: object) -> str | None:
    """The conversation id a token names, or None when it is missing, forged or expired."""
    if not isinstance(token, str) or not token or len(token) > 200:
        return None
    max_age = getattr(settings, "TWIN_CONVERSATION_RETENTION_DAYS", 90) * 86_400
    try:
        value = signing.loads(token, salt=_SALT, max_age=max_age)
    except signing.BadSignature:
        return None
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        return None


def origin_allowed(origin: str) -> bool:
    return bool(origin) and origin in settings.TWIN_EMBED_ORIGINS
