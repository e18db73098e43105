"""Text tools of both languages that know no domain: the topics visitors ask about (``topics``),
which language a text is in (``language``), the English and Dutch names of languages and
countries and the translated words of institutions, fields and days (``counterparts``) and the
one token estimate (``tokens``). Guards, knowledge, the offline answerer and the evals use them;
they import nothing of the project but each other.
"""
