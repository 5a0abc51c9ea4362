"""Sphinx configuration of the psdmetric documentation.

Build (fails on any warning, runs the gallery)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

Add ``-D plot_gallery=0`` to skip running the examples while writing text.

The API reference and the learner table are generated from ``psdmetric.__all__`` by
``sphinxext/psdmetric_docs.py``: exporting a class is all it takes to document it.
"""

import sys
from pathlib import Path

import psdmetric

sys.path.insert(0, str(Path(__file__).parent / "sphinxext"))

project = "psdmetric"
author = "the psdmetric developers"
copyright = "the psdmetric developers"
version = release = psdmetric.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    # Serves MathJax from the built site, so maths renders without a network.
    "sphinx-mathjax-offline",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "psdmetric_docs",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}

exclude_patterns = ["_build"]
default_role = "literal"

# Links to scikit-learn, NumPy and SciPy resolve through small inventories committed
# under _inventories/ (written by make_inventories.py, with the projects' real URLs), so
# the build never downloads one.
intersphinx_mapping = {
    "sklearn": ("https://scikit-learn.org/stable/", "_inventories/sklearn.inv"),
    "numpy": ("https://numpy.org/doc/stable/", "_inventories/numpy.inv"),
    "scipy": ("https://docs.scipy.org/doc/scipy/", "_inventories/scipy.inv"),
}

# Every unresolved reference to psdmetric is an error; names of other packages that no
# inventory here lists (in See Also sections and type descriptions) are left as text.
nitpicky = True
nitpick_ignore_regex = [
    ("py:.*", r"(sklearn|numpy|np|scipy|joblib|dask|dask_ml|distributed|matplotlib)\..*"),
]

# Stubs are written by psdmetric_docs from __all__, not by autosummary.
autosummary_generate = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"

numpydoc_show_class_members = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

html_theme = "pydata_sphinx_theme"
html_title = f"psdmetric {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    # Pages with wide tables give the right-hand sidebar's width to the text column.
    # (Patterns must not overlap: "*" is one folder level, an exact name beats a pattern.)
    "secondary_sidebar_items": {
        "*": ["page-toc"],
        "user_guide/*": ["page-toc"],
        "auto_examples/*": ["page-toc"],
        "gen_modules/*": ["page-toc"],
        "benchmarks/*": [],
        "user_guide/choosing": [],
        "user_guide/metric_learn": [],
    },
}
html_show_sourcelink = False
html_static_path = ["_static"]
html_css_files = ["psdmetric.css"]
html_js_files = ["psdmetric.js"]

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "psdmetric_docs.IntroductionFirst",
    "doc_module": ("psdmetric",),
    "backreferences_dir": "gen_modules/backreferences",
    "reference_url": {"psdmetric": None},
    # A failing example fails the build.
    "abort_on_example_error": True,
    "write_computation_times": False,
    "remove_config_comments": True,
    "min_reported_time": 1,
}
