from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

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
        ({"TWIN_NOTIFY_WEBHOOK": "https://hooks.example/T1/secret-path"},
         "TWIN_NOTIFY_WEBHOOK_SECRET (16 characters or more) must be set with TWIN_NOTIFY_WEBHOOK"),
        ({"TWIN_NOTIFY_WEBHOOK": "https://x.example/t", "TWIN_NOTIFY_WEBHOOK_SECRET": "short"},
         "TWIN_NOTIFY_WEBHOOK_SECRET must be at least 16 characters"),
        ({"TWIN_NOTIFY_WEBHOOK": "https://x.example/t", "TWIN_NOTIFY_WEBHOOK_SECRET": "whsec_bm90LWJhc2U2NC!!"},
         "after whsec_ comes the key in base64, 24 to 64 bytes"),
        ({"TWIN_NOTIFY_WEBHOOK": "ftp://hooks.example/T1/secret-path"}, "TWIN_NOTIFY_WEBHOOK must be an address like"),
        ({"TWIN_NOTIFY_QUIET": "22:00"}, "TWIN_NOTIFY_QUIET must be two different times like 22:00-07:00"),
        ({"TWIN_NOTIFY_FORMAT": "discord"}, "TWIN_NOTIFY_FORMAT must be one of"),
    ],
)
def test_bad_configuration_fails_at_start_naming_the_variable(env, message):
    result = check_settings(**env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and message in result.stderr


def test_debug_is_off_unless_asked_for():
    """A server started by hand (daphne, a container without DEBUG) shows no debug pages."""
    probe = ("import os; os.environ['DJANGO_SETTINGS_MODULE']='twinsite.settings'; "
             "from django.conf import settings as s; print(s.DEBUG)")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_") and k != "DEBUG"}
    unset = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False,
                           env=environment | {"SECRET_KEY": "k3y-" + "x7" * 30})
    assert (unset.returncode, unset.stdout.strip()) == (0, "False"), unset.stderr
    without_key = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                                 check=False, env=environment)
    assert without_key.returncode != 0 and "SECRET_KEY must be set when DEBUG is off" in without_key.stderr
    # the developer's tools turn it on when the environment does not say
    tool = subprocess.run([sys.executable, "manage.py", "shell", "-c", "from django.conf import settings; "
                           "print(settings.DEBUG)"], cwd=ROOT, capture_output=True, text=True, check=False,
                          env=environment)
    assert (tool.returncode, tool.stdout.split()[-1]) == (0, "True"), tool.stderr
    assert "DEBUG:-1" in (ROOT / "scripts" / "serve").read_text()


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


def _database_url() -> str:
    """The URL of the database this test run uses (the test database inside a db test)."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    return (f"postgresql://{quote(db['USER'], safe='')}:{quote(db['PASSWORD'], safe='')}@"
            f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}")


def _production_env(**env: str) -> dict[str, str]:
    """A sensible production environment, on the test run's own database."""
    url = _database_url()
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("TWIN_", "EMAIL_", "DEBUG", "LOG_"))}
    return environment | {
        "DEBUG": "0", "SECRET_KEY": "k3y-" + "x7" * 30, "ALLOWED_HOSTS": "twin.example.com",
        "CSRF_TRUSTED_ORIGINS": "https://twin.example.com", "TWIN_TRUSTED_PROXIES": "1",
        "TWIN_TRUSTED_PROXY_CIDRS": "127.0.0.1/32", "DATABASE_URL": url, "EMAIL_HOST": "smtp.example.com",
        "TWIN_OWNER_EMAIL": "owner@example.com", "DEFAULT_FROM_EMAIL": "twin@example.com",
    } | env


