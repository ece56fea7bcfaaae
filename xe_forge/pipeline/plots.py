"""Kept for the report modules that import it from here: the figures live in xe_forge/plots.py, below
the pipeline, the batch report and the profile's roofline alike."""

from xe_forge.plots import new_figure, to_png

__all__ = ["new_figure", "to_png"]
