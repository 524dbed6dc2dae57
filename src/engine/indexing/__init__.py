"""Bringing an index in step with the files: the pure pipeline, the one indexing loop both
backends write through, incremental runs, the watcher that keeps a running process fresh, and
the embedder.
"""
