"""The feedback-generation experiment grid as a library: prompt configurations, context
budget, generation backends, resumable run files, scoring of runs, the report, and the
dataset as a training set (prompts and references for the rewards)."""
