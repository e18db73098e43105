from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from twinsite.env import env_bool, env_decimal, env_int, env_secret

ROOT = Path(__file__).resolve().parent.parent


def test_typed_readers_name_the_variable(monkeypatch):
    monkeypatch.setenv("TWIN_X", "lots")
    with pytest.raises(ImproperlyConfigured, match="TWIN_X must be an integer"):
        env_int("TWIN_X", 1)
    with pytest.raises(ImproperlyConfigured, match="TWIN_X must be a boolean"):
        env_bool("TWIN_X")
    with pytest.raises(ImproperlyConfigured, match="TWIN_X must be a decimal"):
        env_decimal("TWIN_X", "1")
    monkeypatch.setenv("TWIN_X", "-3")
    with pytest.raises(ImproperlyConfigured, match="TWIN_X must be >= 0"):
        env_int("TWIN_X", 1, minimum=0)


def test_secret_from_file(monkeypatch, tmp_path):
    (tmp_path / "key").write_text("s3cret\n")
    monkeypatch.setenv("TWIN_API_KEY_FILE", str(tmp_path / "key"))
    assert env_secret("TWIN_API_KEY") == "s3cret"
    monkeypatch.setenv("TWIN_API_KEY_FILE", str(tmp_path / "missing"))
    with pytest.raises(ImproperlyConfigured, match="TWIN_API_KEY_FILE: cannot read"):
        env_secret("TWIN_API_KEY")


def check_settings(**env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_")} | env
    return subprocess.run(
        [sys.executable, "-c", "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='twinsite.settings'; "
                               "from django.conf import settings; settings.INSTALLED_APPS"],
        cwd=ROOT, env=environment, capture_output=True, text=True, check=False,
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TWIN_PROVIDER": "openai"}, "TWIN_API_KEY (or TWIN_API_KEY_FILE) must be set when TWIN_PROVIDER=openai"),
        ({"TWIN_PROVIDER": "openai_compatible", "TWIN_MODEL": "m"}, "TWIN_BASE_URL must be set"),
        ({"TWIN_PROVIDER": "claude"}, "TWIN_PROVIDER must be one of"),
        ({"TWIN_PROVIDER": "kimi", "TWIN_API_KEY": "k", "TWIN_BASE_URL": "ftp://x"}, "TWIN_BASE_URL must be an http"),
        ({"TWIN_EMBEDDERS": "e5,bert"}, "TWIN_EMBEDDERS must be"),
        ({"DEBUG": "0", "SECRET_KEY": ""}, "SECRET_KEY must be set when DEBUG is off"),
        ({"DATABASE_URL": "mysql://x/y"}, "DATABASE_URL must look like"),
        ({"TWIN_DAILY_BUDGET_USD": "-1"}, "TWIN_DAILY_BUDGET_USD must be a finite number >= 0"),
    ],
)
def test_bad_configuration_fails_at_start_naming_the_variable(env, message):
    result = check_settings(**env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and message in result.stderr


def test_good_provider_configuration_loads():
    result = check_settings(TWIN_PROVIDER="deepseek", TWIN_API_KEY="sk-x")
    assert result.returncode == 0, result.stderr


def test_production_cookies_are_secure_and_hsts_is_on():
    probe = ("import django, os; os.environ['DJANGO_SETTINGS_MODULE']='twinsite.settings'; "
             "from django.conf import settings as s; "
             "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.LANGUAGE_COOKIE_SECURE, s.SECURE_HSTS_SECONDS)")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_")}
    production = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True,
                                env=environment | {"DEBUG": "0", "SECRET_KEY": "x" * 50})
    assert production.stdout.split() == ["True", "True", "True", "31536000"]
    development = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                                 check=True, env=environment | {"DEBUG": "1"})
    assert development.stdout.split() == ["False", "False", "False", "0"]
