"""Settings of what the owner is sent: the daily digest and the notices of waiting contact
requests. Read from the environment like every setting; ``twinsite.settings`` imports them all."""

from __future__ import annotations

import base64
import binascii
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from twinsite.env import (
    env_bool,
    env_choice,
    env_duration,
    env_int,
    env_quiet_hours,
    env_secret,
    env_str,
    env_time_of_day,
    env_token,
    env_url,
)

__all__ = ["TWIN_DIGEST_LINK_TTL", "TWIN_DIGEST_TIME", "TWIN_NOTIFY_EMAIL", "TWIN_NOTIFY_EVERY", "TWIN_NOTIFY_FORMAT",
           "TWIN_NOTIFY_QUIET", "TWIN_NOTIFY_WEBHOOK", "TWIN_NOTIFY_WEBHOOK_SECRET", "TWIN_OWNER_LANGUAGE",
           "TWIN_OWNER_REPLY_HOURS", "TWIN_SITE_URL"]

# The owner's daily digest (digest/): e-mailed to TWIN_OWNER_EMAIL by the worker at TWIN_DIGEST_TIME
# (hour, minute in TIME_ZONE; None: never), in TWIN_OWNER_LANGUAGE. Its approve/reject links point
# at TWIN_SITE_URL and lead to a confirmation page; they work once, for TWIN_DIGEST_LINK_TTL.
TWIN_DIGEST_TIME = env_time_of_day("TWIN_DIGEST_TIME", "08:00")
TWIN_OWNER_LANGUAGE = env_choice("TWIN_OWNER_LANGUAGE", "en", ("en", "nl"))
# default: where `make run` serves (TWIN_HOST, TWIN_PORT), so the links work out of the box
TWIN_SITE_URL = env_url("TWIN_SITE_URL", f"http://{env_str('TWIN_HOST', '127.0.0.1')}:{env_str('TWIN_PORT', '8000')}",
                        ("http", "https"), "be the site's address like https://example.com").rstrip("/")
TWIN_DIGEST_LINK_TTL = env_duration("TWIN_DIGEST_LINK_TTL", "2d", minimum=60)

# The owner is told of a waiting contact request at once (twinsite.outbox.notices, sent by the worker): by
# e-mail to TWIN_OWNER_EMAIL and/or a webhook whose body is signed with TWIN_NOTIFY_WEBHOOK_SECRET,
# in TWIN_NOTIFY_FORMAT; at most one notice per TWIN_NOTIFY_EVERY (requests that arrive meanwhile
# are bundled into the next), none during TWIN_NOTIFY_QUIET (e.g. 22:00-07:00 in TIME_ZONE).
TWIN_NOTIFY_EMAIL = env_bool("TWIN_NOTIFY_EMAIL", True)
# the address of a Slack webhook is itself a secret: never printed in an error
TWIN_NOTIFY_WEBHOOK = env_url("TWIN_NOTIFY_WEBHOOK", "", ("http", "https"),
                              "be an address like https://ntfy.sh/my-topic", secret=True)
TWIN_NOTIFY_WEBHOOK_SECRET = env_token("TWIN_NOTIFY_WEBHOOK_SECRET", minimum=16)
if TWIN_NOTIFY_WEBHOOK_SECRET.startswith("whsec_"):  # Standard Webhooks' form: 24 to 64 bytes, base64
    try:
        _key = base64.b64decode(TWIN_NOTIFY_WEBHOOK_SECRET.removeprefix("whsec_"), validate=True)
    except binascii.Error:
        _key = b""
    if not 24 <= len(_key) <= 64:
        raise ImproperlyConfigured("TWIN_NOTIFY_WEBHOOK_SECRET: after whsec_ comes the key in base64, 24 to 64 "
                                   "bytes (python -c \"import base64, secrets; print('whsec_' + "
                                   "base64.b64encode(secrets.token_bytes(32)).decode())\")")
if TWIN_NOTIFY_WEBHOOK and not TWIN_NOTIFY_WEBHOOK_SECRET:
    raise ImproperlyConfigured("TWIN_NOTIFY_WEBHOOK_SECRET (16 characters or more) must be set with "
                               "TWIN_NOTIFY_WEBHOOK: the receiver checks the body's signature with it")
TWIN_NOTIFY_FORMAT = env_choice("TWIN_NOTIFY_FORMAT", "json", ("json", "ntfy", "slack"))
TWIN_NOTIFY_EVERY = env_duration("TWIN_NOTIFY_EVERY", "10m", minimum=1)
TWIN_NOTIFY_QUIET = env_quiet_hours("TWIN_NOTIFY_QUIET")

# The visitor's card says roughly when to expect the owner's decision; 0: it says nothing of when
TWIN_OWNER_REPLY_HOURS = env_int("TWIN_OWNER_REPLY_HOURS", 0, minimum=0, maximum=24 * 30)


def mailers(var_dir: Path) -> dict:
    """Django's MAILERS for e-mail to the owner (approved contact messages, the digest, notices):
    console by default, SMTP when EMAIL_HOST is set, files under EMAIL_FILE_PATH (default
    ``var_dir/mail``) with EMAIL_BACKEND=file."""
    host = env_str("EMAIL_HOST")
    backend = env_choice("EMAIL_BACKEND", "smtp" if host else "console", ("console", "smtp", "file"))
    if backend == "smtp":
        if not host:
            raise ImproperlyConfigured("EMAIL_HOST must be set when EMAIL_BACKEND=smtp")
        port = env_int("EMAIL_PORT", 587, minimum=1, maximum=65535)
        options = {
            "host": host, "port": port,
            "username": env_str("EMAIL_HOST_USER"), "password": env_secret("EMAIL_HOST_PASSWORD"),
            "use_tls": env_bool("EMAIL_USE_TLS", default=port == 587),
            "use_ssl": env_bool("EMAIL_USE_SSL", default=port == 465), "timeout": 30,
        }
    elif backend == "file":
        options = {"file_path": env_str("EMAIL_FILE_PATH", str(var_dir / "mail"))}
    else:
        options = {}
    return {"default": {"BACKEND": f"django.core.mail.backends.{backend.replace('file', 'filebased')}.EmailBackend",
                        "OPTIONS": options}}
