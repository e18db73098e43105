"""Approvals belong to one thread: backfill the new identity fields of existing rows."""

import datetime as dt
import hashlib
import json

from django.db import migrations, models


def _sha(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
                          .encode()).hexdigest()


def backfill(apps, schema_editor):
    PendingApproval = apps.get_model("approvals", "PendingApproval")
    ContactMessage = apps.get_model("approvals", "ContactMessage")
    seen: set = set()
    for approval in PendingApproval.objects.order_by("-created_at"):
        key = f"{approval.conversation_id}:{approval.tool_call_id}"
        approval.execution_call_id = "call_" + hashlib.sha256(f"{key}:approved".encode()).hexdigest()[:24]
        approval.arguments_sha256 = _sha(approval.arguments)
        approval.expires_at = approval.created_at + dt.timedelta(days=7)
        if approval.status == "pending" and approval.conversation_id in seen:
            approval.status = "expired"  # the old code shared rows; keep one pending per conversation
        if approval.status == "pending":
            seen.add(approval.conversation_id)
        approval.save()
    for message in ContactMessage.objects.select_related("approval"):
        approval = message.approval
        message.idempotency_key = hashlib.sha256(
            f"{approval.conversation_id}:{approval.tool_call_id}".encode()).hexdigest()
        message.save()


class Migration(migrations.Migration):

    dependencies = [("approvals", "0001_initial")]

    operations = [
        migrations.AlterField("pendingapproval", "tool_call_id", models.CharField(max_length=120)),
        migrations.AddField("pendingapproval", "execution_call_id", models.CharField(max_length=64, null=True)),
        migrations.AddField("pendingapproval", "arguments_sha256", models.CharField(max_length=64, default="")),
        migrations.AddField("pendingapproval", "expires_at", models.DateTimeField(null=True)),
        migrations.AlterField("pendingapproval", "status", models.CharField(
            choices=[("pending", "Pending"), ("approved", "Approved"), ("rejected", "Rejected"),
                     ("expired", "Expired")], db_index=True, default="pending", max_length=12)),
        migrations.AddField("contactmessage", "idempotency_key", models.CharField(max_length=64, null=True)),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
