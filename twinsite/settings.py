"""One settings module, read from the environment (see ``.env.example`` for every variable)."""

from __future__ import annotations

import os
import re
from decimal import Decimal
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from twinsite.env import (
    env_blocks,
    env_bool,
    env_choice,
    env_decimal,
    env_duration,
    env_float,
    env_int,
    env_items,
    env_list,
    env_match,
    env_rate,
    env_secret,
    env_secret_key,
    env_str,
    env_subset,
    env_token,
    env_url,
    is_network,
    knowledge_owner_name,
)
from twinsite.settings_database import database_from_env

# The owner's daily digest and notices of waiting contact requests, named one by one: Django reads
# every upper-case name of this module (so none is "unused")
from twinsite.settings_owner import (  # noqa: F401
    TWIN_DIGEST_LINK_TTL,
    TWIN_DIGEST_TIME,
    TWIN_NOTIFY_EMAIL,
    TWIN_NOTIFY_EVERY,
    TWIN_NOTIFY_FORMAT,
    TWIN_NOTIFY_QUIET,
    TWIN_NOTIFY_WEBHOOK,
    TWIN_NOTIFY_WEBHOOK_SECRET,
    TWIN_OWNER_LANGUAGE,
    TWIN_OWNER_REPLY_HOURS,
    TWIN_SITE_URL,
    mailers,
)
from twinsite.settings_provider import provider_endpoint

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("TWIN_VAR_DIR", str(BASE_DIR / "var"))).resolve()

# Off unless asked for: a server started otherwise than by `make run` never shows debug pages;
# scripts/serve, manage.py and tests/settings.py turn it on when the environment does not say.
DEBUG = env_bool("DEBUG", default=False)


# Development: a generated key persisted under var/, so sessions survive restarts.
SECRET_KEY = env_secret_key(VAR_DIR, debug=DEBUG)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost" + (",testserver" if DEBUG else ""))
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

# Cookies: never readable by scripts (the session), HTTPS only in production (DEBUG=0). HSTS in
# production (TWIN_HSTS_SECONDS=0: off); behind a trusted proxy its X-Forwarded-Proto says HTTPS.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = not DEBUG
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = CSRF_COOKIE_SAMESITE = "Lax"
SECURE_REFERRER_POLICY = "same-origin"
SECURE_HSTS_SECONDS = 0 if DEBUG else env_int("TWIN_HSTS_SECONDS", 31_536_000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("TWIN_HSTS_SUBDOMAINS", default=True)
# Preloading is the domain owner's opt-in (hstspreload.org), not a default: its check stays quiet.
SECURE_HSTS_PRELOAD = env_bool("TWIN_HSTS_PRELOAD", default=False)
# django_ratelimit.W001: "cache backend … is not officially supported" (its list names
# memcached and django-redis); ours is atomic (guards.ratecache), Django's Redis cache too.
SILENCED_SYSTEM_CHECKS = ["django_ratelimit.W001"] + ([] if SECURE_HSTS_PRELOAD else ["security.W021"])
if env_int("TWIN_TRUSTED_PROXIES", 0, minimum=0):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Plain-HTTP requests are redirected to HTTPS in production, except the health check and the
# metrics, which monitors on the loopback ask over HTTP. TWIN_SSL_REDIRECT=0 when the proxy does it.
SECURE_SSL_REDIRECT = env_bool("TWIN_SSL_REDIRECT", default=not DEBUG)
SECURE_REDIRECT_EXEMPT = [r"^api/health$", r"^metrics$"]

INSTALLED_APPS = [
    "daphne",  # before staticfiles, so runserver serves websockets (daphne.E001)
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "channels",
    "ninja",  # serves Swagger's assets locally instead of from a CDN
    "django_ratelimit",  # the HTTP views' limits (guards.limits.RATES), on CACHES["ratelimit"]
    "django_tasks_db",  # the durable task queue (approval resumes, e-mail delivery)
    "chat",
    "approvals",
    "knowledge",
    "budget",
    "guards",
    "evals",
    "ops",  # background jobs of the owner (knowledge sync, eval runs), backup and restore
    "digest",  # the owner's daily e-mail and its one-click confirmation links
]

MIDDLEWARE = [
    "twinsite.clientip.ForwardedHeadersMiddleware",  # forwarded headers from trusted proxies only
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",  # the visitor's language: switch cookie, then browser
    "twinsite.owner_language.OwnerLanguageMiddleware",  # the admin: TWIN_OWNER_LANGUAGE
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "chat.outage.DatabaseUnavailableMiddleware",  # Postgres away: a 503 with Retry-After, not a 500
]

# Scripts only from our own static files, everywhere. Inline style attributes are allowed for
# the admin's sake; the visitor's pages are stricter (chat.views.VISITOR_CSP).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF, CSP.UNSAFE_INLINE],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "object-src": [CSP.NONE],
}

