"""The knowledge sync and the owner's import as background jobs (started from the admin, run by
``manage.py twin_worker``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from django.conf import settings
from django.tasks import task

from knowledge.embedders import get_embedders
from knowledge.models import TaughtAnswer
from knowledge.services import knowledge_sync
from ops.models import Job
from ops.services import OWNER_QUEUE, job_run


@task(queue_name=OWNER_QUEUE)
def knowledge_sync_task(job_id: int) -> str:
    """Sync the knowledge folder, reporting embedding progress on the job."""

    def work(progress) -> str:
        report = knowledge_sync(root=settings.TWIN_KNOWLEDGE_DIR, embedders=get_embedders(),
                                progress=lambda done, total: progress(done, total, "chunks embedded"))
        return str(report)

    return job_run(job_id=job_id, work=work)


def plan_path(job_id: int) -> Path:
    """Where a preview keeps the files it would write (with the uploads: gone after a day)."""
    return settings.TWIN_IMPORT_DIR / f"plan-{job_id}" / "plan.json"


@task(queue_name=OWNER_QUEUE)
def knowledge_import_task(job_id: int) -> str:
    """A preview (``dry_run``) reads the job's sources, plans, and keeps the planned files (their
    text) beside the job (``plan_path``); applying (``preview``: that job's id) writes exactly
    those texts and syncs, never reading a source again. An uploaded file is removed once it is
    imported."""
    # the readers (trafilatura, pdfplumber, python-docx) load here, not in every process that starts
    from knowledge.importing.files import Status, owner_name, plan, save_plan
    from knowledge.importing.sources import read_sources

    args = Job.objects.get(pk=job_id).arguments

    def work(progress) -> str:
        if args.get("preview"):
            return _apply(args, progress)
        if not args.get("dry_run"):
            raise ValueError("an import writes only what its preview showed (arguments: preview, a job's id)")
        reading = read_sources(args["sources"], kind=args.get("kind") or None, lang=args.get("lang") or None,
                               max_pages=int(args.get("max_pages") or 50), public_only=True,
                               labels=args.get("labels") or {},
                               progress=lambda done, total, note: progress(done, total, f"reading {note}"))
        root = settings.TWIN_KNOWLEDGE_DIR
        entries = plan(reading.docs, root, taken_titles=set(TaughtAnswer.objects.values_list("question", flat=True)))
        shown = [e for e in entries if e.status != Status.SKIPPED]
        result = {
            "entries": [{"path": e.path, "status": str(e.status), "title": e.doc.title, "kind": e.doc.kind,
                         "sure": e.doc.kind_sure, "lang": e.doc.lang, "words": e.doc.words, "source": e.doc.source}
                        for e in shown],
            "skipped": [[s.source, s.reason] for s in reading.skipped]
            + [[e.doc.source, e.reason] for e in entries if e.status == Status.SKIPPED],
            "failed": [list(f) for f in reading.failed],
            "left_out": [[d.source, why, text] for d in reading.docs for why, text in d.left_out],
        }
        name = owner_name(reading.docs, root)
        result["owner"] = name
        save_plan(entries, name, root, plan_path(job_id))
        return json.dumps(result, ensure_ascii=False)

    return job_run(job_id=job_id, work=work)


def _apply(args: dict, progress) -> str:
    from knowledge.importing.files import apply_plan, load_plan, write_owner

    root = settings.TWIN_KNOWLEDGE_DIR
    saved = load_plan(plan_path(args["preview"]))
    if saved is None:
        raise FileNotFoundError("the preview's files are gone (applied already, or over a day old): import again")
    written, left = apply_plan(saved, root)
    # the sites of the preview are followed from now on (an uploaded file is gone once imported)
    preview = Job.objects.get(pk=args["preview"]).arguments
    sites = [source for source in preview.get("sources", []) if source not in preview.get("uploads", [])]
    if sites:
        from knowledge.importing.followed import remember

        remember(root, sites, kind=preview.get("kind") or None, lang=preview.get("lang") or None,
                 max_pages=int(preview.get("max_pages") or 50))
    result: dict = {"written": written, "changed_since_preview": left}
    if saved.get("owner") and not (root / "owner.yaml").exists():
        write_owner(saved["owner"], root)
    _synced(result, root, progress)
    shutil.rmtree(plan_path(args["preview"]).parent, ignore_errors=True)
    for upload in args.get("uploads", []):
        Path(upload).unlink(missing_ok=True)
    return json.dumps(result, ensure_ascii=False)


def _synced(result: dict, root: Path, progress) -> None:
    if result["written"]:
        report = knowledge_sync(root=root, embedders=get_embedders(),
                                progress=lambda done, total: progress(done, total, "chunks embedded"))
        result["sync"] = str(report)
