"""`cached_property`: functools' without the lock Python 3.10 and 3.11 hold around it.

There, one RLock per decorated method is shared by every instance and held while the value
is computed: a process forked meanwhile by another thread (`race` beside a solve) inherited
it held and its racer waited for good. Python 3.12 dropped the lock; this is its behaviour
on every version: the value is computed on first access and stored in the instance's
`__dict__`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class cached_property(Generic[T]):  # noqa: N801  (named as functools names it)
    """A non-data descriptor storing `func(instance)` under its name on first access."""

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.attrname = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.attrname = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = self.func(instance)
        instance.__dict__[self.attrname] = value
        return value
