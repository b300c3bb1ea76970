"""Filter pushdown: Spark's filters used to skip batches, files and partition directories.

Spark (4.1+) hands a reader the conjuncts of a query's filter (``EqualTo``,
``GreaterThan``, ``In``, ``IsNull``, ``Not(...)``, ...).  The source turns those it
understands into quiver predicates (:mod:`quiver.filters`) and uses them only to leave
out what cannot match: record batches whose footer statistics rule them out
(:mod:`quiver.ipc.statistics`) and hive partition directories whose values do.  It hands
every filter back to Spark as not handled, so Spark still applies each one to the rows it
reads and the results stay exact whatever is skipped.

Spark's comparisons differ from Arrow's in one place that matters here: NaN equals NaN
and is larger than any other value.  Statistics leave NaN out of min and max, so a float
column that holds NaN is never pruned by its bounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..filters import Predicate, _accepts, _comparable, _is_nan, batches_may_match

_COMPARISONS = {
    "EqualTo": "==",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
}


def to_predicate(spark_filter: Any) -> Predicate | None:
    """The quiver predicate of one Spark filter, or None when it has none."""
    kind = type(spark_filter).__name__
    if kind in _COMPARISONS:
        return Predicate(tuple(spark_filter.attribute), _COMPARISONS[kind], spark_filter.value)
    if kind == "In":
        return Predicate(tuple(spark_filter.attribute), "in", tuple(spark_filter.value))
    if kind == "IsNull":
        return Predicate(tuple(spark_filter.attribute), "is null")
    if kind == "IsNotNull":
        return Predicate(tuple(spark_filter.attribute), "is not null")
    if kind == "Not":
        inner = spark_filter.child
        inner_kind = type(inner).__name__
        if inner_kind == "EqualTo":
            return Predicate(tuple(inner.attribute), "!=", inner.value)
        if inner_kind == "IsNull":
            return Predicate(tuple(inner.attribute), "is not null")
        if inner_kind == "IsNotNull":
            return Predicate(tuple(inner.attribute), "is null")
    return None


def batches_to_read(predicates: Sequence[Predicate], layout: Any) -> list[bool] | None:
    """Which batches of a file may hold matching rows (None: all of them)."""
    stats = layout.statistics
    if not predicates or stats is None:
        return None
    names = {n.lower(): n for n in layout.schema.names}
    located = []
    for p in predicates:
        if len(p.path) != 1 or p.path[0].lower() not in names:
            continue
        name = names[p.path[0].lower()]
        dtype = _comparable(layout.schema.field(name).type)
        values = p.value if p.op in ("in", "not in") else (p.value,)
        # a value of another Python type than the file's column (a Spark value for a
        # column the policy converted, say) is not used to skip anything
        if all(_is_nan(v) or _accepts(dtype, v) for v in values):
            located.append(Predicate((name,), p.op, p.value))
    if not located:
        return None
    return batches_may_match([located], stats, layout.schema, nan_is_largest=True).tolist()


def partition_matches(predicates: Sequence[Predicate], values: dict[str, Any]) -> bool:
    """Whether a directory's partition values may satisfy every predicate on them."""
    for p in predicates:
        if len(p.path) != 1:
            continue
        name = next((k for k in values if k.lower() == p.path[0].lower()), None)
        if name is None:
            continue
        value = values[name]
        try:
            if not _value_holds(p, value):
                return False
        except TypeError:
            continue  # values that do not compare: keep the directory
    return True


def _spark_order(value: Any) -> Any:
    """A sort key with Spark's float order: NaN equals NaN and exceeds every number."""
    if isinstance(value, float) and value != value:
        return (1, 0.0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value)
    return value


def _value_holds(p: Predicate, value: Any) -> bool:
    if p.op == "is null":
        return value is None
    if p.op == "is not null":
        return value is not None
    if value is None:
        return False
    if p.op == "in":
        return any(_spark_order(value) == _spark_order(v) for v in p.value if v is not None)
    left, right = _spark_order(value), _spark_order(p.value)
    return {
        "==": left == right, "!=": left != right, "<": left < right,
        "<=": left <= right, ">": left > right, ">=": left >= right,
    }[p.op]
