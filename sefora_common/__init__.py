"""Infrastructure shared by the toolkit's packages: errors, JSONL reading, safe output
writing, text normalisation. It depends on no other package of the project.

``__version__`` is the toolkit's version, defined here only: the distribution's metadata
(``pyproject.toml``) reads it, and every package re-exports it.
"""

__version__ = "0.1.0"