ROOT_URLCONF = "twinsite.urls"
ASGI_APPLICATION = "twinsite.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


DATABASES = {"default": database_from_env()}
# Threads that run ORM calls for the async code (sockets, turns); each keeps one connection.
TWIN_DB_THREADS = env_int("TWIN_DB_THREADS", 8, minimum=1, maximum=64)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Cross-process: the worker pushes an approval's outcome to the visitor's socket in daphne.
# Postgres LISTEN/NOTIFY by default (no Redis to run); channels-redis when REDIS_URL is set.
REDIS_URL = env_url("REDIS_URL", "", ("redis", "rediss", "unix"), "look like redis://host:6379/0 (or rediss://, "
                    "unix://)", secret=True)
if REDIS_URL:
    # redis-py 8 reads with a 5 s socket timeout by default, as long as channels-redis' blocking
    # receive waits: a quiet socket would fail with TimeoutError (seen); 30 s keeps it a real timeout.
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                  "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 30}]}}}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "chat.layers.PostgresNotifyChannelLayer"}}

# Every limit counts on CACHES["ratelimit"], atomic across processes, every level in one round trip
# (guards.ratecache: Redis with REDIS_URL, else Postgres). "default" is per process, sharing nothing.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "ratelimit": ({"BACKEND": "guards.ratecache.RedisCounterCache", "LOCATION": REDIS_URL}
                  if REDIS_URL else {"BACKEND": "guards.ratecache.CounterCache"}),
}
RATELIMIT_USE_CACHE = "ratelimit"
RATELIMIT_FAIL_OPEN = False  # a counter that cannot be read refuses

# Django's tasks on the ORM (django-tasks-db): a decision is a row, run by `manage.py twin_worker`,
# so it survives a restart. Queues: "default" (resumes, e-mail) and "owner" (sync, evals), which
# the worker runs in a thread of its own so a long job never delays an approval.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "owner"]}}

# E-mail to the owner: console by default, SMTP when EMAIL_HOST is set (twinsite/settings_owner.py)
MAILERS = mailers(VAR_DIR)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "twinsite@localhost")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

# Visitors get Dutch or English: the language switch's cookie, else the browser's
# Accept-Language, else English. Catalogues: locale/ (compiled by `make`, twinsite/catalogues.py).
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("nl", "Nederlands")]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_SECURE = not DEBUG
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
TIME_ZONE = env_str("TIME_ZONE", "Europe/Amsterdam")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("TWIN_STATIC_ROOT", str(BASE_DIR / "staticfiles"))).resolve()
STATICFILES_DIRS = [BASE_DIR / "static"]
# WhiteNoise serves static files from daphne itself; in development straight from the apps'
# folders, in production from `collectstatic`'s hashed, compressed copies (make run runs it).
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage" if DEBUG
                    else "twinsite.storage.StaticStorage"},
}

