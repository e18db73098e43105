"""Who may start a turn, and how a turn's failures reach the visitor: one policy for both
transports (the WebSocket consumer and ``POST /api/chat``).

A conversation belongs to the browser session that started it (``SESSION_KEY``) or to the
embedded chat holding its signed token; knowing its id is not enough. Each question counts
against the per-address and per-conversation turn limits (``guards.limits``, Postgres rows, so
they hold across processes). A refused or failed turn is an ``error`` event with a code.
"""

from __future__ import annotations

import logging
import uuid

from chat.services import TurnRejected, ip_hash
from chat.texts import text as say
from chat.turns.run import Emit, turn_run
from guards import limits
from twinsite.clientip import client_ip_from_request
from twinsite.db import DATABASE_GONE, database_sync_to_async

log = logging.getLogger(__name__)
SESSION_KEY = "twin_conversation"  # the session's own conversation


def visitor_key(group: str, request) -> str:
    """django-ratelimit's key: the client's address (twinsite.clientip), hashed as every limit
    and incident keeps it."""
    return ip_hash(client_ip_from_request(request))


def conversation_owned(conversation_id: uuid.UUID | str, *, session_conversation: str | None,
                       token_conversation: str | None = None) -> bool:
    """The session started this conversation, or the embedded chat's token names it."""
    return str(conversation_id) in {session_conversation, token_conversation}


async def turn_admit(*, conversation_id: uuid.UUID | str, ip_key: str, client: str = "") -> None:
    """Count a question against the turn limits of its address and of the address's blocks
    (``client``: the address's key, ``twinsite.clientip``); raises TurnRejected
    (``rate_limited``, with ``retry_after`` seconds) when one of them is over."""
    decision = await database_sync_to_async(limits.address_hit)(
        "turn", ip_key=ip_key, client=client, conversation_id=str(conversation_id))
    if not decision.allowed:
        raise TurnRejected("rate_limited", seconds=decision.retry_after, retry_after=decision.retry_after)


def rejection_event(exc: TurnRejected, lang: str) -> dict:
    """A turn refused before it ran, as the ``error`` event both transports send."""
    event = {"type": "error", "in_turn": False, "code": exc.code, "message": exc.text(lang)}
    if "retry_after" in exc.params:
        event["retry_after"] = exc.params["retry_after"]
    return event


async def turn_events(*, conversation_id: uuid.UUID | str, text: str, emit: Emit, visitor_ip: str,
                      lang: str) -> None:
    """Run a turn, its events to ``emit``; whatever stops it becomes an ``error`` event. At most
    ``TWIN_MAX_TURNS_PER_IP`` turns of one address run at once, across processes (a slot row with
    an expiry, so a crashed process frees its slots): one address cannot fill a process's turns;
    its /56 and /48 (IPv6) or /24 (IPv4) hold their multiple of that (``limits.turn_slot``)."""
    slot = f"turn-{uuid.uuid4().hex}"
    result = None
    try:
        if not await database_sync_to_async(limits.turn_slot)(ip_key=ip_hash(visitor_ip), slot=slot,
                                                             client=visitor_ip):
            await emit({"type": "error", "in_turn": False, "code": "rate_limited",
                        "message": say("error.too_many_turns", lang)})
            return
        result = await turn_run(conversation_id=conversation_id, text=text, emit=emit, visitor_ip=visitor_ip,
                                lang=lang, slot=slot)
    except TurnRejected as exc:
        await emit(rejection_event(exc, lang))
    except DATABASE_GONE:  # Postgres away before the turn could start: said with a code
        log.warning("database unavailable for a turn", exc_info=True)
        await emit({"type": "error", "in_turn": False, "code": "unavailable",
                    "message": say("error.unavailable", lang)})
    except Exception:
        log.exception("turn crashed")
        await emit({"type": "error", "in_turn": False, "code": "internal", "message": say("error.internal", lang)})
    finally:
        try:
            if result is None or result.turn_id is None:  # else freed in the turn's record (chat.turns.records)
                await database_sync_to_async(limits.turn_slot_free)(slot=slot)
        except DATABASE_GONE:  # the slot expires by itself
            log.warning("turn slot %s not freed: the database is unavailable", slot)