def test_check_deploy_is_clean_with_debug_off(tmp_path):
    env = _production_env(TWIN_STATIC_ROOT=str(tmp_path / "static"))
    # The hashed, compressed copies production serves (the vendored scripts' source-map comments too).
    collect = subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env,
                             capture_output=True, text=True, check=False)
    assert collect.returncode == 0, collect.stderr
    assert (tmp_path / "static" / "staticfiles.json").exists()
    check = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=ROOT,
                           env=env, capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "System check identified no issues" in check.stdout
    # and it does catch a production mistake: the console mail backend
    check = subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=ROOT, capture_output=True,
                           text=True, check=False, env={k: v for k, v in env.items() if k != "EMAIL_HOST"})
    assert check.returncode != 0 and "mail.E001" in check.stderr


PROBE_DB = """
import django, json, os
os.environ['DJANGO_SETTINGS_MODULE'] = 'twinsite.settings'
django.setup()
import psycopg
from django.db import connection
from twinsite.db import conninfo
out = {'options': connection.settings_dict['OPTIONS']}
for name, connect in (('django', lambda: connection.cursor()), ('checkpointer', lambda: psycopg.connect(conninfo()))):
    try:
        with connect() as c:
            row = c.execute("SELECT current_setting('statement_timeout'), current_setting('application_name'), "
                            "(SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid())")
            out[name] = list(row.fetchone())
    except Exception as exc:
        out[name] = type(exc).__name__ + ': ' + str(exc)
print(json.dumps(out, default=lambda o: o.__qualname__))  # the pool's check is a function
"""


def probe_database(url: str) -> dict:
    env = _production_env(DATABASE_URL=url, DEBUG="1")
    result = subprocess.run([sys.executable, "-c", PROBE_DB], cwd=ROOT, env=env, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1]) | {"stderr": result.stderr}


@pytest.mark.django_db
def test_database_url_options_reach_django_and_the_checkpointer():
    base = _database_url()
    seen = probe_database(base + "?sslmode=disable&connect_timeout=5&options=-c%20statement_timeout%3D4321")
    assert seen["options"] == {"application_name": "twinsite", "sslmode": "disable", "connect_timeout": "5",
                               "options": "-c statement_timeout=4321",
                               "pool": {"min_size": 2, "max_size": 20, "timeout": 3.0, "max_idle": 300.0,
                                        "reconnect_timeout": 2.0, "check": "check_if_idle"}}
    assert seen["django"] == ["4321ms", "twinsite", False]
    assert seen["checkpointer"] == ["4321ms", "twinsite-checkpoints", False]
    # sslmode is really used by both: required, it is TLS on a server that has it, refused on one without
    required = probe_database(base + "?sslmode=require")
    with connection.cursor() as cursor:
        cursor.execute("SHOW ssl")
        server_has_tls = cursor.fetchone()[0] == "on"
    if server_has_tls:
        assert required["django"][2] is True and required["checkpointer"][2] is True, required
    else:  # the embedded server
        # Django's pool retries for its timeout, then says it got no connection; why is logged
        assert "couldn't get a connection" in required["django"], required
        assert "SSL was required" in required["stderr"] and "SSL" in required["checkpointer"], required


def test_unknown_database_url_options_fail_at_start():
    result = check_settings(DATABASE_URL="postgresql://u:p@db.example.com/twinsite?sslmod=require")
    assert result.returncode != 0 and "DATABASE_URL must look like" in result.stderr and "sslmod" in result.stderr


def test_an_unusable_var_folder_is_a_clear_start_up_error(tmp_path):
    # a path under a file: unwritable even for root (CI), unlike a chmod-ed folder
    (tmp_path / "file").write_text("not a folder")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_") and k != "SECRET_KEY"}
    result = subprocess.run([sys.executable, "-c", "import django, os; os.environ['DJANGO_SETTINGS_MODULE']="
                             "'twinsite.settings'; from django.conf import settings; settings.SECRET_KEY"],
                            cwd=ROOT, env=environment | {"DEBUG": "1", "TWIN_VAR_DIR": str(tmp_path / "file" / "var")},
                            capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "is not usable (Not a directory)" in result.stderr


def test_the_release_named_in_code_is_the_one_pyproject_names():
    import tomllib

    from twinsite import __version__

    pyproject = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
    assert __version__ == pyproject["project"]["version"]
