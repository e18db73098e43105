"""The knowledge sync and the owner's import as background jobs (started from the admin, run by
``manage.py twin_worker``)."""

from __future__ import annotations

import json
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


@task(queue_name=OWNER_QUEUE)
def knowledge_import_task(job_id: int) -> str:
    """Read the job's sources; a preview (``dry_run``) records the plan as JSON, otherwise the
    files are written into the knowledge folder and synced. An uploaded file is removed once
    it is imported."""
    # the readers (trafilatura, pdfplumber, python-docx) load here, not in every process that starts
    from knowledge.importing.files import Status, owner_name, plan, write, write_owner
    from knowledge.importing.sources import read_sources

    args = Job.objects.get(pk=job_id).arguments

    def work(progress) -> str:
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
        }
        name = owner_name(reading.docs, root)
        result["owner"] = name
        if not args.get("dry_run"):
            result["written"] = write(entries, root)
            if name:
                write_owner(name, root)
            if result["written"]:
                report = knowledge_sync(root=root, embedders=get_embedders(),
                                        progress=lambda done, total: progress(done, total, "chunks embedded"))
                result["sync"] = str(report)
            for upload in args.get("uploads", []):
                Path(upload).unlink(missing_ok=True)
        return json.dumps(result, ensure_ascii=False)

    return job_run(job_id=job_id, work=work)
