"""Spark's automatic registration hook for quiver's Arrow IPC source.

Spark imports every top-level module whose name starts with ``pyspark_`` and registers
its ``DefaultSource``; this one makes ``spark.read.format("arrow")`` work with no setup.
"""

from quiver.spark.source import ArrowDataSource as DefaultSource

__all__ = ["DefaultSource"]
