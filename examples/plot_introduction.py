"""
Introduction: learn a metric, improve k-nearest neighbours
==========================================================

k-nearest neighbours classify a point by the labels of its nearest training points,
so they are only as good as the distance they use. The Euclidean distance weighs
every feature alike, noise included. A metric learner finds a Mahalanobis distance
:math:`d_M(x, x') = \\sqrt{(x - x')^\\top M (x - x')}` under which points of one class
are close and points of different classes are far apart.

Every psdmetric learner is a scikit-learn transformer: it maps ``X`` to ``X Lᵀ`` with
:math:`M = L^\\top L`, so the Euclidean distance after it is the learned distance,
and it goes in a :class:`~sklearn.pipeline.Pipeline` before
:class:`~sklearn.neighbors.KNeighborsClassifier`.
"""

# %%
# Euclidean k-NN on the wine data
# -------------------------------
# 178 wines of three cultivars, 13 chemical measurements each, standardised.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_wine
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from psdmetric import LogDet, OnlineLogDet, VonNeumann

X, y = load_wine(return_X_y=True)
feature_names = load_wine().feature_names

euclidean = make_pipeline(StandardScaler(), KNeighborsClassifier())
error = 1 - cross_val_score(euclidean, X, y).mean()
print(f"Euclidean 5-NN error: {error:.3f}")

# %%
# A learned metric
# ----------------
# :class:`~psdmetric.LogDet` draws pairs of points from the labels — same-class pairs
# should be closer than a small distance, different-class pairs farther than a large
# one — and finds the matrix nearest the identity that satisfies them. Nothing else
# changes in the pipeline.
learned = make_pipeline(StandardScaler(), LogDet(random_state=0),
                        KNeighborsClassifier())
error = 1 - cross_val_score(learned, X, y).mean()
print(f"LogDet 5-NN error: {error:.3f}")

# %%
# The learned matrix
# ------------------
# After ``fit``, the learner exposes :math:`M` through ``get_mahalanobis_matrix()``.
# Its diagonal weighs the features; its off-diagonal entries couple them.
M = learned.fit(X, y)[1].get_mahalanobis_matrix()
fig, ax = plt.subplots(figsize=(5.5, 4.5), layout="constrained")
limit = np.abs(M).max()
image = ax.imshow(M, cmap="RdBu_r", vmin=-limit, vmax=limit)
ticks = range(len(feature_names))
ax.set_xticks(ticks, feature_names, rotation=90, fontsize=8)
ax.set_yticks(ticks, feature_names, fontsize=8)
ax.set_title("LogDet's Mahalanobis matrix, wine")
fig.colorbar(image, ax=ax)
plt.show()

# %%
# Other learners
# --------------
# The learners solve different problems (see :ref:`choosing`), but all of them plug in
# the same way. Test error of 5-NN, 5-fold cross-validation, default parameters:
learners = {"Euclidean": [], "LogDet": [LogDet(random_state=0)],
            "VonNeumann": [VonNeumann(random_state=0)],
            "OnlineLogDet": [OnlineLogDet(random_state=0)]}
errors = {}
for name, steps in learners.items():
    model = make_pipeline(StandardScaler(), *steps,
                          KNeighborsClassifier())
    errors[name] = 1 - cross_val_score(model, X, y).mean()
fig, ax = plt.subplots(figsize=(5.5, 2.5), layout="constrained")
colours = ["grey"] + ["tab:blue"] * 3
ax.barh(list(errors), list(errors.values()), color=colours)
ax.invert_yaxis()
ax.set_xlabel("5-NN test error (5-fold cross-validation)")
plt.show()