DEFAULT_EXCEPTION_REPORTER_FILTER = "twinsite.logs.SecretSettingsFilter"  # error pages and mails
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Scrubbed: API keys, card and account numbers never reach the log, exceptions included.
    # LOG_FORMAT=json writes every record as one JSON object per line (twinsite.logs.JsonFormatter).
    "formatters": {"plain": {"()": "guards.scrub.ScrubbingFormatter",
                             "format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
                   "json": {"()": "twinsite.logs.JsonFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler",
                             "formatter": env_choice("LOG_FORMAT", "plain", ("plain", "json"))},
                 "json": {"class": "logging.StreamHandler", "formatter": "json"}},
    "root": {"handlers": ["console"], "level": env_choice(
        "LOG_LEVEL", "info", ("debug", "info", "warning", "error")).upper()},
    # One JSON line per turn (outcome, tokens, cost, latency), whatever LOG_FORMAT and LOG_LEVEL say.
    # httpx logs every request's address at INFO; a notice webhook's address is a secret (Slack's)
    "loggers": {"twinsite.turns": {"handlers": ["json"], "level": "INFO", "propagate": False},
                "httpx": {"level": "WARNING"}},
}

# --- Twinsite ------------------------------------------------------------------------------

# The owner's name, as the twin says it. Unset, it is the ``name:`` line of the knowledge
# folder's ``owner.yaml`` (the shipped sample names its fictional owner there), else "the owner".
TWIN_OWNER_NAME = env_str("TWIN_OWNER_NAME", "")

# The embeddable twin (embed.js on other sites): the origins allowed to frame it, exactly as a
# browser writes them ("https://mira.example", no path), and the launcher's label and colour.
TWIN_EMBED_ORIGINS = env_items("TWIN_EMBED_ORIGINS", "", lambda origin: bool(
    re.fullmatch(r"https?://[a-z0-9.\-]+(?::\d{1,5})?", origin)), "an origin like https://example.org")
# How long an embedded chat's token opens its conversation; renewed on every visit.
TWIN_EMBED_TOKEN_DAYS = env_int("TWIN_EMBED_TOKEN_DAYS", 7, minimum=1, maximum=365)
TWIN_EMBED_LABEL = env_str("TWIN_EMBED_LABEL", "")  # empty: "Ask <owner>'s twin" in the page's language
TWIN_EMBED_COLOR = env_match("TWIN_EMBED_COLOR", "#2449b8", r"#[0-9a-fA-F]{6}", "a colour like #2449b8")

# Knowledge base
TWIN_KNOWLEDGE_DIR = Path(env_str("TWIN_KNOWLEDGE_DIR", str(BASE_DIR / "knowledge" / "content"))).resolve()
# Files uploaded to the admin's Import, kept until the worker has imported them
TWIN_IMPORT_DIR = Path(env_str("TWIN_IMPORT_DIR", str(BASE_DIR / "var" / "imports"))).resolve()
# The sources an owner imported (knowledge folder's imports.yaml) are read again this often by the
# worker (knowledge.importing.follow); "off": only by hand (import_knowledge --refresh)
TWIN_IMPORT_EVERY = None if env_str("TWIN_IMPORT_EVERY", "1d").strip().lower() == "off" else \
    env_duration("TWIN_IMPORT_EVERY", "1d", minimum=1)
TWIN_OWNER_NAME = TWIN_OWNER_NAME or knowledge_owner_name(TWIN_KNOWLEDGE_DIR) or "the owner"
# Embedding models, first = primary (full-text rows, relevance). Several are fused by rank.
TWIN_EMBEDDERS = env_subset("TWIN_EMBEDDERS", "e5,use", ("e5", "use", "api"))
TWIN_FULLTEXT_WEIGHT = env_float("TWIN_FULLTEXT_WEIGHT", 0.5, minimum=0.0)
TWIN_EMBED_API_URL = env_str("TWIN_EMBED_API_URL")
TWIN_EMBED_API_MODEL = env_str("TWIN_EMBED_API_MODEL", "text-embedding-3-small")
TWIN_EMBED_API_KEY = env_secret("TWIN_EMBED_API_KEY")
if "api" in TWIN_EMBEDDERS and not TWIN_EMBED_API_URL:
    raise ImproperlyConfigured("TWIN_EMBED_API_URL must be set when TWIN_EMBEDDERS includes api")
