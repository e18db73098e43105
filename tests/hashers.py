"""The test run's password hasher: Django's PBKDF2 with 1,000 iterations instead of over a million.
A hash it writes names its iterations (``pbkdf2_sha256$1000$...``), so the servers the tests start,
on the product's settings, check it as any older hash (and raise its count at the first login)."""

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class QuickPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    iterations = 1000
