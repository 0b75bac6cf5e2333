"""Argument checks shared by the plugins and the formulations, each refusing a bad value
with an InputError that names the argument."""

from __future__ import annotations

import numpy as np

from coplug.plugins.errors import InputError


def check_flag(value: object, name: str) -> bool:
    """`value` as a bool (numpy's too), else InputError naming it: an array failed on its
    truth value, and a truthy string such as "no" would have meant True."""
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def refuse_masked(data: object, what: str, hint: str = "") -> None:
    """InputError for a numpy masked array: `np.asarray` drops its mask, so the masked-out
    entries would silently count as data."""
    if isinstance(data, np.ma.MaskedArray):
        raise InputError(f"{what}: masked arrays are not supported (their masked-out entries "
                         f"would count as data){hint}")
