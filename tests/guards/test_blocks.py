"""Limits that rotating addresses cannot dodge: an address's /56 and /48 (IPv6) or /24 (IPv4)
meet a limit of their own, and an admin account's logins are counted by name from anywhere."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db(transaction=True)


def test_new_conversations_from_80_subnets_of_one_48_meet_the_blocks_limit(settings):
    settings.TWIN_RATE_CONVERSATIONS = "2/10m"  # the /48's: 10 (TWIN_RATE_BLOCKS v6/48:5)
    statuses = [Client(REMOTE_ADDR=f"2001:db8:77:{n:02x}00::1").post("/start/").status_code for n in range(80)]
    assert statuses[:10] == [201] * 10 and statuses[10:] == [429] * 70  # each /64 in a /56 of its own
    assert Client(REMOTE_ADDR="2001:db8:78::1").post("/start/").status_code == 201  # the next /48


def test_a_56_meets_three_times_the_address_limit(settings):
    settings.TWIN_RATE_CONVERSATIONS = "2/10m"
    statuses = [Client(REMOTE_ADDR=f"2001:db8:99:1{n:x}::1").post("/start/").status_code for n in range(10)]
    assert statuses == [201] * 6 + [429] * 4  # ten /64s of one /56: its limit is 6


def test_a_24_counts_the_turn_limit_ten_times(settings):
    from guards.limits import block_hit

    settings.TWIN_RATE_TURNS = "2/10m"
    allowed = [block_hit("turn", client=f"192.0.2.{n}").allowed for n in range(25)]
    assert allowed == [True] * 20 + [False] * 5
    assert block_hit("turn", client="192.0.3.1").allowed


def test_tries_at_one_account_from_many_addresses_are_counted_by_name(settings):
    from django.contrib.auth.models import User

    User.objects.create_user("owner", password="right-password-123")
    settings.TWIN_RATE_LOGIN_USER = "20/1h"
    statuses = [Client(REMOTE_ADDR=f"198.51.{n}.7").post(
        "/admin/login/", {"username": "owner", "password": f"guess-{n}"}).status_code for n in range(25)]
    assert statuses[:20] == [200] * 20 and statuses[20:] == [429] * 5  # the form again, then refused
    fresh = Client(REMOTE_ADDR="203.0.113.50").post("/admin/login/", {"username": "Owner", "password": "guess"})
    assert fresh.status_code == 429
    wide = "\uff4f\uff57\uff4e\uff45\uff52"  # "owner" in full-width letters, which Django logs in as "owner"
    assert Client(REMOTE_ADDR="203.0.113.52").post("/admin/login/", {"username": wide, "password": "g"}).status_code \
        == 429
    # a name nobody has is refused the same way: the refusal tells nothing about accounts
    for n in range(20):
        Client(REMOTE_ADDR=f"198.18.{n}.1").post("/admin/login/", {"username": "nobody", "password": "x"})
    nobody = Client(REMOTE_ADDR="203.0.113.51").post("/admin/login/", {"username": "nobody", "password": "x"})
    import re

    def said(response) -> bytes:
        return re.sub(rb"\d+", b"N", response.content)

    assert nobody.status_code == 429 and said(nobody) == said(fresh)
