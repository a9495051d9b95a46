"""Training and validation of UniMatch's learned offline models. The metric never imports
this package at inference time; it needs the ``local`` extra (scikit-learn, torch)."""
