"""A failed `fit` leaves a scikit-learn estimator unfitted, not half refitted."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sklearn.base import BaseEstimator


@contextmanager
def unfitted_on_failure(estimator: BaseEstimator) -> Iterator[None]:
    """Within the block a failure leaves `estimator` unfitted: every fitted attribute (named
    with a trailing underscore) removed. A refit on NaN features kept the old model beside
    the new classes_ and n_features_in_, so it passed check_is_fitted and then refused the
    data it had been fitted on."""
    try:
        yield
    except BaseException:
        for name in [n for n in vars(estimator) if n.endswith("_") and not n.startswith("_")]:
            delattr(estimator, name)
        raise
