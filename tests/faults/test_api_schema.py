"""schemathesis against the API's own OpenAPI schema (django-ninja), over real HTTP to a daphne
process: requests that fit the schema and requests that break it, for every operation. No
generated request may get a 5xx; bad input is a 4xx with a code."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error

from tests.faults.conftest import Daphne, turns_finished, twin_env
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
    """A generated chat request's turn may go on after its client stopped reading (seen in a
    clean clone's run: the flush after the case deadlocked with it)."""
    yield
    turns_finished()


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
