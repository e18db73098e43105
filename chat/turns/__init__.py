"""The turn layer: who may start a turn (``admission``), running it through the graph and
streaming it (``run``), its record (``records``), the owner's decisions on contact requests and
the resume they set off (``decisions``, ``resume``), and turns a dead process left open
(``recovery``). Both transports, ``manage.py ask``, the evals and the worker call in here; the
resume task's dotted path stays ``chat.tasks.approval_resume_task`` (queued rows store it).
"""
