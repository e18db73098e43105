"""Text tools of both languages that know no domain: the words of a text and which of them name
nothing (``words``), its names (``names``), a word's forms (``forms``), which language a text is in
(``language``), the English and Dutch names of languages and countries and the translated words
of institutions, fields and days (``counterparts``), amounts and dates (``numbers``), the word
lists kept as data (``lexicon``) and the one token estimate (``tokens``). Guards, knowledge, the
offline answerer and the evals use them; they import nothing of the project but each other.
"""
