"""Measurement: ``memsift eval`` and the benchmark results files, kept out of the product's path.

:mod:`engine.measure.evaluate` scores the real index-and-search path on a retrieval set,
:mod:`engine.measure.results_schema` defines the files under ``benchmarks/results`` (read back by
the docs plugin's Measured page), :mod:`engine.measure.fingerprint` stamps them with what a
ranking depended on and :mod:`engine.measure.typed_json` turns them into JSON and back.

Nothing that indexes, searches or serves imports this package: the command line imports it
inside ``memsift eval`` only, so ``memsift search``, ``index`` and ``serve`` never load it
(``tests/engine/test_import_rules.py`` holds that).
"""
