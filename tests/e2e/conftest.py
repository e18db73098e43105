"""The browser tests' servers (daphne and the worker on the test database), for every module here."""

from tests.e2e.test_chat_page import server, worker  # noqa: F401 (fixtures, found by pytest here)
