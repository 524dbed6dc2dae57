"""Team stores on PostgreSQL: the second backend of the index and the state plane.

A store whose configuration names a database (``MEMSIFT_DATABASE_URL``, or ``[database] url``
in ``.memsift/config.toml``) keeps its index and state plane in one schema of that database
instead of in ``.memsift/*.db``; the files stay the source of truth. The arms carry their
PostgreSQL SQL beside their SQLite SQL (``engine.arms``), and the assembler, the scope, the
placeholders and the explanation are the same on both backends.

The modules here import the driver (psycopg) only when a store uses PostgreSQL, so a user of
the SQLite default pays nothing for them: ``target`` says whether a store does, ``driver``
connects, ``schema`` makes the tables, ``indexdb``/``indexer`` write the index, ``state`` the
state plane and ``search`` answers.
"""
