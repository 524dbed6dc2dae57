"""arms_doc: an MkDocs plugin that renders memsift's arms reference page from the registry."""