TWIN_SEARCH_TOP_K = env_int("TWIN_SEARCH_TOP_K", 8, minimum=1, maximum=20)
TWIN_SEARCH_CANDIDATES = env_int("TWIN_SEARCH_CANDIDATES", 30, minimum=5, maximum=200)
# 0 = the embedder's own floor (e5: 0.83); see knowledge.search.relevance.is_relevant
TWIN_RELEVANCE_FLOOR = env_float("TWIN_RELEVANCE_FLOOR", 0.0, minimum=0.0)
TWIN_SEARCH_RESULT_CHARS = env_int("TWIN_SEARCH_RESULT_CHARS", 6000, minimum=500)
TWIN_EVAL_RECALL3_MIN = env_float("TWIN_EVAL_RECALL3_MIN", 0.90, minimum=0.0)
TWIN_EVAL_RECALL3_NL_MIN = env_float("TWIN_EVAL_RECALL3_NL_MIN", 0.85, minimum=0.0)

# Provider
TWIN_PROVIDER = env_choice(
    "TWIN_PROVIDER", "offline", ("offline", "openai", "gemini", "deepseek", "kimi", "openai_compatible")
)
TWIN_MODEL = env_str("TWIN_MODEL")
TWIN_API_KEY = env_secret("TWIN_API_KEY")
TWIN_BASE_URL = env_str("TWIN_BASE_URL")
TWIN_PROVIDER_TIMEOUT = env_float("TWIN_PROVIDER_TIMEOUT", 60.0, minimum=1.0)
TWIN_PROVIDER_MAX_ATTEMPTS = env_int("TWIN_PROVIDER_MAX_ATTEMPTS", 4, minimum=1, maximum=10)
TWIN_PROVIDER_BACKOFF = env_float("TWIN_PROVIDER_BACKOFF", 0.5, minimum=0.0)
# An assistant step that only calls tools is sent with content null (the API's form); "empty"
# sends "" for servers that refuse null (llama-cpp-python's).
TWIN_TOOL_STEP_CONTENT = env_choice("TWIN_TOOL_STEP_CONTENT", "null", ("null", "empty"))
TWIN_MAX_OUTPUT_TOKENS = env_int("TWIN_MAX_OUTPUT_TOKENS", 800, minimum=16)
TWIN_FAULT_DROP_EVERY = env_int("TWIN_FAULT_DROP_EVERY", 0, minimum=0)
TWIN_FAULT_CUT_STREAM = env_bool("TWIN_FAULT_CUT_STREAM", default=False)
TWIN_PRICING_OVERRIDES = env_str("TWIN_PRICING_OVERRIDES")  # JSON, see docs/CONFIGURATION.md

