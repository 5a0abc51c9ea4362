"""The ``psdmetric demo`` command."""

import io

import pytest
from sklearn.datasets import load_wine
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from psdmetric import LogDet
from psdmetric import __main__ as cli


def test_demo_rows_are_cross_validated_errors(monkeypatch):
    monkeypatch.setattr(cli, "DATASETS", {"wine": load_wine})
    output = io.StringIO()
    assert cli.demo(learners=("LogDet",), file=output) == 0
    rows = {line.split()[1]: line.split()[2] for line in output.getvalue().splitlines()
            if line.startswith("wine ")}
    X, y = load_wine(return_X_y=True)
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    for name, steps in [("Euclidean", []), ("LogDet", [LogDet(random_state=0)])]:
        model = make_pipeline(StandardScaler(), *steps, KNeighborsClassifier(5))
        error = 1.0 - cross_val_score(model, X, y, cv=folds).mean()
        assert rows[name] == f"{error:.2%}"


def test_demo_rejects_unknown_learner(capsys):
    with pytest.raises(SystemExit):
        cli.main(["demo", "--learners", "Euclid"])
    assert "invalid choice: 'Euclid'" in capsys.readouterr().err
