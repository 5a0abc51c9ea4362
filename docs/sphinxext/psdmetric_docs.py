"""Sphinx glue that reads ``psdmetric.__all__`` so the docs follow the package.

- ``.. psdmetric-api::`` renders the API reference: one autosummary table per kind
  (metric learners, other estimators, base classes, constraint types, functions) over
  every exported name.
- Every exported name gets a stub page under ``gen_modules/``, written on
  ``builder-inited``; stubs of names no longer exported are removed.
- ``.. psdmetric-learners::`` renders a table of the exported metric learners with what
  they learn from, which optional APIs (``partial_fit``, pair prediction) they have
  and the first paragraph of their docstring.
- ``:learner:`Name``` links to ``psdmetric.Name`` when it is exported and renders a
  plain literal otherwise, so the user guide can name learners that land later.
- Members inherited from scikit-learn are left out of the class pages; they are
  documented by scikit-learn and their docstrings refer to labels of its docs.
- ``IntroductionFirst`` orders the gallery: the introduction example, then the others
  by file name.
- In the type of a numpydoc parameter or attribute, fitted-attribute names such as
  ``ndarray of shape (n_iter_, n_features)`` are read as literals, not as reST link
  targets (a bare ``name_`` is a reference in reST).
"""

import dataclasses
import inspect
import re
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sklearn.base import BaseEstimator
from sphinx.util.docutils import SphinxDirective, SphinxRole

import psdmetric

STUB_DIR = "gen_modules"

CONSTRAINT_KINDS = {
    "pairs": "similar / dissimilar pairs",
    "targets": "pairs with target distances",
    "triplets": "triplets",
}


def _is_estimator(obj):
    return (
        inspect.isclass(obj)
        and issubclass(obj, BaseEstimator)
        and not inspect.isabstract(obj)
        and not obj.__name__.endswith("Mixin")
    )


def _is_metric_learner(obj):
    return _is_estimator(obj) and issubclass(obj, psdmetric.MahalanobisMixin)


def _is_base_class(obj):
    return inspect.isclass(obj) and issubclass(obj, BaseEstimator)


# (heading, predicate, autosummary template) in display order; a name lands in the
# first group whose predicate holds, so "Other" catches anything not foreseen.
GROUPS = [
    ("Metric learners", _is_metric_learner, "class"),
    ("Other estimators", _is_estimator, "class"),
    ("Base classes", _is_base_class, "class"),
    ("Constraint types", dataclasses.is_dataclass, "class"),
    ("Classes", inspect.isclass, "class"),
    ("Functions", inspect.isfunction, "function"),
    ("Other", lambda obj: True, "data"),
]


def public_names():
    """Exported names grouped by kind: ``[(heading, template, [names])]``."""
    grouped = {heading: [] for heading, _, _ in GROUPS}
    templates = {heading: template for heading, _, template in GROUPS}
    for name in sorted(psdmetric.__all__, key=str.lower):
        obj = getattr(psdmetric, name)
        heading = next(h for h, predicate, _ in GROUPS if predicate(obj))
        grouped[heading].append(name)
    return [(h, templates[h], names) for h, names in grouped.items() if names]


def metric_learner_names():
    return [n for n in sorted(psdmetric.__all__) if _is_metric_learner(getattr(psdmetric, n))]


def _stub(name, template):
    title = f"psdmetric.{name}"
    lines = [title, "=" * len(title), "", ".. currentmodule:: psdmetric", ""]
    if template == "class":
        lines += [f".. autoclass:: {name}", "   :members:", "   :inherited-members:", ""]
    elif template == "function":
        lines += [f".. autofunction:: {name}", ""]
    else:
        lines += [f".. autodata:: {name}", ""]
    # Examples of the gallery that use this name (sphinx-gallery backreferences).
    lines += [f".. minigallery:: psdmetric.{name}", "   :add-heading:", ""]
    return "\n".join(lines)


def write_stubs(app):
    """Write one page per exported name; drop pages of names no longer exported."""
    stub_dir = Path(app.srcdir) / STUB_DIR
    stub_dir.mkdir(exist_ok=True)
    wanted = {}
    for _, template, names in public_names():
        for name in names:
            wanted[f"psdmetric.{name}.rst"] = _stub(name, template)
    for path in stub_dir.glob("psdmetric.*.rst"):
        if path.name not in wanted:
            path.unlink()
    for filename, text in wanted.items():
        path = stub_dir / filename
        # Rewrite only on change, so incremental builds stay incremental.
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