# Agent
TWIN_MAX_TOOL_ROUNDS = env_int("TWIN_MAX_TOOL_ROUNDS", 3, minimum=0, maximum=10)
TWIN_TOOL_TIMEOUT = env_float("TWIN_TOOL_TIMEOUT", 10.0, minimum=0.1)
# A whole turn (every model call and tool round) ends by this many seconds: a model call still
# running is stopped and the visitor told (`deadline`).
TWIN_TURN_DEADLINE = env_float("TWIN_TURN_DEADLINE", 120.0, minimum=1.0)
# Visitor turns one serving process runs at once; the next is refused at once (`overloaded`).
TWIN_PROCESS_TURNS = env_int("TWIN_PROCESS_TURNS", 100, minimum=1)
TWIN_HISTORY_TOKENS = env_int("TWIN_HISTORY_TOKENS", 2000, minimum=0)
# The knowledge in the system prompt never exceeds this (knowledge/prefix.py); above it the rest
# is reached by search.
TWIN_PREFIX_TOKENS = env_int("TWIN_PREFIX_TOKENS", 16_000, minimum=1_000)
# Each process hears of knowledge changes (knowledge/watch.py) instead of reading the knowledge
# version on every turn: one more connection per process.
TWIN_KNOWLEDGE_WATCH = env_bool("TWIN_KNOWLEDGE_WATCH", True)
# A serving process of the offline provider embeds the knowledge base's sentences as it starts
# (chat.providers.offline.dense.warm), in a background thread.
TWIN_WARM_SENTENCES = env_bool("TWIN_WARM_SENTENCES", True)
TWIN_TOOL_RESULT_VIEW_CHARS = env_int("TWIN_TOOL_RESULT_VIEW_CHARS", 8000, minimum=200)
TWIN_GROUNDEDNESS_CHARS = env_int("TWIN_GROUNDEDNESS_CHARS", 300, minimum=50)
# An answer of that length with no valid citation and no tool result: "log" shows it, flagged for
# review (the design's default); "retract" replaces it with the decline once checked.
TWIN_UNCITED = env_choice("TWIN_UNCITED", "log", ("log", "retract"))
# A cited sentence its source does not say (knowledge.claims): marked, stripped or only logged.
TWIN_UNSUPPORTED = env_choice("TWIN_UNSUPPORTED", "mark", ("mark", "strip", "log"))
# The digest recommends TWIN_UNCITED=retract at this share of a model's flagged answers (20 at least).
TWIN_UNCITED_ALERT_SHARE = env_float("TWIN_UNCITED_ALERT_SHARE", 0.05, minimum=0.0)
TWIN_MAX_QUESTION_CHARS = env_int("TWIN_MAX_QUESTION_CHARS", 2000, minimum=100, maximum=2000)
# The semantic screen shields (answers without the model) a question this much closer (cosine) to
# the attack exemplars than to the benign ones, or closer; it never refuses. May be negative: the
# doubt band reaches below the margin at which it used to refuse (0.005). The curve: docs/GUARDS.md.
TWIN_SEMANTIC_SCREEN = env_bool("TWIN_SEMANTIC_SCREEN", True)
TWIN_SEMANTIC_MARGIN = env_float("TWIN_SEMANTIC_MARGIN", 0.0, minimum=-1.0)
# Evals and tests only: "shield" answers every turn without the model (run_evals --force-shield)
TWIN_SCREEN_FORCE = env_choice("TWIN_SCREEN_FORCE", "", ("", "shield"))
TWIN_MAX_TURNS = env_int("TWIN_MAX_TURNS", 40, minimum=1)
TWIN_TRACE_RETENTION_DAYS = env_int("TWIN_TRACE_RETENTION_DAYS", 90, minimum=1)
# Data lifecycle (chat/lifecycle.py): conversations idle this long are purged with their messages,
# traces, checkpoints and sessions; the worker runs the purges every TWIN_PURGE_INTERVAL (0: never).
TWIN_CONVERSATION_RETENTION_DAYS = env_int("TWIN_CONVERSATION_RETENTION_DAYS", 180, minimum=1)
TWIN_PURGE_INTERVAL = env_duration("TWIN_PURGE_INTERVAL", "24h", minimum=0)

# Budget
TWIN_DAILY_BUDGET_USD = env_decimal("TWIN_DAILY_BUDGET_USD", "2.00", minimum=Decimal("0"))
# One visitor cannot starve the rest: the most one conversation / one client address may use of a day.
TWIN_BUDGET_CONVERSATION_SHARE = env_float("TWIN_BUDGET_CONVERSATION_SHARE", 0.10, minimum=0.001)
TWIN_BUDGET_IP_SHARE = env_float("TWIN_BUDGET_IP_SHARE", 0.25, minimum=0.001)
# The day's last TWIN_BUDGET_RESERVE is kept for addresses that have used at most
# TWIN_BUDGET_RESERVE_IP_SHARE of the day's budget: new visitors, not those spending flat out.
TWIN_BUDGET_RESERVE = env_float("TWIN_BUDGET_RESERVE", 0.30, minimum=0.0)
TWIN_BUDGET_RESERVE_IP_SHARE = env_float("TWIN_BUDGET_RESERVE_IP_SHARE", 0.05, minimum=0.001)
if TWIN_BUDGET_RESERVE >= 1:
    raise ImproperlyConfigured("TWIN_BUDGET_RESERVE must be below 1 (a share of the day's budget)")
# The guard's early "is today's budget used up?" is read at most this often per process (0: every
# turn); the reservation, under the meter's row lock, still decides every model call.
TWIN_BUDGET_CHECK_SECONDS = env_float("TWIN_BUDGET_CHECK_SECONDS", 1.0, minimum=0.0)
TWIN_BUDGET_RESERVATION_TTL = env_duration("TWIN_BUDGET_RESERVATION_TTL", "10m", minimum=60)

