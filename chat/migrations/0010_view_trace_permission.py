from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("chat", "0009_feedback_comments_masked"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="agenttrace",
            options={"ordering": ["-created_at"],
                     "permissions": [("view_trace", "Can see turn traces and operational details")]},
        ),
    ]
