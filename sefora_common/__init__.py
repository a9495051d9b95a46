"""Infrastructure shared by the toolkit's packages: errors, strict JSON and JSONL reading,
safe output writing, progress bars, text helpers. It depends on no other package of the
project.

``__version__`` is the toolkit's version, defined here only: the distribution's metadata
(``pyproject.toml``) reads it, and every package re-exports it.
"""

__version__ = "0.1.0"
