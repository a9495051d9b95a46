"""Command-line tools: build the dataset, parse annotated files, generate and evaluate feedback."""
