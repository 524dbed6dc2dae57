"""The SQLite backend: a store's index in ``.memsift/index.db`` and its state plane in
``.memsift/state.db``, reached through :func:`engine.backend.open_backend` (see
:mod:`engine.sqlite.backend`).

The only package that imports apsw and sqlite-vec (``tests/engine/test_import_rules.py``
holds it to that): the surfaces catch :class:`engine.errors.DatabaseError` and, as their last
net, :data:`engine.sqlite.errors.DRIVER_ERRORS`, and the docs plugin prepares statements
through :mod:`engine.sqlite.prepare`.
"""
