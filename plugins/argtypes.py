"""argparse `type=` functions shared by the command line and the benchmark scripts, so a bad
flag is a one-line usage error before any work starts."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable


def positive_int(text: str) -> int:
    """An integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {value}")
    return value


def seed_int(text: str) -> int:
    """A seed: an integer in [0, 2**63), the range numpy and torch both take."""
    return _seed_below(text, 63)


def seed32_int(text: str) -> int:
    """A seed in [0, 2**32), the range scikit-learn's `random_state` takes."""
    return _seed_below(text, 32)


def _seed_below(text: str, bits: int) -> int:
    """An integer in [0, 2**bits), else argparse's error naming the range."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not 0 <= value < 2**bits:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 2**{bits}), got {text!r}")
    return value


def int_list(text: str) -> list[int]:
    """Comma-separated integers >= 1."""
    values = [positive_int(s) for s in text.split(",") if s.strip()]
    if not values:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers >= 1, got {text!r}")
    return values


def float_list(text: str) -> list[float]:
    """Comma-separated positive finite numbers."""
    values = [positive_float(s) for s in text.split(",") if s.strip()]
    if not values:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive numbers, got "
                                         f"{text!r}")
    return values


def ints_at_least(minimum: int, maximum: int | None = None) -> Callable[[str], list[int]]:
    """A type for a non-empty comma list of integers >= `minimum` (and <= `maximum` where
    given; whole floats like 1e3 taken)."""

    def parse(text: str) -> list[int]:
        try:
            values = [int(float(part)) for part in text.split(",") if part.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected integers like 20,40") from None
        if not values or min(values) < minimum:
            raise argparse.ArgumentTypeError(f"{text!r}: expected integers of at least "
                                             f"{minimum}")
        if maximum is not None and max(values) > maximum:
            raise argparse.ArgumentTypeError(f"{text!r}: expected integers of at most "
                                             f"{maximum}")
        return values

    return parse


def choice_list(known: Iterable[str]) -> Callable[[str], list[str]]:
    """A type for a non-empty comma list drawn from `known` (repeats dropped, order kept)."""
    known = tuple(known)

    def parse(text: str) -> list[str]:
        values = list(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
        bad = [v for v in values if v not in known]
        if bad or not values:
            what = f"unknown {', '.join(map(repr, bad))}" if bad else "empty list"
            raise argparse.ArgumentTypeError(f"{what}; use a comma list of {', '.join(known)}")
        return values

    return parse


def native_option(text: str) -> tuple[str, bool | int | float | str]:
    """NAME=VALUE for a solver's own option; VALUE read as true/false, an integer, a number,
    else kept as text (HiGHS's solver=ipm, presolve=off)."""
    name, sep, raw = text.partition("=")
    if not sep or not name.strip() or not raw.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE (e.g. limits/nodes=100), "
                                         f"got {text!r}")
    raw = raw.strip()
    if raw.lower() in ("true", "false"):
        return name.strip(), raw.lower() == "true"
    for kind in (int, float):
        try:
            return name.strip(), kind(raw)
        except ValueError:
            pass
    return name.strip(), raw
