"""The admin login's throttle: failed logins only, so that nobody can lock the owner out.

Three counts, each a row of ``guards_loginfailure`` in Postgres (``LoginFailure``), shared by
every process; nothing here is counted in-process:

- **this address**: failures at one name from one address block (IPv4 /24, IPv6 /64, and the
  /64's /48 at twice the limit), ``TWIN_RATE_LOGIN``;
- **this account from unknown browsers**: failures at one name from anywhere, by browsers that
  do not carry a device cookie for that name, ``TWIN_RATE_LOGIN_USER``;
- **this browser**: failures by a browser that carries a valid device cookie for the name it
  tries, ``TWIN_RATE_LOGIN_DEVICE``. Such a browser meets this count only, so an attacker who
  stole nothing cannot lock it out (OWASP's "device cookies").

The device cookie is set when a login succeeds: the name and a random nonce, signed with
Django's signing (``SECRET_KEY``). A try takes its place in the counts before the password is
checked (one statement, atomic), so a burst of parallel tries cannot all pass the check before
one has failed; a success then clears every count of the name (and of the browser it came from),
so what is left counted is the failures. Every name counts alike, whether an account has it or
not: a refusal says nothing about which accounts exist. ``manage.py unlock_login NAME`` clears a
name's counts.

Not django-axes: it keys its lock-outs on a single address (no /24, /64 or /48 blocks), has no
device cookies, and would be a second store of counts beside django-ratelimit's.
"""

from __future__ import annotations

import ipaddress
import secrets
import unicodedata
from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.db import connection
from django.utils.translation import gettext as _

from twinsite.clientip import address_hash
from twinsite.env import parse_rate

DEVICE_COOKIE = "twin_device"
DEVICE_SALT = "twinsite.login.device"
DEVICE_MAX_AGE = 400 * 86_400  # the longest a browser keeps a cookie (RFC 6265bis)
_TABLE = "guards_loginfailure"


@dataclass(frozen=True)
class Count:
    scope: str  # "address", "account" or "browser": what a refusal names
    key: str  # hashed
    limit: int
    seconds: int


