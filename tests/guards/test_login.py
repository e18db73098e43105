"""The admin login's throttle (guards/login.py, issue 57): failures only, per name and address
block, per name from unknown browsers, and per device cookie for a browser that signed in
before, so that guessing at the owner's name from many addresses cannot lock the owner out."""

from __future__ import annotations

from http.cookies import SimpleCookie
from urllib.parse import quote, urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from guards.login import DEVICE_COOKIE
from guards.models import GuardIncident

pytestmark = pytest.mark.django_db(transaction=True)

RIGHT = "right-password-123"


@pytest.fixture(autouse=True)
def quick_hashes(settings):
    """Hundreds of password checks: the product's PBKDF2 takes most of a second each here."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def owner() -> User:
    return User.objects.create_superuser("admin", password=RIGHT)


def login(client: Client, password: str, username: str = "admin", **extra):
    return client.post("/admin/login/", {"username": username, "password": password}, **extra)


def signed_in(response) -> bool:
    return response.status_code == 302 and response.wsgi_request.user.is_authenticated


def test_guessing_from_25_addresses_leaves_the_owners_browser_signing_in():
    """The issue's done-when: after 25 wrong passwords for `admin` from 25 addresses a fresh
    address is refused, and the owner's own browser (signed in once before) signs in."""
    owner()
    browser = Client(REMOTE_ADDR="198.51.100.9")
    assert signed_in(login(browser, RIGHT))
    browser.post("/admin/logout/")

    guesses = [login(Client(REMOTE_ADDR=f"203.0.{n}.7"), f"guess-{n}").status_code for n in range(25)]
    assert guesses == [200] * 20 + [429] * 5  # the form again, then refused

    fresh = login(Client(REMOTE_ADDR="192.0.2.200"), RIGHT)
    assert fresh.status_code == 429 and int(fresh["Retry-After"]) > 0
    browser.defaults["REMOTE_ADDR"] = "192.0.2.201"  # the owner's browser, moved to another network meanwhile
    assert signed_in(login(browser, RIGHT))
    # what let it in, and what the fresh address was told
    assert DEVICE_COOKIE in browser.cookies
    assert b"this account from browsers it has not signed in from before" in fresh.content
    assert GuardIncident.objects.filter(rule="login_failures_per_account").exists()


def test_only_failures_count_and_a_success_clears_the_names_counts(settings):
    settings.TWIN_RATE_LOGIN = "3/1h"
    owner()
    client = Client(REMOTE_ADDR="192.0.2.10")
    assert all(signed_in(login(client, RIGHT)) for _ in range(8))  # successes alone never lock

    stranger = Client(REMOTE_ADDR="192.0.2.11")
    assert [login(stranger, "wrong").status_code for _ in range(3)] == [200] * 3
    assert login(Client(REMOTE_ADDR="192.0.2.12"), RIGHT).status_code == 429  # that /24 is at its limit
    assert signed_in(login(Client(REMOTE_ADDR="198.51.100.12"), RIGHT))  # the name's counts start again
    assert [login(stranger, "wrong").status_code for _ in range(4)] == [200] * 3 + [429]


def test_an_address_block_meets_its_own_limit_and_says_so(settings):
    settings.TWIN_RATE_LOGIN = "2/1h"
    owner()
    # IPv4: one /24, whichever of its addresses
    statuses = [login(Client(REMOTE_ADDR=f"192.0.2.{n}"), "wrong").status_code for n in range(1, 4)]
    assert statuses == [200, 200, 429]
    refused = login(Client(REMOTE_ADDR="192.0.2.99"), RIGHT)
    assert refused.status_code == 429 and b"this account from this address" in refused.content
    assert signed_in(login(Client(REMOTE_ADDR="192.0.3.1"), RIGHT))  # the next /24

    # IPv6: a /64 at the limit, its /48 at twice it (rotating through /64s buys two more)
    assert [login(Client(REMOTE_ADDR="2001:db8:5:1::1"), "wrong").status_code for _ in range(3)] == [200, 200, 429]
    others = [login(Client(REMOTE_ADDR=f"2001:db8:5:{n}::1"), "wrong").status_code for n in range(2, 5)]
    assert others == [200, 200, 429]  # the /48 had 2 already: 4 in all
    assert login(Client(REMOTE_ADDR="2001:db8:6::1"), "wrong").status_code == 200  # the next /48