# Limits per visitor (client IP), shared by every process through Postgres
TWIN_TRUSTED_PROXIES = env_int("TWIN_TRUSTED_PROXIES", 0, minimum=0, maximum=5)  # proxies adding X-Forwarded-For
# Where those proxies connect from (twinsite.clientip; others' forwarded headers are ignored).
TWIN_TRUSTED_PROXY_CIDRS = env_items("TWIN_TRUSTED_PROXY_CIDRS", "127.0.0.1/32,::1/128", is_network, "a network")
TWIN_TRUSTED_PROXY_CIDRS_SET = "TWIN_TRUSTED_PROXY_CIDRS" in os.environ
TWIN_RATE_TURNS = env_rate("TWIN_RATE_TURNS", "20/10m")  # chat turns per IP (WebSocket and HTTP)
TWIN_RATE_CONVERSATIONS = env_rate("TWIN_RATE_CONVERSATIONS", "10/10m")  # new conversations per IP
# Failed admin logins (guards/login.py): per name and IPv4 /24 or IPv6 /64 (its /48: twice this)
TWIN_RATE_LOGIN = env_rate("TWIN_RATE_LOGIN", "10/1h")
TWIN_RATE_FEEDBACK = env_rate("TWIN_RATE_FEEDBACK", "60/10m")  # feedback ratings per IP
TWIN_MAX_SOCKETS_PER_IP = env_int("TWIN_MAX_SOCKETS_PER_IP", 10, minimum=1)
TWIN_MAX_TURNS_PER_IP = env_int("TWIN_MAX_TURNS_PER_IP", 3, minimum=1)  # turns running at once per address
# Failed admin logins per name from anywhere, by browsers without that name's device cookie
TWIN_RATE_LOGIN_USER = env_rate("TWIN_RATE_LOGIN_USER", "20/1h")
TWIN_RATE_LOGIN_DEVICE = env_rate("TWIN_RATE_LOGIN_DEVICE", "10/1h")  # failed admin logins per device cookie
# The blocks an address's limits also count in, each at this multiple of the address's limit
TWIN_RATE_BLOCKS = env_blocks("TWIN_RATE_BLOCKS", "v6/56:3,v6/48:5,v4/24:10")
TWIN_MAX_FRAME_BYTES = 16_384  # a chat frame is one question of at most 2,000 characters

# Approvals
TWIN_OWNER_EMAIL = env_str("TWIN_OWNER_EMAIL", "owner@localhost")
TWIN_APPROVAL_TTL = env_duration("TWIN_APPROVAL_TTL", "7d", minimum=60)  # pending requests then expire
TWIN_ADMIN_TOKEN = env_token("TWIN_ADMIN_TOKEN")  # bearer token of /api/admin/*; unset: 404
# /metrics (Prometheus): this read-only token or TWIN_ADMIN_TOKEN, or a logged-in staff user; else 404
TWIN_METRICS_TOKEN = env_token("TWIN_METRICS_TOKEN")
# /api/docs and /api/openapi.json: public, staff (logged-in staff only, 404 for others) or off
TWIN_API_DOCS = env_choice("TWIN_API_DOCS", "public" if DEBUG else "staff", ("off", "staff", "public"))
TWIN_WORKER_SWEEP_SECONDS = env_int("TWIN_WORKER_SWEEP_SECONDS", 30, minimum=1)
TWIN_RESUME_MAX_ATTEMPTS = env_int("TWIN_RESUME_MAX_ATTEMPTS", 8, minimum=1)


# Admin bootstrap (make run)
TWIN_ADMIN_USER = env_str("TWIN_ADMIN_USER", "admin")
TWIN_ADMIN_PASSWORD = env_secret("TWIN_ADMIN_PASSWORD")

# Provider defaults (twinsite/settings_provider.py); a bad combination is a start-up error, not a
# failed first turn.
TWIN_BASE_URL, TWIN_MODEL = provider_endpoint(TWIN_PROVIDER, TWIN_BASE_URL, TWIN_MODEL, TWIN_API_KEY)