@dataclass(frozen=True)
class Refusal:
    scope: str
    retry_after: int  # seconds

    def message(self) -> str:
        """What is limited, in the request's language (gettext; Dutch in locale/nl)."""
        minutes = max(1, -(-self.retry_after // 60))
        if self.scope == "browser":
            text = _("Too many failed logins from this browser. Try again in %(minutes)d minutes.")
        elif self.scope == "account":
            text = _("Too many failed logins at this account from browsers it has not signed in from before. "
                     "A browser that has signed in to it before can still sign in; others can try again in "
                     "%(minutes)d minutes.")
        else:
            text = _("Too many failed logins at this account from this address. Try again in %(minutes)d "
                     "minutes.")
        return text % {"minutes": minutes}


def name_key(username: str) -> str:
    """A name as Django compares it (NFKC), case-folded: a full-width or capitalised "admin" is "admin"."""
    return unicodedata.normalize("NFKC", username).strip().casefold()


def name_hash(username: str) -> str:
    return address_hash(f"login-name:{name_key(username)}")


def login_blocks(client: str) -> list[tuple[str, int]]:
    """The blocks an address's failures count in, each with its multiple of ``TWIN_RATE_LOGIN``:
    an IPv4 address's /24; an IPv6 address's /64 and, at twice the limit, its /48 (a /48 may
    hold several subscribers; one rotating through its /64s meets the /48's count)."""
    try:
        network = ipaddress.ip_network(client, strict=False)
    except ValueError:
        return [(client or "unknown", 1)]
    if isinstance(network, ipaddress.IPv4Network):
        return [(str(network.supernet(new_prefix=24)), 1)]
    return [(str(network.supernet(new_prefix=prefix)), factor) for prefix, factor in ((64, 1), (48, 2))
            if prefix <= network.prefixlen]


def counts(username: str, *, client: str, device: str | None) -> list[Count]:
    """The counts a try at ``username`` from ``client`` takes its place in; ``device``: the nonce
    of the browser's valid device cookie for this name (``device_nonce``), or None."""
    name = name_key(username)
    if device:
        count, seconds = parse_rate(settings.TWIN_RATE_LOGIN_DEVICE)
        return [Count("browser", address_hash(f"login-device:{name}:{device}"), count, seconds)]
    count, seconds = parse_rate(settings.TWIN_RATE_LOGIN)
    found = [Count("address", address_hash(f"login-block:{name}:{block}"), count * factor, seconds)
             for block, factor in login_blocks(client)]
    count, seconds = parse_rate(settings.TWIN_RATE_LOGIN_USER)
    return [*found, Count("account", name_hash(username), count, seconds)]


def attempt(username: str, *, client: str, device: str | None) -> Refusal | None:
    """Take this try's place in its counts (before the password is checked); a Refusal when one
    of them is over its limit (the try then gives its places back), counted as a guard incident."""
    found = counts(username, client=client, device=device)
    owner = name_hash(username)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""INSERT INTO {_TABLE} AS f (key, name_hash, count, expires_at)
                SELECT k, %s, 1, now() + make_interval(secs => s) FROM unnest(%s::text[], %s::int[]) AS t(k, s)
                ON CONFLICT (key) DO UPDATE SET
                  count = CASE WHEN f.expires_at < now() THEN 1 ELSE f.count + 1 END,
                  expires_at = CASE WHEN f.expires_at < now() THEN EXCLUDED.expires_at ELSE f.expires_at END
                RETURNING key, count, GREATEST(1, ceil(extract(epoch FROM expires_at - now())))::int""",
            [owner, [c.key for c in found], [c.seconds for c in found]])
        now_counted = {key: (count, left) for key, count, left in cursor.fetchall()}
    for c in found:
        count, left = now_counted[c.key]
        if count > c.limit:
            from guards.services import incident_count

            with connection.cursor() as cursor:  # a refused try checks no password: it takes no place
                cursor.execute(f"UPDATE {_TABLE} SET count = count - 1 WHERE key = ANY(%s) AND count > 0",
                               [[f.key for f in found]])

            incident_count(guard="rate_limit", rule=f"login_failures_per_{c.scope}", ip_hash=c.key,
                           window_seconds=c.seconds)
            return Refusal(c.scope, left)
    return None


def succeeded(username: str) -> None:
    """A login as ``username`` succeeded: its counts are cleared (what stays counted is failures)."""
    forget(username)


def forget(username: str) -> int:
    """Clear every count of ``username`` (``manage.py unlock_login``); the rows removed."""
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {_TABLE} WHERE name_hash = %s", [name_hash(username)])
        return cursor.rowcount


def purge() -> int:
    """Delete the counts whose window has passed (the worker's sweep)."""
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {_TABLE} WHERE expires_at < now()")
        return cursor.rowcount


# --- the device cookie -------------------------------------------------------------------------

def device_nonce(request, username: str) -> str | None:
    """The nonce of the request's device cookie when it is valid (signed here, not older than
    ``DEVICE_MAX_AGE``) and made for ``username``; else None."""
    raw = request.COOKIES.get(DEVICE_COOKIE, "")
    if not raw:
        return None
    try:
        payload = signing.loads(raw, salt=DEVICE_SALT, max_age=DEVICE_MAX_AGE)
    except signing.BadSignature:
        return None
    if not isinstance(payload, dict) or payload.get("u") != name_key(username):
        return None
    nonce = payload.get("n")
    return nonce if isinstance(nonce, str) and nonce else None


def device_cookie_set(request, response, username: str) -> None:
    """Mark the browser that just signed in as ``username``'s: long-lived, HttpOnly, Secure over
    HTTPS, SameSite=Lax, sent to the admin only."""
    value = signing.dumps({"u": name_key(username), "n": secrets.token_urlsafe(16)}, salt=DEVICE_SALT)
    response.set_cookie(DEVICE_COOKIE, value, max_age=DEVICE_MAX_AGE, path="/admin/", secure=request.is_secure(),
                        httponly=True, samesite="Lax")
