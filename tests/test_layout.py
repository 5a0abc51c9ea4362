"""The package's layout rules, checked on its source so that they stay true.

- Imports point one way: a learner family (a subpackage of ``psdmetric``) imports from
  ``psdmetric._core`` and from nowhere else in the package; ``_core`` imports no family.
- Size: no module over 500 lines, no function over 80 lines of code, no compiled
  function with more than 10 positional arguments.
"""

import re
from pathlib import Path

import pytest

import psdmetric

PACKAGE = Path(psdmetric.__file__).parent
SOURCES = sorted(p for p in PACKAGE.rglob("*") if p.suffix in {".py", ".pyx", ".pxd"})
MAX_MODULE_LINES = 500
MAX_FUNCTION_CODE_LINES = 80
MAX_COMPILED_POSITIONAL = 10


def _family(path):
    """The subpackage a source file belongs to, or None for the package's top level."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else None


def _imported_families(path):
    """Families named by the file's relative imports and cimports, resolved from its folder."""
    text = path.read_text(encoding="utf-8")
    own = path.relative_to(PACKAGE).parts[:-1]
    found = set()
    for dots, module in re.findall(r"^\s*(?:from|cimport)\s+(\.+)([\w.]*)", text, re.M):
        base = own[: len(own) - (len(dots) - 1)]
        target = base + tuple(part for part in module.split(".") if part)
        if target:
            found.add(target[0])
    for module in re.findall(r"^\s*(?:from|import|cimport)\s+psdmetric\.([\w.]+)", text, re.M):
        found.add(module.split(".")[0])
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down_to_the_core(path):
    family = _family(path)
    if family is None:
        return
    allowed = {family} if family == "_core" else {family, "_core"}
    stray = {name for name in _imported_families(path) if name.startswith("_")} - allowed
    assert not stray, f"{path.relative_to(PACKAGE)} imports {sorted(stray)}"


def test_the_import_check_sees_a_sideways_import(tmp_path):
    (tmp_path / "_online").mkdir()
    probe = tmp_path / "_online" / "_probe.py"
    probe.write_text("from .._bregman._base import x\nfrom .._core import y\n")
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path
    try:
        assert _imported_families(probe) == {"_bregman", "_core"}
    finally:
        PACKAGE = saved


def _code_lines(lines):
    """Lines that are code: not blank, not a comment, not inside a docstring."""
    count, in_string, quote = 0, False, None
    for line in lines:
        stripped = line.strip()
        if in_string:
            if quote in stripped:
                in_string = False
            continue
        if stripped.startswith(('"""', "'''", 'r"""')):
            quote = stripped.lstrip("r")[:3]
            if stripped.count(quote) == 1 or stripped in (quote, "r" + quote):
                in_string = True
            continue
        if stripped and not stripped.startswith("#"):
            count += 1
    return count


def _functions(path):
    """(name, first line, code lines, positional arguments or None) of every function."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = re.compile(r"^(\s*)(?:async\s+)?(?:c?p?def)\s+(?:[\w\[\]*:, ]+?\s+)?(\w+)\s*\(")
    result = []
    for start, line in enumerate(lines):
        match = header.match(line)
        if not match or line.strip().startswith("cdef class"):
            continue
        indent = len(match.group(1))
        signature, end = line, start
        while signature.count("(") > signature.count(")") and end + 1 < len(lines):
            end += 1
            signature += lines[end]
        if not signature.rstrip().endswith(":") and ":" not in signature.split(")")[-1]:
            continue  # a declaration (.pxd) or a cdef extern prototype
        body_end = end + 1
        while body_end < len(lines):
            text = lines[body_end]
            if text.strip() and len(text) - len(text.lstrip()) <= indent:
                break
            body_end += 1
        arguments = signature[signature.index("(") + 1: signature.rindex(")")]
        positional = 0
        for argument in re.split(r",(?![^\[]*\])", arguments):
            argument = argument.strip()
            if argument in ("*", "/") or argument.startswith("*"):
                break
            if argument and argument not in ("self", "cls"):
                positional += 1
        result.append((match.group(2), start + 1, _code_lines(lines[end + 1: body_end]),
                       positional if path.suffix == ".pyx" else None))
    return result


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_and_functions_stay_small(path):
    n_lines = len(path.read_text(encoding="utf-8").splitlines())
    assert n_lines <= MAX_MODULE_LINES, f"{n_lines} lines"
    for name, line, code_lines, positional in _functions(path):
        assert code_lines <= MAX_FUNCTION_CODE_LINES, f"{name} (line {line}): {code_lines} lines"
        if positional is not None:
            assert positional <= MAX_COMPILED_POSITIONAL, (
                f"{name} (line {line}) takes {positional} positional arguments")


def test_the_size_check_counts_code_lines_only(tmp_path):
    probe = tmp_path / "probe.pyx"
    probe.write_text('def f(a, b, *, c):\n    """Doc.\n\n    More.\n    """\n'
                     '    # why\n\n'
                     "    x = a\n    return x + b\n\n\n"
                     "cdef void g(double a, int b) noexcept nogil:\n    pass\n")
    assert _functions(probe) == [("f", 1, 2, 2), ("g", 12, 1, 2)]
