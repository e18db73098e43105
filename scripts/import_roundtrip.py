"""The importer measured on an eval owner: its Markdown rendered as a website and a two-column CV PDF
(scripts/render_owner.py), served on loopback, imported into an empty folder with
``manage.py import_knowledge``, synced into a scratch database and asked the owner's answer suite
with the offline provider, beside the same suite on the hand-written Markdown. Prints both scores
and, per original document, the imported file's title, kind, lang and url.

    .venv/bin/python scripts/import_roundtrip.py OWNER [--theme semantic|divs] [--keep DIR] [--no-evals]
        [--site URL --pdf CV.pdf]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twinsite.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402
import yaml  # noqa: E402

django.setup()

from evals.owners import owner_get, owner_run  # noqa: E402
from knowledge.content import read_folder  # noqa: E402


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("owner")
    parser.add_argument("--theme", default="semantic", choices=["semantic", "divs"])
    parser.add_argument("--keep", type=Path, help="import into this folder (default: a temporary one)")
    parser.add_argument("--no-evals", action="store_true", help="only import and compare the files")
    parser.add_argument("--site", help="import this site instead of rendering one (with --pdf): material "
                                       "made some other way, e.g. by a held-out renderer")
    parser.add_argument("--pdf", type=Path, help="the CV PDF that goes with --site")
    args = parser.parse_args()
    owner = owner_get(args.owner)
    work = Path(tempfile.mkdtemp(prefix=f"roundtrip-{owner.key}-"))
    target = args.keep or work / "imported"
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    py = sys.executable
    if args.site:
        subprocess.run([py, str(ROOT / "manage.py"), "import_knowledge", args.site, str(args.pdf), "--into",
                        str(target)], check=True)
    else:
        subprocess.run([py, str(ROOT / "scripts" / "render_owner.py"), str(owner.knowledge), str(work / "out"),
                        "--base-url", base, "--name", owner.name, "--theme", args.theme], check=True)
        server = subprocess.Popen([py, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d",
                                   str(work / "out" / "site")], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            _wait(port)
            subprocess.run([py, str(ROOT / "manage.py"), "import_knowledge", f"{base}/",
                            str(work / "out" / "cv.pdf"), "--into", str(target)], check=True)
        finally:
            server.terminate()
    titles = _compare(owner.knowledge, target)
    if args.no_evals:
        return 0
    suite = ["run_evals", "--suite", "answers", "--provider", "offline", "--dataset"]
    print(f"\n== hand-written Markdown ({owner.knowledge})", flush=True)
    owner_run(owner, [*suite, str(owner.answers)])
    # the same cases, citing each document by the title its imported file has
    data = yaml.safe_load(owner.answers.read_text(encoding="utf-8"))
    for case in data["cases"]:
        if case.get("docs"):
            case["docs"] = [titles.get(title, title) for title in case["docs"]]
    renamed = work / "answers.yaml"
    renamed.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    print(f"\n== imported ({target})", flush=True)
    owner_run(dataclasses.replace(owner, key=f"{owner.key}_imported", knowledge=target.resolve()),
              [*suite, str(renamed)])
    return 0


def _wait(port: int) -> None:
    for _ in range(50):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)


def _compare(original: Path, imported: Path) -> dict[str, str]:
    """Print each original document beside its imported file; return original -> imported title."""
    docs = {d.path: d for d in read_folder(imported)}
    by_path = {urlsplit(d.url).path: d for d in docs.values() if d.url}
    cv = next((d for d in docs.values() if d.kind == "cv"), None)
    titles: dict[str, str] = {}
    print("\n| original | title | kind | lang | url | imported file | title | kind | lang | url |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for doc in read_folder(original):
        if not doc.public:
            continue
        got = cv if doc.kind == "cv" else by_path.get(doc.url)
        cells = [doc.path, doc.title, doc.kind, doc.lang, doc.url]
        cells += [got.path, got.title, got.kind, got.lang, urlsplit(got.url).path or "-"] if got else ["(none)"] * 5
        print("| " + " | ".join(cells) + " |")
        if got:
            titles[doc.title] = got.title
    return titles


if __name__ == "__main__":
    sys.exit(main())
