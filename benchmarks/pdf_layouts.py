"""Which PDF library reads a two-column CV: pypdf, pdfminer.six and pdfplumber beside the importer.

Four PDFs of two columns (BENCHMARKS.md, "Reading two-column PDFs"): the tests' reportlab CV
drawn column by column and drawn row by row (as a word processor draws a two-column table), and
the sample owner's and ruben's CVs as scripts/render_owner.py prints them through Chromium. For
each, every paragraph of the main column that wraps over two lines or more is looked for whole in
the library's text (whitespace aside): a paragraph found cut is one the columns interleaved or a
page break split. Page footers left in the text are counted too.

    .venv/bin/python -m benchmarks.pdf_layouts
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import frontmatter
import pdfplumber
from pdfminer.high_level import extract_text as pdfminer_text
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from knowledge.importing.pdf import read_pdf  # noqa: E402
from tests.knowledge.importing.makers import ROLES, cv_pdf  # noqa: E402


def _norm(text: str) -> str:
    return " ".join(text.replace("-\n", "-").split())


def _readers():
    return {
        "pypdf": lambda p: "\n".join(page.extract_text() for page in PdfReader(p).pages),
        "pdfminer.six": pdfminer_text,
        "pdfplumber (extract_text)": lambda p: "\n".join(page.extract_text() or "" for page in
                                                         pdfplumber.open(p).pages),
        "importer (pdfplumber words)": lambda p: read_pdf(Path(p)).body,
    }


def _cases(work: Path) -> list[tuple[str, Path, list[str]]]:
    reportlab = [text for *_, text in ROLES]
    cases = [("reportlab, columns", cv_pdf(work / "a.pdf"), reportlab),
             ("reportlab, rows", cv_pdf(work / "b.pdf", order="rows"), reportlab)]
    for owner, folder in (("sample", ROOT / "knowledge" / "content"), ("ruben", ROOT / "evals/owners/ruben/content")):
        out = work / owner
        subprocess.run([sys.executable, str(ROOT / "scripts" / "render_owner.py"), str(folder), str(out),
                        "--base-url", "http://127.0.0.1:9"], check=True, capture_output=True)
        cv = next(p for p in sorted(folder.rglob("*.md")) if frontmatter.load(p).metadata.get("kind") == "cv")
        body = re.sub(r"^#.*$", "", frontmatter.load(cv).content, flags=re.M)
        paragraphs = [p for p in re.split(r"\n\s*\n", body) if p.strip() and not p.lstrip().startswith(("|", "-"))
                      and len(p.split()) >= 25]
        cases.append((f"{owner}, Chromium", out / "cv.pdf", paragraphs))
    return cases


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cases = _cases(Path(tmp))
        print("| library | " + " | ".join(name for name, _, _ in cases) + " | footers left |")
        print("|---|" + "---|" * (len(cases) + 1))
        for library, read in _readers().items():
            cells, footers = [], 0
            for _, path, paragraphs in cases:
                text = read(str(path))
                flat = _norm(re.sub(r"\*\*|__", "", text))
                whole = sum(_norm(p) in flat for p in paragraphs)
                cells.append(f"{whole}/{len(paragraphs)}")
                footers += len(re.findall(r"\b(Page|Pagina) \d+ (of|van) \d+", text))
            print(f"| {library} | " + " | ".join(cells) + f" | {footers} |")


if __name__ == "__main__":
    main()
