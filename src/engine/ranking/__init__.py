"""How a search ranks, as data and pure functions: the fused statement's contract, the
arms' rules, the assembler, the shared scope filter, query text and the dates a query names.
No database driver is imported here (tests/engine/test_import_rules.py).
"""
