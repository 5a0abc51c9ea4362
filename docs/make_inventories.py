"""Write the intersphinx inventories under ``docs/_inventories/``.

The documentation links to scikit-learn, NumPy and SciPy pages, but its build must not
download their inventories. This script writes small ones that list only the objects
the documentation names, each with its page on the project's real site; a name not
listed renders as plain text. To link one more name, add it here, run
``python docs/make_inventories.py`` and commit the ``.inv`` files.
"""

import zlib
from pathlib import Path

# project: (version, {name: (role, page relative to the site root, "$" is the name)})
GENERATED = "modules/generated/$.html#$"
INVENTORIES = {
    "sklearn": ("stable", {
        "sklearn.base.BaseEstimator": ("class", GENERATED),
        "sklearn.base.TransformerMixin": ("class", GENERATED),
        "sklearn.datasets.load_digits": ("function", GENERATED),
        "sklearn.datasets.load_wine": ("function", GENERATED),
        "sklearn.decomposition.PCA": ("class", GENERATED),
        "sklearn.exceptions.ConvergenceWarning": ("exception", GENERATED),
        "sklearn.kernel_approximation.Nystroem": ("class", GENERATED),
        "sklearn.linear_model.SGDRegressor": ("class", GENERATED),
        "sklearn.metrics.pairwise.pairwise_kernels": ("function", GENERATED),
        "sklearn.metrics.roc_auc_score": ("function", GENERATED),
        "sklearn.model_selection.GridSearchCV": ("class", GENERATED),
        "sklearn.model_selection.StratifiedKFold": ("class", GENERATED),
        "sklearn.model_selection.cross_val_score": ("function", GENERATED),
        "sklearn.neighbors.KNeighborsClassifier": ("class", GENERATED),
        "sklearn.neighbors.NeighborhoodComponentsAnalysis": ("class", GENERATED),
        "sklearn.pipeline.Pipeline": ("class", GENERATED),
        "sklearn.pipeline.make_pipeline": ("function", GENERATED),
        "sklearn.preprocessing.PowerTransformer": ("class", GENERATED),
        "sklearn.preprocessing.StandardScaler": ("class", GENERATED),
    }),
    "numpy": ("stable", {
        "numpy.ndarray": ("class", "reference/generated/$.html#$"),
        "numpy.random.Generator": ("class", "reference/random/generator.html#$"),
        "numpy.random.RandomState": ("class", "reference/random/legacy.html#$"),
    }),
    "scipy": ("stable", {
        "scipy.linalg.eigh": ("function", "reference/generated/$.html#$"),
        "scipy.optimize.linprog": ("function", "reference/generated/$.html#$"),
        "scipy.sparse.csr_matrix": ("class", "reference/generated/$.html#$"),
    }),
}


def inventory(project, version, objects):
    """The bytes of a Sphinx inventory (version 2) listing ``objects``."""
    header = (f"# Sphinx inventory version 2\n# Project: {project}\n# Version: {version}\n"
              "# The remainder of this file is compressed using zlib.\n")
    body = "".join(f"{name} py:{role} 1 {page.replace('$', name)} -\n"
                   for name, (role, page) in sorted(objects.items()))
    return header.encode() + zlib.compress(body.encode())


def main():
    folder = Path(__file__).parent / "_inventories"
    folder.mkdir(exist_ok=True)
    for project, (version, objects) in INVENTORIES.items():
        (folder / f"{project}.inv").write_bytes(inventory(project, version, objects))


if __name__ == "__main__":
    main()
