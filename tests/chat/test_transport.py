"""What a hostile visitor can send to the chat socket: each gets an error event with a code (or a
clean close), nothing is stored from a rejected frame, and limits hold per client address."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connection
from django.http import HttpResponse
from django.test import RequestFactory

from chat.models import Message
from chat.services import conversation_create
from guards.limits import visitor_hit
from tests.conftest import session_headers
from twinsite.asgi import application
from twinsite.clientip import client_ip_from_request, client_ip_from_scope

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("kb", "checkpoint_pool")]


async def open_socket(conversation_id, headers) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, f"/ws/chat/{conversation_id}/", headers=headers)
    communicator.scope["client"] = ("127.0.0.1", 50000)  # as behind a proxy on this host
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def test_another_visitors_conversation_is_refused():
    mine = await database_sync_to_async(conversation_create)()
    theirs = await database_sync_to_async(conversation_create)()
    communicator = await open_socket(theirs.pk, await session_headers(mine.pk))
    try:
        event = json.loads(await communicator.receive_from(timeout=10))
        assert (event["type"], event["code"]) == ("error", "forbidden")
        assert (await communicator.receive_output(timeout=5)) == {"type": "websocket.close", "code": 4403}
    finally:
        await communicator.disconnect()


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ({"bytes_data": b"\x00\x01"}, "bad_request"),
        ({"text_data": "[" * 5_000 + "]" * 5_000}, "too_deep"),
        ({"text_data": json.dumps({"type": "ask", "text": {"a": {"b": {"c": {"d": 1}}}}})}, "too_deep"),
        ({"text_data": json.dumps({"type": "ask", "text": "x" * 1_000_000})}, "frame_too_large"),
        ({"text_data": json.dumps({"type": "ask", "text": "hello\u0000world"})}, "control_characters"),
        ({"text_data": json.dumps({"type": "ask", "text": "bell\u0007"})}, "control_characters"),
        ({"text_data": '{"type": "ask", "text": "half \\ud800 pair"}'}, "bad_unicode"),
        ({"text_data": json.dumps({"type": "ask", "text": "x" * 2001})}, "too_long"),
        ({"text_data": json.dumps({"type": "ask", "text": " \n\t "})}, "empty_question"),
        ({"text_data": "{not json"}, "bad_json"),
    ],
)
async def test_bad_frames_get_a_code_and_nothing_is_stored(frame, code):
    conversation = await database_sync_to_async(conversation_create)()
    communicator = await open_socket(conversation.pk, await session_headers(conversation.pk))
    try:
        await communicator.send_to(**frame)
        event = json.loads(await communicator.receive_from(timeout=10))
        assert (event["type"], event["code"], event["in_turn"]) == ("error", code, False)
        # the socket stays usable: tabs and newlines are fine
        await communicator.send_to(text_data=json.dumps({"type": "ask", "text": "Wat heeft ze\n\tgebouwd?"}))
        while (event := json.loads(await communicator.receive_from(timeout=30)))["type"] != "done":
            pass
    finally:
        await communicator.disconnect()
    stored = await database_sync_to_async(lambda: list(Message.objects.filter(
        conversation=conversation, role="user").values_list("content", flat=True)))()
    assert stored == ["Wat heeft ze\n\tgebouwd?"]


async def test_turns_per_client_address_are_limited_across_conversations(settings):
    settings.TWIN_RATE_TURNS = "2/10m"
    settings.TWIN_TRUSTED_PROXIES = 1
    first = await database_sync_to_async(conversation_create)()
    second = await database_sync_to_async(conversation_create)()
    a = await open_socket(first.pk, await session_headers(first.pk, ip="198.51.100.7"))
    b = await open_socket(second.pk, await session_headers(second.pk, ip="198.51.100.7"))
    other = await open_socket(second.pk, await session_headers(second.pk, ip="198.51.100.8"))

    async def ask(communicator) -> dict:
        await communicator.send_to(text_data=json.dumps({"type": "ask", "text": "Waar woont ze?"}))
        while True:
            event = json.loads(await communicator.receive_from(timeout=30))
            if event["type"] == "done" or (event["type"] == "error" and not event["in_turn"]):
                return event

    try:
        assert (await ask(a))["type"] == "done"
        assert (await ask(b))["type"] == "done"
        limited = await ask(a)
        assert limited["code"] == "rate_limited" and limited["retry_after"] > 0
        assert (await ask(other))["type"] == "done"  # another address has its own budget
    finally:
        for communicator in (a, b, other):
            await communicator.disconnect()
    assert await database_sync_to_async(Message.objects.filter(role="user").count)() == 3


async def test_refusals_are_counted_not_written_one_row_each_and_a_flooding_socket_is_closed(settings):
    from guards.models import GuardIncident

    settings.TWIN_RATE_TURNS = "0/10m"  # every question of this address is over the limit
    settings.TWIN_TRUSTED_PROXIES = 1
    sockets = []
    for _ in range(3):
        conversation = await database_sync_to_async(conversation_create)()
        communicator = await open_socket(conversation.pk, await session_headers(conversation.pk, ip="198.51.100.9"))
        sockets.append(communicator)
        codes = []
        for _ in range(3):  # the visitor (or a script) keeps asking
            await communicator.send_to(text_data=json.dumps({"type": "ask", "text": "Waar woont ze?"}))
            codes.append(json.loads(await communicator.receive_from(timeout=10))["code"])
        assert codes == ["rate_limited"] * 3
        assert (await communicator.receive_output(timeout=5)) == {"type": "websocket.close", "code": 4429}
    rows = await database_sync_to_async(lambda: list(GuardIncident.objects.values_list("guard", "rule", "count")))()
    assert rows == [("rate_limit", "turns_per_ip", 9)]  # nine refusals, one row
    assert await database_sync_to_async(Message.objects.count)() == 0


async def test_sync_frames_are_throttled_per_socket(settings, monkeypatch):
    from chat import consumers

    monkeypatch.setattr(consumers, "SYNC_RATE", 3)
    conversation = await database_sync_to_async(conversation_create)()
    communicator = await open_socket(conversation.pk, await session_headers(conversation.pk))
    try:
        types = []
        for _ in range(5):
            await communicator.send_to(text_data=json.dumps({"type": "sync"}))
            event = json.loads(await communicator.receive_from(timeout=10))
            types.append(event["type"] if event["type"] != "error" else event["code"])
        assert types == ["history"] * 3 + ["rate_limited"] * 2
    finally:
        await communicator.disconnect()


async def test_open_sockets_per_address_are_limited(settings):
    settings.TWIN_MAX_SOCKETS_PER_IP = 2
    conversation = await database_sync_to_async(conversation_create)()
    headers = await session_headers(conversation.pk)
    first, second = await open_socket(conversation.pk, headers), await open_socket(conversation.pk, headers)
    for served in (first, second):  # the socket is accepted before it is counted: wait until it is counted
        await served.send_to(text_data="not json")
        assert json.loads(await served.receive_from(timeout=10))["code"] == "bad_json"
    third = await open_socket(conversation.pk, headers)
    try:
        event = json.loads(await third.receive_from(timeout=10))
        assert event["code"] == "rate_limited"
        assert (await third.receive_output(timeout=5))["code"] == 4429
    finally:
        await first.disconnect()
    fourth = await open_socket(conversation.pk, headers)  # a slot was freed
    try:
        await fourth.send_to(text_data="not json")  # served: it answers, it was not closed
        assert json.loads(await fourth.receive_from(timeout=10))["code"] == "bad_json"
    finally:
        await second.disconnect()
        await fourth.disconnect()


def test_the_client_address_trusts_only_the_configured_proxies(settings):
    factory = RequestFactory()
    settings.TWIN_TRUSTED_PROXY_CIDRS = ["10.0.0.0/8"]
    request = factory.get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.5")
    settings.TWIN_TRUSTED_PROXIES = 0
    assert client_ip_from_request(request) == "10.0.0.1"  # the header is ignored
    settings.TWIN_TRUSTED_PROXIES = 1
    assert client_ip_from_request(request) == "203.0.113.5"  # what our proxy saw, not what the client claimed
    settings.TWIN_TRUSTED_PROXIES = 3
    # 203.0.113.5 is no proxy of ours: what it claims about 6.6.6.6 is not believed
    assert client_ip_from_request(request) == "203.0.113.5"
    request = factory.get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="not-an-ip")
    settings.TWIN_TRUSTED_PROXIES = 1
    assert client_ip_from_request(request) == "10.0.0.1"


def test_forwarded_headers_count_only_from_a_trusted_proxy_address(settings):
    """Daphne reachable directly (the Dockerfile binds 0.0.0.0): a visitor who writes
    X-Forwarded-For or X-Forwarded-Proto themselves gains nothing."""
    factory = RequestFactory()
    settings.TWIN_TRUSTED_PROXIES = 1
    settings.TWIN_TRUSTED_PROXY_CIDRS = ["127.0.0.1/32", "::1/128"]
    direct = factory.get("/", REMOTE_ADDR="198.51.100.9", HTTP_X_FORWARDED_FOR="203.0.113.77")
    assert client_ip_from_request(direct) == "198.51.100.9"
    proxied = factory.get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.77")
    assert client_ip_from_request(proxied) == "203.0.113.77"
    scope = {"client": ("198.51.100.9", 5555), "headers": [(b"x-forwarded-for", b"203.0.113.77")]}
    assert client_ip_from_scope(scope) == "198.51.100.9"
    assert client_ip_from_scope({**scope, "client": ("::1", 5555)}) == "203.0.113.77"
    # two proxies (a CDN before nginx): the CDN's hop counts only when the CDN's address is listed
    settings.TWIN_TRUSTED_PROXIES = 2
    chained = factory.get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 192.0.2.10, 203.0.113.5")
    assert client_ip_from_request(chained) == "203.0.113.5"
    settings.TWIN_TRUSTED_PROXY_CIDRS = ["127.0.0.1/32", "203.0.113.0/24"]
    assert client_ip_from_request(chained) == "192.0.2.10"


def test_x_forwarded_proto_from_an_untrusted_peer_is_dropped(client, settings):
    from twinsite.clientip import ForwardedHeadersMiddleware

    seen = {}

    def view(request):
        seen.update(request.META)
        return HttpResponse("ok")

    settings.TWIN_TRUSTED_PROXIES = 1
    settings.TWIN_TRUSTED_PROXY_CIDRS = ["127.0.0.1/32"]
    middleware = ForwardedHeadersMiddleware(view)
    factory = RequestFactory()
    middleware(factory.get("/", REMOTE_ADDR="198.51.100.9", HTTP_X_FORWARDED_PROTO="https",
                           HTTP_X_FORWARDED_FOR="203.0.113.77"))
    assert "HTTP_X_FORWARDED_PROTO" not in seen and "HTTP_X_FORWARDED_FOR" not in seen
    middleware(factory.get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_PROTO="https"))
    assert seen["HTTP_X_FORWARDED_PROTO"] == "https"
    # and the whole stack: a direct request that claims HTTPS is not treated as secure
    settings.TWIN_TRUSTED_PROXY_CIDRS = ["10.9.9.9/32"]
    assert client.get("/api/health", HTTP_X_FORWARDED_PROTO="https", REMOTE_ADDR="198.51.100.9").wsgi_request \
        .is_secure() is False


def test_trusting_proxies_without_their_addresses_warns(settings):
    from ops.checks import proxy_addresses

    settings.TWIN_TRUSTED_PROXIES = 1
    settings.TWIN_TRUSTED_PROXY_CIDRS_SET = False
    assert [w.id for w in proxy_addresses()] == ["twinsite.W001"]
    settings.TWIN_TRUSTED_PROXY_CIDRS_SET = True
    assert proxy_addresses() == []
    settings.TWIN_TRUSTED_PROXIES = 0
    settings.TWIN_TRUSTED_PROXY_CIDRS_SET = False
    assert proxy_addresses() == []


def test_new_conversations_and_admin_logins_are_limited_per_address(client, settings):
    settings.TWIN_RATE_CONVERSATIONS = "3/10m"
    settings.TWIN_RATE_LOGIN = "2/10m"
    from django.test import Client

    statuses = [Client().post("/start/").status_code for _ in range(4)]  # no cookies: a new conversation each time
    assert statuses == [201, 201, 201, 429]
    response = Client().post("/start/")
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert client.post("/start/").status_code == 429 and client.get("/").status_code == 200  # the page still loads
    logins = [Client().post("/admin/login/", {"username": "x", "password": "y"}).status_code for _ in range(3)]
    assert logins == [200, 200, 429]


def test_every_limit_counts_on_the_one_counter_table(settings):
    """Turns (counted where no decorator goes) and the HTTP views' limits share django-ratelimit's
    counter in Postgres; a refusal says how long until its window ends."""
    from django.test import Client

    settings.TWIN_RATE_TURNS = "3/10m"
    assert [visitor_hit("turn", ip_key="k1").allowed for _ in range(4)] == [True, True, True, False]
    refused = visitor_hit("turn", ip_key="k1")
    assert not refused.allowed and 0 < refused.retry_after <= 600
    assert visitor_hit("turn", ip_key="k2").allowed  # another address, its own count
    Client().post("/start/")
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), sum(value)::int FROM guards_cachecounter")
        # k1's five turns, k2's one, the new conversation counted for its address and its /24
        assert cursor.fetchone() == (4, 5 + 1 + 1 + 1)
        cursor.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'guards_ratecounter'")
        assert cursor.fetchone() == (0,)


def test_ipv6_addresses_share_their_64_and_mapped_ipv4_is_unwrapped(settings):
    factory = RequestFactory()
    settings.TWIN_TRUSTED_PROXIES = 0
    first = client_ip_from_request(factory.get("/", REMOTE_ADDR="2001:db8:1:2::10"))
    second = client_ip_from_request(factory.get("/", REMOTE_ADDR="2001:db8:1:2:ffff::99"))
    assert first == second == "2001:db8:1:2::/64"
    assert client_ip_from_request(factory.get("/", REMOTE_ADDR="::ffff:198.51.100.7")) == "198.51.100.7"
