"""Ensure the owner's admin account exists (``make run`` calls it every start)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from approvals.models import GeneratedPassword


class Command(BaseCommand):
    help = "Create the admin user from TWIN_ADMIN_USER/TWIN_ADMIN_PASSWORD if it does not exist."

    def handle(self, *args, **options) -> None:
        User = get_user_model()
        username = settings.TWIN_ADMIN_USER
        user = User.objects.filter(username=username).first()
        if user is not None:
            if settings.TWIN_ADMIN_PASSWORD and not user.check_password(settings.TWIN_ADMIN_PASSWORD):
                user.set_password(settings.TWIN_ADMIN_PASSWORD)
                user.save(update_fields=["password"])
                self.stdout.write(f"admin user {username!r}: password updated from TWIN_ADMIN_PASSWORD")
            return
        password = settings.TWIN_ADMIN_PASSWORD
        generated = not password
        if generated:
            password = secrets.token_urlsafe(12)
        user = User.objects.create_superuser(username=username, email="", password=password)
        if generated:
            # the hash it has now, to tell later whether it was changed (Getting started)
            GeneratedPassword.objects.create(user=user, password=user.password)
            # Printed once; it is not stored anywhere in clear text.
            self.stdout.write(self.style.WARNING(
                f"Created admin user {username!r} with generated password: {password}\n"
                f"Save it now. To reset it: .venv/bin/python manage.py changepassword {username} "
                "(or set TWIN_ADMIN_PASSWORD and run make run)."
            ))
        else:
            self.stdout.write(f"Created admin user {username!r} (password from TWIN_ADMIN_PASSWORD)")
