"""Equality by value for the instance and result dataclasses that hold numpy arrays, sparse
matrices or Pyomo components. The `==` dataclasses write compares fields as tuples, so an
array field raised ("the truth value of an array ... is ambiguous") and a Pyomo variable's
`==` built an expression; here arrays compare by value and Pyomo components by identity."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import scipy.sparse as sp


def same_value(a: Any, b: Any) -> bool:
    """Whether two field values are equal: arrays and sparse matrices by shape and entries
    (NaN equal to NaN), lists, tuples and dicts item by item, Pyomo components by identity."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return _same_array(a, b)
    if sp.issparse(a) or sp.issparse(b):
        return sp.issparse(a) and sp.issparse(b) and a.shape == b.shape and (a != b).nnz == 0
    if type(a).__module__.startswith("pyomo.") or type(b).__module__.startswith("pyomo."):
        return False  # distinct components (`is` above): their `==` is an expression
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same_value, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if dataclasses.is_dataclass(a) and not isinstance(a, type) and type(a) is type(b):
        return _same_fields(a, b)  # a Result among the fields: its dicts may hold arrays
    equal = a == b
    return bool(equal) if isinstance(equal, (bool, np.bool_)) else False


def _same_array(a: Any, b: Any) -> bool:
    """Two numpy arrays of one shape and equal entries (NaN equal to NaN where numeric)."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
        return False
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # equal_nan on an array of objects or strings
        return bool(np.array_equal(a, b))


class ValueEquality:
    """Mixin for a dataclass declared with `eq=False`: `==` field by field (`same_value`).
    Such objects are not hashable (equal ones must hash alike, and arrays do not hash)."""

    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return _same_fields(self, other)


def _same_fields(a: Any, b: Any) -> bool:
    """Two instances of one dataclass with every compared field `same_value`."""
    return all(same_value(getattr(a, f.name), getattr(b, f.name))
               for f in dataclasses.fields(a) if f.compare)
