from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "ops"
    verbose_name = "operations"

    def ready(self) -> None:
        from ops import checks  # noqa: F401  (registers the system checks)
