"""Infrastructure shared by the toolkit's packages: errors, strict JSON and JSONL reading,
safe output writing, progress bars, text normalisation. It depends on no other package of
the project."""
