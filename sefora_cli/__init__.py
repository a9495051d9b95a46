"""The ``sefora`` command: one module per command group, each thin over the libraries."""
