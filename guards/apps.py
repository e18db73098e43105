from django.apps import AppConfig


class GuardsConfig(AppConfig):
    name = "guards"
