"""Skip manifests using the manifest list's partition field summaries.

Spec, "Scan Planning": "Manifests that contain no matching files, determined using either
file counts or partition summaries, may be skipped." Each ``field_summary`` says whether
some partition of the manifest has a null (``contains_null``) or NaN (``contains_nan``)
value for the field, and bounds "for the non-null, non-NaN values in the partition
field, or null if all values are null or NaN", serialized with "the type of the
partition field data".

:class:`ManifestEvaluator` projects a row filter onto one partition spec (inclusively,
:mod:`.projection`) and compiles the result into closures over the summary list, once;
``may_contain(manifest)`` then costs a few comparisons per manifest. The decisions are
Iceberg Java's ``ManifestEvaluator``: ``False`` only when no partition of the manifest
can match, a manifest without summaries may always match, and an ``IN`` with more than
200 values is not evaluated.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any

from iceduck.errors import CorruptDataError, ValidationError
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.bound import BoundPredicate
from iceduck.spec.expressions.bounds import Domain, across_domains, is_nan
from iceduck.spec.expressions.compile import compile_expression
from iceduck.spec.expressions.predicates import (
    BooleanExpression,
    Op,
    rewrite_not,
)
from iceduck.spec.expressions.projection import inclusive_projection
from iceduck.spec.manifest import FieldSummary, ManifestFile
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema

#: Java's ``IN_PREDICATE_LIMIT``: larger sets are not compared with bounds.
IN_PREDICATE_LIMIT = 200

Summaries = Sequence[FieldSummary]
SummaryTest = Callable[[Summaries], bool]


def _all_null(s: FieldSummary, floating: bool) -> bool:
    """Every partition value is null: nulls seen, no bound (for floats: and no NaN seen)."""
    if not (s.contains_null and s.lower_bound is None):
        return False
    return s.contains_nan is False if floating else True


def _unique(s: FieldSummary, dom: Domain) -> Any:
    """The one value of the field in every partition of the manifest, or None if unknown."""
    if s.contains_null is not False or s.lower_bound is None or s.upper_bound is None:
        return None
    if dom.floating and s.contains_nan is not False:
        return None
    lower, upper = dom.decode(s.lower_bound), dom.decode(s.upper_bound)
    if lower != upper or (dom.floating and is_nan(lower)):
        return None
    return lower


def _range_leaf(op: Op, pos: int, dom: Domain, k: Any) -> SummaryTest:
    decode, floating = dom.decode, dom.floating
    if op in (Op.LT, Op.LT_EQ):
        strict = op is Op.LT

        def below(ss: Summaries) -> bool:
            raw = ss[pos].lower_bound
            if raw is None:
                return False  # all values are null (or NaN)
            lower = decode(raw)
            if floating and is_nan(lower):
                return True
            return lower < k if strict else lower <= k

        return below
    if op in (Op.GT, Op.GT_EQ):
        strict = op is Op.GT

        def above(ss: Summaries) -> bool:
            raw = ss[pos].upper_bound
            if raw is None:
                return False
            upper = decode(raw)
            if floating and is_nan(upper):
                return True
            return upper > k if strict else upper >= k

        return above

    def equal(ss: Summaries) -> bool:
        s = ss[pos]
        if s.lower_bound is None:
            return False
        lower = decode(s.lower_bound)
        if lower > k:  # False for a NaN bound: no pruning on it
            return False
        return s.upper_bound is None or not decode(s.upper_bound) < k

    return equal


def _in_leaf(pos: int, dom: Domain, values: frozenset[Any]) -> SummaryTest:
    if len(values) > IN_PREDICATE_LIMIT:
        return lambda ss: ss[pos].lower_bound is not None
    keys = sorted(dom.key(v) for v in values)
    decode, floating = dom.decode, dom.floating

    def within(ss: Summaries) -> bool:
        s = ss[pos]
        if s.lower_bound is None:
            return False
        lower = decode(s.lower_bound)
        upper = None if s.upper_bound is None else decode(s.upper_bound)
        if floating and (is_nan(lower) or (upper is not None and is_nan(upper))):
            return True
        i = bisect_left(keys, lower)
        return i < len(keys) and (upper is None or keys[i] <= upper)

    return within


def _prefix_leaf(op: Op, pos: int, dom: Domain, prefix: bytes) -> SummaryTest:
    n = len(prefix)
    if op is Op.STARTS_WITH:

        def starts(ss: Summaries) -> bool:
            s = ss[pos]
            if s.lower_bound is None:
                return False
            if s.lower_bound[:n] > prefix:
                return False
            return s.upper_bound is None or not s.upper_bound[:n] < prefix

        return starts

    def not_starts(ss: Summaries) -> bool:
        s = ss[pos]
        lower, upper = s.lower_bound, s.upper_bound
        if s.contains_null is not False or lower is None or upper is None:
            return True
        # every value starts with the prefix when both bounds do
        return not (len(lower) >= n and lower[:n] == prefix and len(upper) >= n and upper[:n] == prefix)

    return not_starts


def _leaf(pred: BoundPredicate, dom: Domain) -> SummaryTest:
    if pred.ref.accessor is None or len(pred.ref.accessor) != 1:
        raise ValidationError(f"{pred} does not reference a partition field")
    pos = pred.ref.accessor[0]
    op, floating = pred.op, dom.floating
    if op is Op.IS_NULL:
        return lambda ss: ss[pos].contains_null is not False
    if op is Op.NOT_NULL:
        return lambda ss: not _all_null(ss[pos], floating)
    if op is Op.IS_NAN:
        return lambda ss: ss[pos].contains_nan is not False and not _all_null(ss[pos], floating)
    if op is Op.NOT_NAN:
        # all values are NaN when NaN was seen, null was not, and there is no bound
        return lambda ss: (
            not (
                ss[pos].contains_nan is True
                and ss[pos].contains_null is False
                and ss[pos].lower_bound is None
            )
        )
    if op in (Op.LT, Op.LT_EQ, Op.GT, Op.GT_EQ, Op.EQ):
        return _range_leaf(op, pos, dom, dom.key(pred.literal))
    if op is Op.NOT_EQ:
        k = dom.key(pred.literal)
        return lambda ss: (u := _unique(ss[pos], dom)) is None or u != k
    if op is Op.IN:
        return _in_leaf(pos, dom, pred.literals or frozenset())
    if op is Op.NOT_IN:
        keys = frozenset(dom.key(v) for v in pred.literals or ())
        return lambda ss: (u := _unique(ss[pos], dom)) is None or u not in keys
    if op in (Op.STARTS_WITH, Op.NOT_STARTS_WITH):
        return _prefix_leaf(op, pos, dom, dom.key(pred.literal))
    raise ValidationError(f"unsupported operation {op}")


def _predicate(pred: BoundPredicate) -> SummaryTest:
    return across_domains(pred, _leaf, any)


def _refusal(expr: BooleanExpression) -> str:
    return f"cannot evaluate {expr!r} on partition summaries: bind it first"


class ManifestEvaluator:
    """Decides from its partition summaries whether a manifest may hold matching files.

    Build one per partition spec (manifests record the spec they were written with).
    """

    def __init__(self, spec: PartitionSpec, partition_filter: BooleanExpression) -> None:
        """``partition_filter`` is bound to the spec's partition struct (as projections return);
        use :meth:`for_row_filter` to start from a filter on table columns."""
        self.spec = spec
        self.partition_filter = rewrite_not(partition_filter)
        self._test = compile_expression(self.partition_filter, _predicate, _refusal)

    @classmethod
    def for_row_filter(
        cls, spec: PartitionSpec, schema: Schema, row_filter: BooleanExpression, case_sensitive: bool = True
    ) -> ManifestEvaluator:
        """Evaluator for a filter on table rows: its inclusive projection onto ``spec``."""
        return cls(spec, inclusive_projection(spec, schema, case_sensitive).project(row_filter))

    @classmethod
    def for_partition_filter(
        cls,
        spec: PartitionSpec,
        schema: Schema,
        partition_filter: BooleanExpression,
        case_sensitive: bool = True,
    ) -> ManifestEvaluator:
        """Evaluator for a filter written on partition field names (``event_time_day >= ...``)."""
        partition_schema = Schema(spec.partition_type(schema).fields)
        return cls(spec, bind(partition_schema, partition_filter, case_sensitive))

    def may_contain(self, manifest: ManifestFile) -> bool:
        """False only if no data or delete file in ``manifest`` can match the filter."""
        summaries = manifest.partitions
        if summaries is None:
            return True  # no partition information
        if manifest.partition_spec_id != self.spec.spec_id:
            raise ValidationError(
                f"manifest {manifest.manifest_path} was written with spec {manifest.partition_spec_id}, "
                f"not with spec {self.spec.spec_id} of this evaluator"
            )
        if len(summaries) != len(self.spec.fields):
            raise CorruptDataError(
                f"{len(summaries)} partition summaries for the {len(self.spec.fields)} fields of spec "
                f"{self.spec.spec_id}",
                manifest.manifest_path,
            )
        try:
            return self._test(summaries)
        except CorruptDataError as e:
            if e.path is not None:
                raise
            raise CorruptDataError(e.problem, manifest.manifest_path) from e

    __call__ = may_contain
