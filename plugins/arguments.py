"""Argument checks shared by the plugins and the formulations, each refusing a bad value
with an InputError that names the argument."""

from __future__ import annotations

import math
import numbers

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


def detached(data: object, what: str) -> object:
    """A torch tensor's values as a numpy array (numpy refused a tensor that requires grad
    or lives on a GPU with torch's own error, naming no argument; bfloat16 is read as
    float32), or an InputError naming `what` for one numpy cannot hold (sparse, complex
    views, no data); anything else as given."""
    if type(data).__module__.split(".")[0] != "torch" or not hasattr(data, "detach"):
        return data
    try:
        tensor = data.detach().cpu()  # a tensor on the meta device has no data to copy
        if str(tensor.dtype) == "torch.bfloat16":  # no numpy dtype; float32 holds it
            tensor = tensor.float()
        return tensor.resolve_conj().resolve_neg().numpy()
    except (TypeError, RuntimeError) as exc:  # NotImplementedError included (meta)
        raise InputError(f"{what}: a torch tensor of dtype {data.dtype} and layout "
                         f"{data.layout} on {data.device} has no numpy form ({exc}); pass a "
                         "dense real tensor or array") from None


def check_exact_integers(values: np.ndarray, what: str) -> None:
    """Refuse integers float64 cannot represent (2**63 - 1 and 2**63 - 4 both become 2**63):
    the solves work in float64, so the answer would be right for other data than given. Only
    entries beyond 2**53 in magnitude can round, so only they are checked (in an object
    array, the Python integers among its entries)."""
    if values.dtype.kind == "O":
        big = next((v for v in values.reshape(-1) if _rounds_in_float64(v)), None)
        if big is not None:
            raise InputError(f"{what} holds the integer {big}, which float64 (in which it is "
                             "solved) cannot hold exactly; subtract a common offset or "
                             "rescale the data first")
        return
    if values.dtype.kind not in "iu" or values.size == 0:
        return
    big = values[(values > 2**53) | (values < -(2**53))] if values.dtype.itemsize > 4 else ()
    if len(big) == 0:
        return
    with np.errstate(invalid="ignore"):  # 2**63 cast back to int64 is out of range: inexact
        inexact = big[big.astype(np.float64).astype(values.dtype) != big]
    if inexact.size:
        x = inexact[0]
        raise InputError(f"{what} holds the integer {x}, which float64 (in which it is "
                         f"solved) rounds to {int(float(x))}; subtract a common offset or "
                         "rescale the data first")


def _rounds_in_float64(value: object) -> bool:
    """Whether `value` is an integer (not a bool) float64 does not hold exactly."""
    if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
        return False
    if -(2**53) <= value <= 2**53:
        return False
    exact = int(value)  # numpy's integers compare with floats in float64: convert first
    try:
        return int(float(exact)) != exact
    except OverflowError:
        return True


def finite_real(value: object) -> bool:
    """Whether `value` is a real number (not a bool) with a finite float64 value: an int
    past float range, such as 10**400, is not (np.isfinite raised TypeError on it)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False
