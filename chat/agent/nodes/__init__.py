"""The seven nodes, one module per step: ``guard`` (``guard_input``, ``refuse``), ``generate``,
``execute`` (``execute_tools``), ``approval`` (``queue_approval``, ``request_approval``) and
``verify``. Only ``generate`` talks to a model; the rest is deterministic Python that fails
closed. The wiring and the routers are in ``chat.agent.graph``."""
