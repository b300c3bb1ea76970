"""Spark's automatic registration hook for the name ``quiver`` (``pyspark_quiver`` gives
``arrow``): Spark registers one ``DefaultSource`` per ``pyspark_*`` module."""

from quiver.spark.source import QuiverDataSource as DefaultSource

__all__ = ["DefaultSource"]
