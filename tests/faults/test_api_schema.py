"""schemathesis against the API's own OpenAPI schema (django-ninja), over real HTTP to a daphne
process: requests that fit the schema and requests that break it, for every operation. No
generated request may get a 5xx; bad input is a 4xx with a code."""

from __future__ import annotations

import time

import pytest
import schemathesis
from django.db import connection
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error

from tests.faults.conftest import Daphne, twin_env
from twinsite.api import api

pytestmark = pytest.mark.django_db(transaction=True)
TOKEN = "schema-fuzz-admin-token-0123456789"
schema = schemathesis.openapi.from_dict(api.get_openapi_schema())


@pytest.fixture(scope="module")
def api_server(django_db_setup, django_db_blocker, tmp_path_factory):
    """One server for every operation; few turns and conversations per address, so generated
    chat requests mostly meet the limits instead of running a model turn each."""
    with django_db_blocker.unblock():
        env = twin_env(TWIN_RATE_TURNS="2/10m", TWIN_RATE_CONVERSATIONS="2/10m", TWIN_ADMIN_TOKEN=TOKEN)
    server = Daphne(env, tmp_path_factory.mktemp("api") / "daphne.log")
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _turns_finished(api_server):
    """A chat turn the generated request's client stopped reading goes on in the server, and the
    test database is flushed after each case: a turn still writing deadlocks the flush (seen in
    a clean clone's run). Afterwards, wait until no turn holds its conversation's advisory lock."""
    yield
    deadline = time.monotonic() + 60
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute("SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                           "WHERE l.locktype = 'advisory' AND d.datname = current_database()")
            if cursor.fetchone()[0] == 0:
                return
            time.sleep(0.2)


@schema.parametrize()
@hypothesis_settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_generated_request_gets_a_server_error(case, api_server):
    # With the admin token (admin operations get past authentication to their validation); a
    # generated Authorization header replaces it, so wrong tokens are tried too.
    headers = {"Authorization": f"Bearer {TOKEN}"} if "authorization" not in {h.lower() for h in case.headers or {}} \
        else None
    response = case.call(base_url=api_server.url, headers=headers, timeout=60)
    case.validate_response(response, checks=[not_a_server_error])
    content_type = (response.headers.get("content-type") or [""])[0]
    if 400 <= response.status_code < 500 and content_type.startswith("application/json"):
        assert response.json()["error"]["code"]  # the API's one error shape, with a code
