"""Build hooks of Parallelism Atlas. Only :mod:`hooks.entry` is named in ``mkdocs.yml``."""
