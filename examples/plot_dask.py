"""
=======================================
Scaling out with Dask: the same results
=======================================

psdmetric's learners are ordinary scikit-learn estimators, so Dask spreads them over a
cluster without any change to the learners (see :ref:`dask`). This example runs the
three patterns of that page on a local cluster and checks each against the plain,
single-process result:

1. a grid search over a psdmetric pipeline, with the fits sent to the cluster by
   joblib's ``dask`` backend;
2. an online learner trained block by block on a Dask array by
   :class:`dask_ml.wrappers.Incremental`;
3. ``transform`` of a Dask array, block by block, through
   :class:`dask_ml.wrappers.ParallelPostFit`.

The cluster here is a :class:`~distributed.LocalCluster` of two worker processes on
this machine. On a real cluster, replace it by the scheduler's address,
``Client("tcp://scheduler.example.org:8786")`` (or a cluster object from
dask-jobqueue, dask-kubernetes, ...): nothing else changes. The workers need
psdmetric installed, the same version as the client.
"""

# %%
# The cluster and the data: the wine data, standardised, rows shuffled once so that
# every block of 45 rows holds several samples of each class.
import logging

import dask.array as da
import joblib
import matplotlib.pyplot as plt
import numpy as np
from dask_ml.wrappers import Incremental, ParallelPostFit
from distributed import Client, LocalCluster
from sklearn.base import clone
from sklearn.datasets import load_wine
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from psdmetric import LogDet, OnlineLogDet

cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                       dashboard_address=None, silence_logs=logging.ERROR)
client = Client(cluster)

X, y = load_wine(return_X_y=True)
X = StandardScaler().fit_transform(X)
order = np.random.RandomState(0).permutation(len(y))
X, y = X[order], y[order]

# %%
# 1. Grid search. The same ``GridSearchCV``, once with ``n_jobs=1`` in this process
# and once with its fits sent to the cluster; the scores and the selected metric are
# identical.
pipeline = Pipeline([("learner", LogDet(random_state=0)), ("knn", KNeighborsClassifier(3))])
grid = {"learner__gamma": [0.01, 0.1, 1.0, 10.0], "knn__n_neighbors": [1, 3, 5]}
single = GridSearchCV(pipeline, grid, cv=5).fit(X, y)
# ``scatter`` sends the data to the workers once, not with every fit.
with joblib.parallel_config(backend="dask", scatter=[X, y]):
    spread = GridSearchCV(pipeline, grid, cv=5, n_jobs=-1).fit(X, y)

print(f"best parameters: {spread.best_params_}, accuracy {spread.best_score_:.4f}")
print("same scores as in one process:",
      np.array_equal(single.cv_results_["mean_test_score"],
                     spread.cv_results_["mean_test_score"]))
print("same learned metric:",
      np.array_equal(single.best_estimator_["learner"].components_,
                     spread.best_estimator_["learner"].components_))


# %%
# 2. An online learner on a Dask array of four blocks. ``Incremental`` calls
# ``partial_fit`` on each block in order (``shuffle_blocks=False``), which is what
# calling it by hand on the same blocks does. ``Incremental`` asks for a scorer
# because a transformer has no ``score``: 3-NN accuracy in the learned space.
def knn_accuracy(learner, X, y):
    return KNeighborsClassifier(3).fit(learner.transform(X), y).score(learner.transform(X), y)


learner = OnlineLogDet(random_state=0)
chunk = 45
X_blocks = da.from_array(X, chunks=(chunk, X.shape[1]))
y_blocks = da.from_array(y, chunks=chunk)
online = Incremental(clone(learner), scoring=knn_accuracy, shuffle_blocks=False)
online.fit(X_blocks, y_blocks)

by_hand = clone(learner)
for start in range(0, len(y), chunk):
    by_hand.partial_fit(X[start:start + chunk], y[start:start + chunk])
print(f"{X_blocks.numblocks[0]} blocks; same metric as partial_fit by hand:",
      np.allclose(online.estimator_.get_mahalanobis_matrix(),
                  by_hand.get_mahalanobis_matrix(), rtol=0, atol=1e-12))

# %%
# 3. ``transform`` of a Dask array. ``ParallelPostFit`` fits in memory as usual and
# makes ``transform`` lazy and blockwise; computing it on the cluster gives the same
# rows as transforming the whole array at once.
reducer = ParallelPostFit(LogDet(n_components=2, random_state=0)).fit(X, y)
embedded = reducer.transform(X_blocks)
print(f"lazy result: {type(embedded).__name__} in {embedded.numblocks[0]} blocks")
embedded = client.compute(embedded).result()
print("same rows as in memory:",
      np.array_equal(embedded, reducer.estimator.transform(X)))

# %%
# The embedding computed on the cluster, coloured by cultivar.
fig, ax = plt.subplots(figsize=(5, 4.5))
ax.scatter(embedded[:, 0], embedded[:, 1], c=y, cmap="viridis", s=12)
ax.set_title("wine, LogDet(n_components=2), transformed by the cluster", fontsize=10)
ax.set_xticks([])
ax.set_yticks([])
fig.tight_layout()
plt.show()

# %%
# Shut the cluster down.
client.close()
cluster.close()
