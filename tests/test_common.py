"""scikit-learn's estimator checks over every estimator the package exports."""

import inspect

from sklearn.base import BaseEstimator
from sklearn.utils.estimator_checks import parametrize_with_checks

import psdmetric

ESTIMATORS = [
    getattr(psdmetric, name)
    for name in psdmetric.__all__
    if inspect.isclass(getattr(psdmetric, name))
    and issubclass(getattr(psdmetric, name), BaseEstimator)
    and not inspect.isabstract(getattr(psdmetric, name))
    and getattr(psdmetric, name) is not psdmetric.MahalanobisMixin
]


def test_every_estimator_is_checked():
    assert "LogDet" in {estimator.__name__ for estimator in ESTIMATORS}


@parametrize_with_checks([estimator() for estimator in ESTIMATORS])
def test_sklearn_compatible(estimator, check):
    check(estimator)
