"""docs/CONFIGURATION.md and .env.example list exactly the variables the code reads.

The code's reads are found by parsing every Python file of the project (not the tests) for the
typed readers of twinsite/env.py (``env_str("NAME", ...)`` and the rest) and for ``os.environ`` /
``os.getenv``; a secret reader (``env_secret``, ``env_token``, ``env_url(..., secret=True)``) also
reads ``NAME_FILE``. The shell scripts, the Makefile, compose.yaml and the tests read a few more
(``$TWIN_PORT``, ``TWIN_NO_SKIPS``): a variable the doc lists must be read by one of them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOT_PROJECT = {".venv", "var", "staticfiles", "tests", ".git", "node_modules"}
SECRET_READERS = {"env_secret", "env_token", "env_secret_key"}
NAME = re.compile(r"[A-Z][A-Z0-9_]*[A-Z0-9]")


def _call_name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _is_environ(node: ast.expr) -> bool:
    return ast.unparse(node) in ("os.environ", "environ")


def reads_in(source: str) -> tuple[set[str], set[str]]:
    """(names read, names read as secrets) by one Python module."""
    names: set[str] = set()
    secrets: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        name = None
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = _call_name(node.func)
            environ_call = isinstance(node.func, ast.Attribute) and _is_environ(node.func.value)
            if called.startswith("env_") or called == "getenv" or environ_call:
                name = node.args[0].value
                secret = called in SECRET_READERS or (called == "env_url" and any(
                    k.arg == "secret" and isinstance(k.value, ast.Constant) and k.value.value for k in node.keywords))
                if secret and isinstance(name, str):
                    secrets.add(name)
        elif isinstance(node, ast.Subscript) and _is_environ(node.value) and isinstance(node.slice, ast.Constant):
            name = node.slice.value
        elif (isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant)
              and any(_is_environ(c) for c in node.comparators)):
            name = node.left.value
        if isinstance(name, str) and NAME.fullmatch(name):
            names.add(name)
    if "def env_secret_key" in source:  # its SECRET_KEY is read inside, by name
        names.add("SECRET_KEY")
        secrets.add("SECRET_KEY")
    return names, secrets


def project_reads() -> tuple[set[str], set[str]]:
    names: set[str] = set()
    secrets: set[str] = set()
    for path in ROOT.rglob("*.py"):
        if NOT_PROJECT & set(path.relative_to(ROOT).parts):
            continue
        found, secret = reads_in(path.read_text(encoding="utf-8"))
        names |= found
        secrets |= secret
    return names, secrets | {"DATABASE_URL"} & names


def other_reads() -> set[str]:
    """What the shell scripts, make, compose and the tests read."""
    names: set[str] = set()
    for path in [*(ROOT / "scripts").iterdir(), ROOT / "Makefile", ROOT / "compose.yaml", ROOT / ".ci" / "run"]:
        if path.is_file() and path.suffix != ".py":
            names |= set(re.findall(r"\$\{?([A-Z][A-Z0-9_]+)", path.read_text(encoding="utf-8")))
    for path in (ROOT / "tests").rglob("*.py"):
        names |= reads_in(path.read_text(encoding="utf-8"))[0]
    return names


def documented(text: str) -> set[str]:
    """Every `NAME` in backticks that is a variable's name (upper case, with an underscore or a
    known single word)."""
    return {m for m in re.findall(r"`([A-Z][A-Z0-9_]+)`", text) if "_" in m or m in {"DEBUG", "PYTHON"}}


def test_reads_are_found():
    names, secrets = reads_in('import os\nfrom twinsite.env import env_int, env_secret, env_url\n'
                              'A = env_int("TWIN_A", 1)\nB = env_secret("TWIN_B")\n'
                              'C = os.environ.get("TWIN_C", "")\nD = "TWIN_D" in os.environ\n'
                              'E = env_url("TWIN_E", "", ("https",), "x", secret=True)\nF = os.environ["TWIN_F"]\n')
    assert names == {"TWIN_A", "TWIN_B", "TWIN_C", "TWIN_D", "TWIN_E", "TWIN_F"}
    assert secrets == {"TWIN_B", "TWIN_E"}


def test_the_doc_lists_every_variable_the_code_reads():
    names, secrets = project_reads()
    assert {"DEBUG", "SECRET_KEY", "TWIN_PROVIDER", "TWIN_PG_RUNTIME_DIR", "TWIN_OWNER_LANGUAGE"} <= names
    doc = documented((ROOT / "docs" / "CONFIGURATION.md").read_text(encoding="utf-8"))
    assert not names - doc, f"read by the code, missing from docs/CONFIGURATION.md: {sorted(names - doc)}"
    files = {f"{name}_FILE" for name in secrets}
    assert not files - doc, f"secrets that may be files, missing from docs/CONFIGURATION.md: {sorted(files - doc)}"


def test_the_doc_lists_nothing_that_is_not_read():
    names, secrets = project_reads()
    read = names | {f"{name}_FILE" for name in secrets} | other_reads()
    doc = documented((ROOT / "docs" / "CONFIGURATION.md").read_text(encoding="utf-8"))
    assert not doc - read, f"listed in docs/CONFIGURATION.md, read by nothing: {sorted(doc - read)}"


def test_env_example_agrees():
    """.env.example has a line ``NAME=`` (commented out: the default) for every variable the code
    reads, and none for a variable nothing reads."""
    names, _ = project_reads()
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    example = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", text, flags=re.MULTILINE))
    missing = names - example - {"DJANGO_SETTINGS_MODULE"}
    assert not missing, f"read by the code, no line in .env.example: {sorted(missing)}"
    unread = example - names - other_reads()
    assert not unread, f"in .env.example, read by nothing: {sorted(unread)}"
