"""Infrastructure shared by the toolkit's packages: errors, JSONL reading, safe output
writing, text normalisation. It depends on no other package of the project."""
