"""The SQLite backend: a store's index in ``.memsift/index.db`` and its state plane in
``.memsift/state.db``, reached through :func:`engine.backend.open_backend` (see
:mod:`engine.sqlite.backend`)."""
