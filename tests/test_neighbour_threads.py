"""The per-class neighbour queries of the label samplers run on one OpenMP thread.

scikit-learn's brute-force search starts its OpenMP threads on every call, and the
samplers make one call per class: with 26 classes on a loaded machine the spinning
threads cost 20 to 40 times the search itself.
"""

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors
from threadpoolctl import threadpool_info

from psdmetric import pairs_from_labels, triplets_from_labels


def _openmp_threads():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "openmp"]


@pytest.mark.parametrize("sample", [
    lambda X, y: pairs_from_labels(y, X=X, n_neighbors=2, random_state=0),
    lambda X, y: triplets_from_labels(X, y, n_neighbors=2, random_state=0),
])
def test_neighbour_queries_run_on_one_openmp_thread(sample, monkeypatch):
    if not _openmp_threads():
        pytest.skip("no OpenMP runtime loaded")
    seen, real = [], NearestNeighbors.kneighbors

    def recording(self, *args, **kwargs):
        seen.append(_openmp_threads())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(NearestNeighbors, "kneighbors", recording)
    rng = np.random.RandomState(0)
    X, y = rng.randn(60, 3), np.arange(60) % 6
    before = _openmp_threads()
    sample(X, y)
    assert len(seen) >= 6  # one query (or two) per class
    assert all(threads == [1] * len(threads) for threads in seen)
    assert _openmp_threads() == before  # the limit is lifted afterwards