def test_a_browser_with_a_device_cookie_meets_its_own_limit_only(settings):
    settings.TWIN_RATE_LOGIN_DEVICE = "3/1h"
    owner()
    browser = Client(REMOTE_ADDR="192.0.2.20")
    assert signed_in(login(browser, RIGHT, secure=True))
    cookie = browser.cookies[DEVICE_COOKIE]
    assert cookie["httponly"] and cookie["secure"] and cookie["samesite"] == "Lax"
    assert cookie["path"] == "/admin/" and int(cookie["max-age"]) > 300 * 86_400
    browser.post("/admin/logout/")

    # the owner's own typos: counted for this browser alone, and said so
    assert [login(browser, "typo").status_code for _ in range(4)] == [200, 200, 200, 429]
    refused = login(browser, RIGHT)
    assert refused.status_code == 429 and b"from this browser" in refused.content
    # the same address without the cookie is another browser: its count is the address's
    assert signed_in(login(Client(REMOTE_ADDR="192.0.2.20"), RIGHT))


def test_a_forged_or_borrowed_device_cookie_counts_as_none(settings):
    settings.TWIN_RATE_LOGIN_USER = "2/1h"
    owner()
    User.objects.create_superuser("editor", password=RIGHT)
    browser = Client(REMOTE_ADDR="192.0.2.30")
    assert signed_in(login(browser, RIGHT, username="editor"))  # a device cookie for "editor"
    value = browser.cookies[DEVICE_COOKIE].value
    for n in range(2):
        login(Client(REMOTE_ADDR=f"198.18.{n}.1"), "wrong")
    # editor's cookie does not exempt a try at admin, nor does a tampered one
    assert login(browser, RIGHT).status_code == 429
    forged = Client(REMOTE_ADDR="192.0.2.31")
    forged.cookies = SimpleCookie({DEVICE_COOKIE: value[:-2] + ("AA" if value[-2:] != "AA" else "BB")})
    assert login(forged, RIGHT).status_code == 429


def test_unlock_login_clears_the_counts_and_the_refusal_speaks_dutch(settings, capsys):
    settings.TWIN_RATE_LOGIN_USER = "2/1h"
    settings.TWIN_OWNER_LANGUAGE = "nl"  # the admin's language (twinsite.owner_language)
    owner()
    for n in range(3):
        login(Client(REMOTE_ADDR=f"198.18.{n}.1"), "wrong")
    dutch = login(Client(REMOTE_ADDR="192.0.2.40"), RIGHT)
    assert dutch.status_code == 429 and "Te veel mislukte aanmeldingen bij dit account" in dutch.content.decode()
    call_command("unlock_login", "ADMIN")  # case and width do not matter
    assert "cleared" in capsys.readouterr().out
    assert signed_in(login(Client(REMOTE_ADDR="192.0.2.40"), RIGHT))


def test_the_digests_link_works_for_the_owners_browser_during_an_attack(settings):
    """The approve/reject links need a login: during an attack the owner's browser (with its
    device cookie) signs in and reaches the confirmation page; an unknown browser is refused
    until then (the owner's success clears the name's counts)."""
    from digest.links import link_create
    from tests.digest.seed import request

    owner()
    browser = Client(REMOTE_ADDR="198.51.100.9")
    assert signed_in(login(browser, RIGHT))
    browser.post("/admin/logout/")
    for n in range(21):
        login(Client(REMOTE_ADDR=f"203.0.{n}.7"), f"guess-{n}")

    approve = urlsplit(link_create(approval=request(), decision="approve")).path
    to_login = browser.get(approve)
    assert to_login["Location"] == f"/admin/login/?next={quote(approve)}"
    stranger = Client(REMOTE_ADDR="192.0.2.50")
    assert stranger.post(to_login["Location"], {"username": "admin", "password": RIGHT}).status_code == 429
    arrived = browser.post(to_login["Location"], {"username": "admin", "password": RIGHT, "next": approve})
    assert arrived.status_code == 302 and arrived["Location"] == approve
    assert browser.get(approve).status_code == 200  # the confirmation page
