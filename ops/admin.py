"""The jobs the owner started from the admin (knowledge sync, eval runs): progress and outcome."""

from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html

from ops.models import ACTIVE, Job
from twinsite.admin_base import ReadOnlyAdmin


def progress_html(job: Job) -> str:
    """A native progress bar with the numbers beside it (no script: the list reloads itself)."""
    if job.status == Job.Status.QUEUED:
        return "waiting for the worker"
    if not job.total:
        return job.note or ("-" if job.status != Job.Status.RUNNING else "starting")
    return format_html('<progress value="{}" max="{}"></progress> {}/{} {}', job.done, job.total, job.done,
                       job.total, job.note)


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "status", "progress", "requested_by", "created_at", "started_at", "finished_at",
                    "duration")
    list_filter = ("kind", "status")
    fields = ("kind", "status", "progress", "arguments", "requested_by", "task_id", "created_at", "started_at",
              "finished_at", "heartbeat_at", "result_text", "error")
    readonly_fields = fields
    change_list_template = "admin/ops/job/change_list.html"
    change_form_template = "admin/ops/job/change_form.html"

    @admin.display(description="progress")
    def progress(self, obj: Job) -> str:
        return progress_html(obj)

    @admin.display(description="duration")
    def duration(self, obj: Job) -> str:
        if obj.started_at is None:
            return "-"
        end = obj.finished_at or obj.heartbeat_at or obj.started_at
        return f"{(end - obj.started_at).total_seconds():.1f} s"

    @admin.display(description="result")
    def result_text(self, obj: Job) -> str:
        return format_html("<pre>{}</pre>", obj.result) if obj.result else "-"

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # the record of who ran what

    def changelist_view(self, request, extra_context=None):
        active = Job.objects.filter(status__in=ACTIVE).exists()
        return super().changelist_view(request, {**(extra_context or {}), "refresh": active})

    def change_view(self, request, object_id, form_url="", extra_context=None):
        active = Job.objects.filter(pk=object_id if str(object_id).isdigit() else 0, status__in=ACTIVE).exists()
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), "refresh": active})
