"""Twinsite: a digital twin for a professional's website."""

# The release, as pyproject.toml names it (tests/test_settings.py keeps the two equal): the
# knowledge importer's user agent carries it.
__version__ = "0.1.0"
