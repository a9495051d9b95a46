"""Code shared by the toolkit's packages: text helpers that the dataset and the metric both use."""
