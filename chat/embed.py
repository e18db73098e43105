"""The embeddable twin: a launcher script for any website and the chat in an iframe.

Inside another site's iframe a cookie is a third-party cookie, which browsers increasingly drop,
so an embedded conversation is carried by a signed token instead: the iframe's page keeps it in
its (partitioned) local storage (the host page keeps a copy, told by ``postMessage``), and a
reload of the host page finds the conversation again. The token names one conversation and
nothing else; it is signed with SECRET_KEY, lives ``TWIN_EMBED_TOKEN_DAYS`` and is renewed on
every visit.

A token never travels in a URL, where access logs, browser history and a link sent to someone
else would carry it: the frame opens its conversation with a form POST (``embed_page``), the
socket sends it as a WebSocket subprotocol (``socket_protocol``), the feedback call as a header.
A token in a query string opens nothing, so a link cannot hand a visitor someone else's chat.
"""

from __future__ import annotations

import base64
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
    max_age = min(settings.TWIN_EMBED_TOKEN_DAYS, getattr(settings, "TWIN_CONVERSATION_RETENTION_DAYS", 90)) * 86_400
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


# The socket's subprotocols: "twinsite", and the token as "twinsite-token.<base64url>" (a
# subprotocol may not hold the token's ":" separators).
SOCKET_PROTOCOL = "twinsite"
_TOKEN_PROTOCOL = "twinsite-token."  # noqa: S105 (a prefix, not a secret)


def socket_token(subprotocols: list[str] | None) -> str | None:
    """The token a socket offered among its subprotocols, or None."""
    for protocol in subprotocols or []:
        if protocol.startswith(_TOKEN_PROTOCOL):
            encoded = protocol.removeprefix(_TOKEN_PROTOCOL)
            try:
                return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode("ascii")
            except (ValueError, UnicodeDecodeError):
                return None
    return None
