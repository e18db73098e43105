from django.apps import AppConfig


class DigestConfig(AppConfig):
    name = "digest"
    verbose_name = "owner's digest"