class _RstDirective(SphinxDirective):
    """A directive whose output is reStructuredText generated at build time."""

    def generated_rst(self):
        raise NotImplementedError

    def run(self):
        # The output changes whenever psdmetric.__all__ does.
        self.env.note_dependency(psdmetric.__file__)
        container = nodes.container()
        self.state.nested_parse(
            StringList(self.generated_rst().splitlines(), source="<psdmetric-docs>"),
            self.content_offset,
            container,
        )
        return container.children


class ApiDirective(_RstDirective):
    """Autosummary tables of every name in ``psdmetric.__all__``, grouped by kind."""

    def generated_rst(self):
        lines = [".. currentmodule:: psdmetric", ""]
        for heading, _, names in public_names():
            lines += [
                f".. rubric:: {heading}", "",
                ".. autosummary::", f"   :toctree: {STUB_DIR}", "   :nosignatures:", "",
            ]
            lines += [f"   {name}" for name in names] + [""]
        return "\n".join(lines)


class LearnersDirective(_RstDirective):
    """A list-table of the exported metric learners and the APIs each one offers."""

    def generated_rst(self):
        # Four columns at the text column's full width, so the table fits a 1,280 px page.
        lines = [
            ".. list-table::", "   :header-rows: 1", "   :width: 100%",
            "   :widths: 18 24 18 40", "",
            "   * - Learner", "     - Learns from (``constraints=``)", "     - Also offers",
            "     - Summary",
        ]
        for name in metric_learner_names():
            cls = getattr(psdmetric, name)
            kind = getattr(cls, "_constraint_kind", None)
            offers = [api for api, attribute in (("``partial_fit``", "partial_fit"),
                                                 ("pair prediction", "pair_predict"))
                      if hasattr(cls, attribute)]
            summary = (inspect.getdoc(cls) or "").split("\n\n")[0].replace("\n", " ")
            lines += [
                f"   * - :class:`~psdmetric.{name}`",
                f"     - {CONSTRAINT_KINDS.get(kind, kind or '—')}",
                f"     - {', '.join(offers) or '—'}",
                f"     - {summary}",
            ]
        return "\n".join(lines) + "\n"


class LearnerRole(SphinxRole):
    """``:learner:`Name```: a class link if psdmetric exports Name, else a literal."""

    def run(self):
        name = self.text.strip()
        if name in psdmetric.__all__:
            class_role = self.env.get_domain("py").role("class")
            return class_role("py:class", self.rawtext, f"~psdmetric.{name}",
                              self.lineno, self.inliner, self.options, self.content)
        return [nodes.literal(self.rawtext, name)], []


class IntroductionFirst:
    """Sort key of sphinx-gallery's ``within_subsection_order``."""

    FIRST = "plot_introduction.py"

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        name = Path(filename).name
        return (name != self.FIRST, name)

    def __repr__(self):
        # sphinx-gallery compares configurations by repr to decide what to rebuild.
        return f"<{type(self).__name__}>"


# "name : type" lines of numpydoc sections, and names ending in "_" not already quoted.
_TYPE_LINE = re.compile(r"^(\s*\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*\s+:\s+)(.*)$")
_TRAILING_UNDERSCORE = re.compile(r"(?<![`\w])([A-Za-z]\w*_)(?![`\w])")


def quote_attribute_names_in_types(app, what, name, obj, options, lines):
    """Wrap ``name_`` in backticks in the type part of numpydoc "name : type" lines."""
    for index, line in enumerate(lines):
        match = _TYPE_LINE.match(line)
        if match:
            lines[index] = match[1] + _TRAILING_UNDERSCORE.sub(r"`\1`", match[2])


def skip_inherited_from_other_packages(app, what, name, obj, skip, options):
    """Leave out members defined outside psdmetric (scikit-learn's get_params & co.)."""
    module = getattr(obj, "__module__", None)
    if what == "class" and module is not None and not module.startswith("psdmetric"):
        return True
    return None


def setup(app):
    # Before autosummary (priority 500) and sphinx-gallery look at the sources.
    app.connect("builder-inited", write_stubs, priority=100)
    app.connect("autodoc-skip-member", skip_inherited_from_other_packages)
    # Before numpydoc (priority 500) parses the sections.
    app.connect("autodoc-process-docstring", quote_attribute_names_in_types, priority=100)
    app.add_directive("psdmetric-api", ApiDirective)
    app.add_directive("psdmetric-learners", LearnersDirective)
    app.add_role("learner", LearnerRole())
    return {"parallel_read_safe": True, "parallel_write_safe": True}
