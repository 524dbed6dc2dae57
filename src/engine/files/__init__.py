"""A store on disk: its folder and settings, which files are memories, the one rule that
turns a typed path into a memory, and the memory file format (parsing, charsets, chunking,
byte-exact edits). No database driver is imported here.
"""
