"""
===============================================
Two-dimensional embeddings of the digits vs PCA
===============================================

A metric learner is also a linear map, ``X ↦ X Lᵀ``: with two rows in ``L`` it draws
the data in the plane. This example embeds scikit-learn's handwritten digits in two
dimensions with PCA and with every psdmetric metric learner, and scores each embedding
by the accuracy of 3-nearest-neighbours *in the plane* on held-out digits.

The rank-2 LogDet learner shows a property of the LogDet divergence: it keeps the range
of its prior (Kulis, Sustik & Dhillon, 2009, Def. 4), and ``LogDet(n_components=2)``
starts from the top two principal directions. Its metric therefore lives in the PCA
plane, which it can only stretch and rotate. To let the labels choose the plane, learn a
full-rank metric first and then take the two principal directions of the *learned* space
(``learner → PCA`` below), which works for every learner. PSDBoost without shrinkage
(``shrinkage=0``, no Euclidean share of the trace) has the rank of its rank-one bases,
so stopping it after two bases gives a rank-2 metric chosen by the labels.
"""

# %%
# Data: 500 digits to learn from (a subsample, so that the slower online learners
# finish in seconds), the other 1,297 to score the embeddings on.
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from psdmetric import (
    MEG,
    POLA,
    DefiniteBoost,
    KernelPOLA,
    LogDet,
    OnlineLogDet,
    PSDBoost,
    VonNeumann,
)

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, train_size=500, stratify=y, random_state=0
)

# %%
# The embeddings compared: one line each, the steps that map the standardised
# data to two dimensions. Every learner runs with its defaults.
embeddings = {
    "PCA": [PCA(n_components=2)],
    "LogDet(n_components=2)": [LogDet(n_components=2, random_state=0)],
    "LogDet → PCA": [LogDet(random_state=0), PCA(n_components=2)],
    "VonNeumann → PCA": [VonNeumann(random_state=0), PCA(n_components=2)],
    "DefiniteBoost → PCA": [DefiniteBoost(random_state=0), PCA(n_components=2)],
    "MEG → PCA": [MEG(random_state=0), PCA(n_components=2)],
    "OnlineLogDet → PCA": [OnlineLogDet(random_state=0), PCA(n_components=2)],
    "POLA → PCA": [POLA(random_state=0), PCA(n_components=2)],
    "KernelPOLA → PCA": [KernelPOLA(random_state=0), PCA(n_components=2)],
    "PSDBoost, two bases": [
        PSDBoost(min_rank=1, shrinkage=0.0, max_iter=2, bases_per_iter=1,
                 random_state=0)],
}

# %%
# Fit each pipeline, embed the held-out digits, and score 3-NN in the plane.
# Several learners stop at ``max_iter`` here (PSDBoost on purpose, after two bases)
# and say so with a ConvergenceWarning; the embeddings are what is compared.
fig, axes = plt.subplots(2, 5, figsize=(20, 8.8))
for ax, (name, steps) in zip(axes.ravel(), embeddings.items()):
    model = make_pipeline(StandardScaler(), *steps, KNeighborsClassifier(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X_train, y_train)
    accuracy = model.score(X_test, y_test)
    embedded = model[:-1].transform(X_test)
    ax.scatter(embedded[:, 0], embedded[:, 1], c=y_test, cmap="tab10", s=6, alpha=0.6)
    for digit in range(10):
        centre = np.median(embedded[y_test == digit], axis=0)
        ax.text(*centre, str(digit), fontsize=13, weight="bold", ha="center", va="center",
                bbox={"boxstyle": "circle,pad=0.15", "fc": "white", "alpha": 0.7})
    ax.set_title(f"{name}\n3-NN test accuracy in 2-D: {accuracy:.1%}", fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])
    print(f"{name:<24} {accuracy:.3f}")
fig.tight_layout()
plt.show()

# %%
# PCA keeps the directions of largest variance, whatever the labels; the rank-2
# LogDet metric re-weights that same plane, so its neighbours barely change (the
# same holds for ``VonNeumann(n_components=2)``). The full-rank metrics pull
# same-class pairs together and push different-class pairs apart in all 64
# dimensions, and their two leading directions separate more digits. PSDBoost's
# first two bases are the top directions of its weighted triplet matrix after one
# and two restricted-master solves: a metric that is far from converged (its defaults
# add bases until the duality gap closes), and here the worst map of the row. For
# classification, keep more dimensions: the rank is a parameter (``n_components``,
# or PSDBoost's number of bases) to tune like any other.
