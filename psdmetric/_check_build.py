"""Importing this module fails with instructions in a source tree whose kernels are not built.

``python`` puts the current directory first on ``sys.path``, so from the root of a
checkout ``import psdmetric`` finds the source folder even after ``pip install .``;
without this check the error would be a bare ``ModuleNotFoundError`` from deep inside.
"""

from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

_PACKAGE = Path(__file__).parent
# Each family keeps its kernels beside its Python: every .pyx below the package.
_BUILT = {path.parent / path.name.split(".")[0] for suffix in EXTENSION_SUFFIXES
          for path in _PACKAGE.glob("*/*" + suffix)}
_MISSING = sorted(path.stem for path in _PACKAGE.glob("*/*.pyx")
                  if path.with_suffix("") not in _BUILT)

if _MISSING:
    raise ImportError(
        f"psdmetric is being imported from its source tree ({_PACKAGE}), whose compiled "
        f"kernels are not built ({', '.join(_MISSING)}). Either install psdmetric "
        "(`pip install .`) and run Python from outside the source tree (the installed "
        "`psdmetric demo` command works from anywhere), or build it in place for "
        "development: `pip install -e .`."
    )
