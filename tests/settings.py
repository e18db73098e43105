"""The test run's settings: the product's own, with the development default `make run` has too
(``DEBUG`` on unless the environment says otherwise, so a generated ``SECRET_KEY`` under var/
will do). Set in the environment, so the servers and commands the tests start inherit it."""

import os

os.environ.setdefault("DEBUG", "1")

from twinsite.settings import *  # noqa: F403

# In-process code in tests writes documents in transactions that are rolled back, so Postgres
# never announces them (knowledge.watch): read the knowledge version per call there. The servers
# the tests start (environment, not these settings) listen as in production.
TWIN_KNOWLEDGE_WATCH = False

# Tests change the budget between turns within a second: the guard's early check reads the meter
# every turn in-process (the servers the tests start keep the product's 1 s).
TWIN_BUDGET_CHECK_SECONDS = 0.0

# Importing twinsite.asgi (the consumer tests do) must not start a thread that reads whichever
# test database is there and fills the sentence cache a test counts (the servers keep it on).
TWIN_WARM_SENTENCES = False
# Nor start its warming thread at all: imported while tests are collected, it read the development
# database before the test database existed, and Django's connection pool made then kept pointing
# there (with two xdist workers both ran on the development database). The servers keep warming.
TWIN_WARM_AT_IMPORT = False

# Each login and each user made costs one hash: the product's count (over a million iterations,
# about a second of CPU) made the login-limit tests last a minute. Same algorithm, fewer rounds.
from django.conf import global_settings  # noqa: E402

PASSWORD_HASHERS = ["tests.hashers.QuickPBKDF2PasswordHasher", *global_settings.PASSWORD_HASHERS]
