"""The knowledge part of the system prompt: a stable, cacheable prefix with a hard size bound.

For a typical owner (the sample is ~8k tokens) the prefix is the whole public knowledge base, as
the design intends: the model sees everything, providers cache it. It may never exceed
``TWIN_PREFIX_TOKENS``: above that it holds the owner's profile (about, CV, skills,
availability) and then the documents visitors' questions retrieved most over the last
``PREFIX_POPULARITY_DAYS`` days, whole documents in a fixed order up to the bound, and names the
documents left out so the model searches for them (``search_knowledge`` reaches every chunk).

Built once per process per knowledge version (``knowledge_version``) and per day (the
popularity ranking), so it is byte-identical between calls and costs one small
query per model call instead of reading every document.
"""

from __future__ import annotations

import datetime as dt
import re
import threading

from django.conf import settings
from django.db import connection
from django.utils import timezone

from knowledge.content import sha256
from knowledge.models import Document
from knowledge.watch import WATCH
from text.tokens import BOUND, approx_tokens

KIND_ORDER = ["about", "cv", "skills", "project", "article", "availability", "faq"]
PROFILE_KINDS = ("about", "cv", "skills", "availability")
PREFIX_POPULARITY_DAYS = 30

_lock = threading.Lock()


def bound_tokens(text: str) -> int:
    """A conservative token count for the bound (``text.tokens.BOUND``: real tokenizers give
    3-4 characters a token for English prose, fewer for Dutch, numbers and Markdown; the sample
    is ~8k either way)."""
    return approx_tokens(text, chars_per_token=BOUND)

_cache: dict[tuple, tuple[str, str]] = {}


def knowledge_version() -> str:
    """Changes whenever a document is added, changed or removed: a digest of the rows' physical
    versions (Postgres writes every change as a new row version with a new ``ctid`` and ``xmin``).
    Reads row headers only, never the bodies, so it costs the same whatever the documents hold.
    Read once per announced change (``knowledge.watch``), or per model call while the process
    hears none."""
    return WATCH.cached("knowledge_version", _read_version)


def _read_version() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT md5(coalesce(string_agg(ctid::text || xmin::text, ',' ORDER BY ctid), '')) "
                       "FROM knowledge_document")
        return cursor.fetchone()[0]


# The block a document is written as, and how to read it back: the offline twin reads the
# knowledge base from its prompt (chat.providers.offline.library), so format and reader live here.
# The heading of the note that names the documents a prefix over the bound leaves out.
LEFT_OUT = "# Not in this prompt"
# A block ends where the next one starts or the note of left-out documents does; a "# " line of
# the owner's own Markdown (a first-level heading, a comment in a code block) is part of the body.
_BLOCK = re.compile(r"^# (?P<title>[^\n]+)\n\[source: [^\n]*\]\n\[kind: (?P<kind>\w+); language: (?P<lang>\w+)\]\n"
                    rf"(?P<body>.*?)(?=^# [^\n]+\n\[source: |^{re.escape(LEFT_OUT)}\n|\Z)", re.MULTILINE | re.DOTALL)


def holds_everything(text: str) -> bool:
    """Whether a text that holds the prefix holds every public document (no note of left-out ones)."""
    return bool(_BLOCK.search(text)) and f"\n{LEFT_OUT}\n" not in f"\n{text}"


def prefix_blocks(text: str) -> list[tuple[str, str, str, str]]:
    """(title, kind, language, body) of each document block in a text that holds the prefix."""
    return [(m["title"].strip(), m["kind"], m["lang"], m["body"].strip()) for m in _BLOCK.finditer(text)]


def _block(doc: Document) -> str:
    source = f"source: {doc.title}" + (f" ({doc.url})" if doc.url else "")
    # what kind of document, in which language: a model (and the offline twin) can then list the
    # owner's projects or answer from the Dutch page in English, saying so
    return f"# {doc.title}\n[{source}]\n[kind: {doc.kind}; language: {doc.lang}]\n\n{doc.body.strip()}\n"


def _order(doc: Document) -> tuple:
    return (KIND_ORDER.index(doc.kind) if doc.kind in KIND_ORDER else 99, doc.path)


def retrieval_counts(days: int = PREFIX_POPULARITY_DAYS) -> dict[str, int]:
    """How often each document was among a turn's retrieved passages lately, by title."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT hit->>'document_title', count(*) FROM chat_agenttrace, "
            "jsonb_array_elements(CASE WHEN jsonb_typeof(retrieved) = 'array' THEN retrieved ELSE '[]' END) hit "
            "WHERE created_at >= %s GROUP BY 1", [timezone.now() - dt.timedelta(days=days)])
        return {title: count for title, count in cursor.fetchall() if title}


def build_prefix(documents: list[Document], bound: int, popularity: dict[str, int]) -> str:
    documents = sorted(documents, key=_order)
    blocks = [(doc, _block(doc)) for doc in documents]
    if bound_tokens("\n".join(block for _, block in blocks)) <= bound:
        return "\n".join(block for _, block in blocks)
    # Over the bound: the profile first, then the most retrieved, whole documents only.
    ranked = sorted(blocks, key=lambda item: (item[0].kind not in PROFILE_KINDS,
                                              -popularity.get(item[0].title, 0), _order(item[0])))
    note_budget = min(bound // 8, 2000)
    chosen: set[str] = set()
    used = note_budget
    for doc, block in ranked:
        cost = bound_tokens(block) + 1
        if used + cost <= bound:
            chosen.add(doc.title)
            used += cost
    kept = [block for doc, block in blocks if doc.title in chosen]
    left = [doc.title for doc, _ in blocks if doc.title not in chosen]
    note = (f"{LEFT_OUT}\nThese documents are not shown here; search the knowledge base "
            "(search_knowledge) for anything they may answer:\n")
    for listed, title in enumerate(left):
        line = f"- {title}\n"
        if bound_tokens(note + line) > note_budget - 10:
            note += f"- ... and {len(left) - listed} more\n"
            break
        note += line
    return "\n".join([*kept, note])


def knowledge_prefix_kept() -> tuple[str, str] | None:
    """``knowledge_prefix`` when it is kept for the knowledge as it is (no database), else None."""
    version = WATCH.peek("knowledge_version")
    if version is None:
        return None
    with _lock:
        return _cache.get(_key(version))


def _key(version) -> tuple:
    """What a kept prefix depends on: the knowledge's version, the token bound and the day."""
    return version, settings.TWIN_PREFIX_TOKENS, timezone.localdate().isoformat()


def knowledge_prefix() -> tuple[str, str]:
    """All public knowledge (or, over ``TWIN_PREFIX_TOKENS``, the part described above) as one
    Markdown text in a fixed order, and its sha256. Only public documents are in the tables, so
    drafts never reach it."""
    bound = settings.TWIN_PREFIX_TOKENS
    key = _key(knowledge_version())
    with _lock:
        cached = _cache.get(key)
    if cached is not None:
        return cached
    documents = list(Document.objects.only("title", "kind", "lang", "url", "body", "path"))
    total = bound_tokens("\n".join(_block(doc) for doc in documents))
    text = build_prefix(documents, bound, retrieval_counts() if total > bound else {})
    result = (text, sha256(text))
    with _lock:
        _cache.clear()  # one version at a time
        _cache[key] = result
    return result
