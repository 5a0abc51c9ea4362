"""scikit-learn's estimator checks over every estimator the package exports, and the
numpydoc sections every public name's docstring must have."""

import inspect
import re

import pytest
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
    and getattr(psdmetric, name) not in (psdmetric.PairsClassifier, psdmetric.TripletsClassifier,
                                         psdmetric.QuadrupletsClassifier)
]
# The meta-estimators on pairs, triplets and quadruplets, around a seeded learner of
# their kind.
META_ESTIMATORS = [psdmetric.PairsClassifier(psdmetric.LogDet(random_state=0)),
                   psdmetric.TripletsClassifier(psdmetric.PSDBoost(random_state=0)),
                   psdmetric.QuadrupletsClassifier(psdmetric.LSML(random_state=0))]


def test_every_estimator_is_checked():
    assert "LogDet" in {estimator.__name__ for estimator in ESTIMATORS}


# The searches fit a learner per candidate and fold: a small grid keeps the checks quick.
CHECK_PARAMS = {psdmetric.LogDetCV: {"gammas": (0.1, 1.0), "cv": 3},
                psdmetric.SCML: {"max_iter": 1000, "output_iter": 100},
                psdmetric.VonNeumannCV: {"gammas": (0.1, 1.0), "cv": 3}}


@parametrize_with_checks(
    [estimator(**CHECK_PARAMS.get(estimator, {})) for estimator in ESTIMATORS]
    + META_ESTIMATORS
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _sections(docstring):
    """numpydoc section titles: a line followed by a line of dashes as long."""
    lines = inspect.cleandoc(docstring or "").splitlines()
    return {title for title, rule in zip(lines, lines[1:])
            if title and re.fullmatch(r"-+", rule) and len(rule) == len(title)}


@pytest.mark.parametrize("name", psdmetric.__all__)
def test_public_docstring_has_the_numpydoc_sections(name):
    obj = getattr(psdmetric, name)
    required = {"Examples"}
    takes_arguments = bool(inspect.signature(obj).parameters)
    if takes_arguments:
        required.add("Parameters")
    if inspect.isclass(obj):
        required.add("Attributes")
    else:
        required.add("Returns")
    assert required <= _sections(obj.__doc__), f"{name} lacks {required - _sections(obj.__doc__)}"
