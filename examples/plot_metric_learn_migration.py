"""
==============================================
Coming from metric-learn: a pair-data script
==============================================

A metric-learn 0.7.0 user's script on pair data — fit ITML on labelled pairs, tune
its slack ``gamma`` with :class:`~sklearn.model_selection.GridSearchCV` on pairs,
calibrate the decision threshold on validation pairs, measure the ROC AUC on held-out
pairs — run with psdmetric. The lines marked ``# metric-learn:`` show what they read
before: the import, the class (``ITML`` becomes ``PairsClassifier(LogDet())``, the
LogDet (ITML) learner of Kulis, Sustik & Dhillon (2009) wrapped to take pairs as
samples) and, because the slack now belongs to the wrapped learner, the grid's
parameter name (``gamma`` becomes ``learner__gamma``). Everything else is unchanged:
pairs of shape (n_pairs, 2, n_features), labels ±1, ``calibrate_threshold``,
``decision_function``, ``score`` and ``threshold_`` in learned (unsquared) distances.
"""

# %%
# Pairs of wine samples: similar when both samples are of the same cultivar.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_wine
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.preprocessing import StandardScaler

from psdmetric import LogDet, PairsClassifier  # metric-learn: from metric_learn import ITML

X, y = load_wine(return_X_y=True)
X = StandardScaler().fit_transform(X)
rng = np.random.RandomState(0)
index = rng.randint(0, len(X), size=(1200, 2))
index = index[index[:, 0] != index[:, 1]]
pairs = X[index]  # shape (n_pairs, 2, n_features)
y_pairs = np.where(y[index[:, 0]] == y[index[:, 1]], 1, -1)

pairs_train, pairs_test, y_train, y_test = train_test_split(
    pairs, y_pairs, test_size=0.3, stratify=y_pairs, random_state=0)
pairs_train, pairs_valid, y_train, y_valid = train_test_split(
    pairs_train, y_train, test_size=0.25, stratify=y_train, random_state=0)

# %%
# Tune the slack by cross-validation over pairs, scored by ROC AUC.
model = PairsClassifier(LogDet(random_state=0))  # metric-learn: ITML(random_state=0)
grid = {"learner__gamma": [0.01, 0.1, 1.0, 10.0]}  # metric-learn: {"gamma": [...]}
search = GridSearchCV(model, grid, scoring="roc_auc", cv=3)
search.fit(pairs_train, y_train)
best = search.best_estimator_
print("best parameters:", search.best_params_)

# %%
# Calibrate the threshold for the F1 score on validation pairs, then evaluate on the
# held-out pairs.
best.calibrate_threshold(pairs_valid, y_valid, strategy="f_beta", beta=1.0)
scores = best.decision_function(pairs_test)
auc = roc_auc_score(y_test, scores)
accuracy = best.score(pairs_test, y_test)
print(f"threshold (distance): {best.threshold_:.3f}")
print(f"held-out ROC AUC: {auc:.3f}, accuracy: {accuracy:.3f}")

# %%
# The ROC curve of the held-out pairs, with the calibrated operating point.
false_positive_rate, true_positive_rate, _ = roc_curve(y_test, scores)
predicted = best.predict(pairs_test)
fig, ax = plt.subplots(figsize=(4.5, 4))
ax.plot(false_positive_rate, true_positive_rate, label=f"LogDet, AUC = {auc:.3f}")
ax.plot(np.mean(predicted[y_test == -1] == 1), np.mean(predicted[y_test == 1] == 1), "o",
        label="calibrated threshold")
ax.set_xlabel("false positive rate")
ax.set_ylabel("true positive rate")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
