"""The README: at most 200 lines, its shell lines name commands and targets that exist, and its
"Your own content" commands, taken from the README itself, run as written from a CV and a site
served on loopback to a twin that serves that content.

Only the owner's own names are put in for the README's examples (``Profile.pdf``, the site's
address, ``my-knowledge``): a PDF made here, the loopback site of the importer's tests, a
temporary folder. The commands run against the test database (its tables are emptied after
the test), so nothing of the developer's own data is touched."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from django.db import connection

from knowledge.models import Document
from knowledge.selectors import public_url
from tests.knowledge.importing.conftest import Site
from tests.knowledge.importing.makers import cv_pdf

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def shell_lines(text: str) -> list[str]:
    """The commands of the ```sh blocks: comments dropped, continued lines joined."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split("  #", 1)[0].strip()
            if command and not command.startswith("#"):
                lines.append(command)
    return lines


def own_content_commands() -> list[str]:
    section = README.split("\n## Your own content\n", 1)[1].split("\n## ", 1)[0]
    return shell_lines(section)


def test_the_readme_fits_on_two_screens_and_names_only_what_exists():
    assert len(README.splitlines()) <= 200
    targets = set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(), flags=re.MULTILINE))
    commands = {p.stem for p in ROOT.glob("*/management/commands/*.py")}
    lines = shell_lines(README)
    assert len(lines) >= 6
    for line in lines:
        words = [w for w in shlex.split(line) if not re.fullmatch(r"[A-Z_]+=.*", w)]
        if words[0] == "make":
            assert words[1] in targets, line
        else:
            assert words[:2] == [".venv/bin/python", "manage.py"] and words[2] in commands, line
    for link in re.findall(r"\]\(((?:docs/|BENCHMARKS)[^)#]*)", README):
        assert (ROOT / link).exists(), link
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README):
        assert (ROOT / image).is_file(), image


def test_your_own_content_is_import_then_sync_then_run():
    first, *three = own_content_commands()
    assert first == "make migrate"  # the database, once per boot: the three need it
    assert [shlex.split(c)[-3:] if "import_knowledge" in c else shlex.split(c)[-2:] for c in three] == [
        ["https://www.example.com/", "--into", "my-knowledge"], ["manage.py", "sync_knowledge"], ["make", "run"]]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 (our own loopback server)
        return response.read().decode()


@pytest.mark.django_db(transaction=True)
def test_the_readmes_own_content_commands_run_as_written(tmp_path):
    site = Site()
    threading.Thread(target=site.server.serve_forever, daemon=True).start()
    pdf = cv_pdf(tmp_path / "Profile.pdf")
    port = free_port()
    sd = connection.settings_dict
    env = dict(os.environ, DATABASE_URL=f"postgresql://{sd['USER']}:{sd['PASSWORD']}@{sd['HOST']}:{sd['PORT']}/"
               f"{sd['NAME']}", DJANGO_SETTINGS_MODULE="twinsite.settings", TWIN_PORT=str(port),
               TWIN_PROVIDER="offline", TWIN_ADMIN_PASSWORD="a-password-of-the-test")
    env.pop("TWIN_KNOWLEDGE_DIR", None)
    folder = tmp_path / "my-knowledge"

    def as_here(command: str) -> str:
        return (command.replace("Profile.pdf", str(pdf)).replace("https://www.example.com/", f"{site.base}/")
                .replace("my-knowledge", str(folder)))

    *setup, run = [as_here(c) for c in own_content_commands()]
    try:
        for command in setup:
            done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=300, check=False)
            assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        assert sorted(Document.objects.values_list("title", flat=True)) == [
            "About me", "Curriculum vitae Tamsin Okafor", "Lingewaard polder model", "Wat bodemvocht ons vertelt"]

        log = (tmp_path / "run.log").open("w")
        served = subprocess.Popen(["bash", "-c", run], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        try:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                with socket.socket() as sock:
                    if sock.connect_ex(("127.0.0.1", port)) == 0:
                        break
                assert served.poll() is None, (tmp_path / "run.log").read_text()
                time.sleep(0.3)
            page = get(f"http://127.0.0.1:{port}/")
            assert "Tamsin" in page  # the CV's name, now the owner's
            cv = Document.objects.get(kind="cv")
            assert "Riverwise" in get(f"http://127.0.0.1:{port}{public_url(cv.path, cv.url)}")
        finally:
            os.killpg(served.pid, signal.SIGINT)  # Ctrl-C, as the owner stops it
            try:
                served.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(served.pid, signal.SIGKILL)
                served.wait()
        assert "Twinsite: http://127.0.0.1:" in (tmp_path / "run.log").read_text()
    finally:
        site.server.shutdown()
        site.server.server_close()
