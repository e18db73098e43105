from django.contrib import admin

from evals.models import EvalCase, EvalRun


class EvalCaseInline(admin.TabularInline):
    model = EvalCase
    fields = ("case_id", "lang", "question", "passed", "expected", "got")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(EvalRun)
class EvalRunAdmin(admin.ModelAdmin):
    list_display = ("started_at", "kind", "passed", "metrics")
    list_filter = ("kind", "passed")
    readonly_fields = ("kind", "started_at", "finished_at", "config", "metrics", "passed")
    inlines = [EvalCaseInline]

    def has_add_permission(self, request) -> bool:
        return False
