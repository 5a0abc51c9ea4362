"""Scale-out on Dask: the results on a 2-process LocalCluster equal the single-process ones.

dask, distributed and dask-ml are the optional ``dask`` extra; without them the module
is skipped. One cluster (two worker processes, one thread each) serves every test.
"""

import inspect
import logging

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import psdmetric
from psdmetric import LogDet

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
dask_ml_wrappers = pytest.importorskip("dask_ml.wrappers")
joblib = pytest.importorskip("joblib")


def _online_learners():
    """Exported metric learners (with ``transform``) that have ``partial_fit``."""
    return [name for name in psdmetric.__all__
            if inspect.isclass(getattr(psdmetric, name))
            and hasattr(getattr(psdmetric, name), "partial_fit")
            and hasattr(getattr(psdmetric, name), "transform")]


ONLINE_LEARNERS = _online_learners() or [pytest.param(
    None, marks=pytest.mark.skip(
        reason="no metric learner with partial_fit is exported in psdmetric.__all__ yet"))]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
        silence_logs=logging.ERROR)
    with distributed.Client(cluster) as dask_client:
        yield dask_client
    cluster.close()


@pytest.fixture(scope="module")
def scaled_wine():
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _knn_accuracy_in_learned_space(estimator, X, y):
    """A scorer for ``Incremental``, which insists on one when the estimator has no score."""
    return KNeighborsClassifier(3).fit(estimator.transform(X), y).score(
        estimator.transform(X), y)


def _workers_that_ran(task_stream):
    return {task["worker"] for task in task_stream.data}


def test_grid_search_on_the_cluster_equals_single_process(client):
    X, y = load_iris(return_X_y=True)
    pipeline = make_pipeline(StandardScaler(), LogDet(random_state=0),
                             KNeighborsClassifier(3))
    grid = {"logdet__gamma": [0.01, 1.0, 100.0]}
    single = GridSearchCV(pipeline, grid, cv=3).fit(X, y)
    with distributed.get_task_stream(client) as stream, joblib.parallel_backend("dask"):
        spread = GridSearchCV(pipeline, grid, cv=3, n_jobs=-1).fit(X, y)

    assert _workers_that_ran(stream)  # the fits ran in the cluster's worker processes
    assert _workers_that_ran(stream) <= set(client.scheduler_info()["workers"])
    keys = [key for key in single.cv_results_ if "time" not in key]
    assert keys == [key for key in spread.cv_results_ if "time" not in key]
    for key in keys:
        assert list(spread.cv_results_[key]) == list(single.cv_results_[key]), key
    assert np.array_equal(spread.best_estimator_[1].components_,
                          single.best_estimator_[1].components_)


def test_parallel_post_fit_transform_of_chunked_array_equals_in_memory(client, scaled_wine):
    X, y = scaled_wine
    in_memory = LogDet(random_state=0).fit(X, y)
    model = dask_ml_wrappers.ParallelPostFit(LogDet(random_state=0)).fit(X, y)
    chunked = da.from_array(X, chunks=(40, X.shape[1]))
    lazy = model.transform(chunked)
    assert isinstance(lazy, da.Array) and lazy.numblocks[0] == 5
    with distributed.get_task_stream(client) as stream:
        transformed = client.compute(lazy).result()

    assert len(stream.data) >= lazy.numblocks[0]
    assert _workers_that_ran(stream) <= set(client.scheduler_info()["workers"])
    np.testing.assert_array_equal(transformed, in_memory.transform(X))


@pytest.mark.parametrize("name", ONLINE_LEARNERS)
def test_incremental_on_chunked_array_equals_partial_fit_chunk_by_chunk(
        client, scaled_wine, name):
    X, y = scaled_wine
    # Shuffle the rows once so that every chunk holds several classes.
    order = np.random.RandomState(0).permutation(len(y))
    X, y = X[order], y[order]
    learner = getattr(psdmetric, name)()
    if "random_state" in learner.get_params():
        learner.set_params(random_state=0)
    chunk = 45
    assert len(y) > chunk

    by_hand = clone(learner)
    for start in range(0, len(y), chunk):
        by_hand.partial_fit(X[start:start + chunk], y[start:start + chunk])
    incremental = dask_ml_wrappers.Incremental(
        clone(learner), scoring=_knn_accuracy_in_learned_space, shuffle_blocks=False)
    with distributed.get_task_stream(client) as stream:
        incremental.fit(da.from_array(X, chunks=(chunk, X.shape[1])),
                        da.from_array(y, chunks=chunk))

    assert len(stream.data) > 0
    np.testing.assert_array_equal(incremental.estimator_.components_, by_hand.components_)
    np.testing.assert_array_equal(incremental.transform(X), by_hand.transform(X))
    assert incremental.score(X, y) == _knn_accuracy_in_learned_space(by_hand, X, y)
