"""Static files in production: WhiteNoise's compressed, hashed copies made by ``collectstatic``."""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    """CSS references are rewritten to hashed names; JavaScript ``sourceMappingURL`` comments are
    left alone: vendored minified files name source maps that are not shipped (markdown-it's),
    and Django's rewrite would fail ``collectstatic`` on them."""

    patterns = tuple((glob, rules) for glob, rules in CompressedManifestStaticFilesStorage.patterns if glob != "*.js")
