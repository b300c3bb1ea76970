"""The package version, at the bottom of the layers so that any module may read it."""

__version__ = "0.1.0"
