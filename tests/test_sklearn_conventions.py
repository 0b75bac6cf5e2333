"""The PMVB estimators follow scikit-learn's conventions and take any two class labels."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import check_is_fitted

import coplug.models
from coplug.learned.pmvb_features import FEATURE_NAMES
from coplug.learned.pmvb_predictors import PMVBPredictor, TorchMLPClassifier, load_predictor
from coplug.plugins.errors import InputError

ESTIMATORS = [
    TorchMLPClassifier(hidden=(16,), epochs=60),
    PMVBPredictor(),
    PMVBPredictor(kind="gbt", calibration="sigmoid"),
    PMVBPredictor(kind="mlp"),
]
SHIPPED = sorted(p for p in Path(coplug.models.__file__).parent.glob("pmvb_*")
                 if p.suffix in (".joblib", ".pt"))


@parametrize_with_checks(ESTIMATORS)
def test_scikit_learn_estimator_checks(estimator: BaseEstimator,
                                       check: Callable[[BaseEstimator], None]) -> None:
    check(estimator)


def _data(n: int = 80) -> tuple[np.ndarray, np.ndarray]:
    """Features and 0/1 labels from a noisy first column (both classes well represented)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, len(FEATURE_NAMES)))
    return X, (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
@pytest.mark.parametrize("labels", [(3, 7), ("no", "yes"), (False, True), (0.0, 1.0)])
def test_any_two_labels_give_the_probabilities_of_0_1(estimator: BaseEstimator,
                                                      labels: tuple) -> None:
    X, y = _data()
    expected = estimator.__sklearn_clone__().fit(X, y).predict_proba(X)
    classes = np.array(labels, dtype=object if isinstance(labels[0], str) else None)
    fitted = estimator.__sklearn_clone__().fit(X, classes[y])
    assert fitted.classes_.tolist() == list(labels)
    np.testing.assert_array_equal(fitted.predict_proba(X), expected)
    np.testing.assert_array_equal(fitted.predict(X), classes[expected.argmax(axis=1)])


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_one_or_three_classes_are_named_and_leave_it_unfitted(estimator: BaseEstimator) -> None:
    X, y = _data()
    with pytest.raises(InputError, match=r"only one class \('a'\)"):
        estimator.__sklearn_clone__().fit(X, np.full(len(y), "a"))
    with pytest.raises(InputError, match="Only binary classification is supported"):
        estimator.__sklearn_clone__().fit(X, np.arange(len(y)) % 3)
    failed = estimator.__sklearn_clone__()
    with pytest.raises(InputError, match="one class"):
        failed.fit(X, np.zeros(len(y)))
    with pytest.raises(NotFittedError):
        check_is_fitted(failed)


def test_predict_variables_needs_a_fit_on_0_1_labels() -> None:
    X, y = _data()
    assert PMVBPredictor().fit(X, y).predict_variables(None, []).shape == (0,)
    with pytest.raises(InputError, match=r"fitted on 0/1 labels; this one was fitted on \[3, 7\]"):
        PMVBPredictor().fit(X, np.array([3, 7])[y]).predict_variables(None, [])


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_checkpoints_predict_what_their_model_does(path: Path) -> None:
    predictor = load_predictor(path)
    X = np.random.default_rng(0).normal(size=(50, len(FEATURE_NAMES)))
    proba = predictor.predict_proba(X)
    assert predictor.classes_.tolist() == [0, 1]
    np.testing.assert_array_equal(proba, predictor.model_.predict_proba(X))
    np.testing.assert_array_equal(predictor.predict(X), (proba[:, 1] > 0.5).astype(int))
    with pytest.raises(InputError, match="fitted on 12 features"):
        predictor.predict_proba(X[:, :5])
