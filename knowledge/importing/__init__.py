"""Owners' own material into knowledge files: ``manage.py import_knowledge`` and the admin's Import.

A source (a PDF or DOCX file, a web address, a folder of a static-site generator's Markdown) is
read into ``Imported`` documents (``pdf``, ``word``, ``web``, ``ssg``), each given a kind
(``kinds``), and ``files`` plans and writes them as Markdown with the front matter the sync
reads, remembering what it wrote so that an owner's later edit is never overwritten unasked.
"""
