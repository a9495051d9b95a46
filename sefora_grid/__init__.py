"""The feedback-generation experiment grid as a library: prompt configurations, context
budget, generation backends, resumable run files, scoring of runs and the report."""
