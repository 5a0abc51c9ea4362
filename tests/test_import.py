"""Importing psdmetric from a source tree whose kernels are not compiled."""

import shutil
import subprocess
import sys
from pathlib import Path

import psdmetric


def test_unbuilt_source_tree_says_how_to_install(tmp_path):
    # A fresh clone: the package's sources without the compiled extension modules.
    source = Path(psdmetric.__file__).parent
    shutil.copytree(source, tmp_path / "psdmetric",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.c", "__pycache__"))
    completed = subprocess.run(
        [sys.executable, "-c", "import psdmetric"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    assert completed.returncode != 0
    last_line = completed.stderr.strip().splitlines()[-1]
    assert last_line.startswith("ImportError: psdmetric is being imported from its source tree")
    for kernel in source.glob("*/*.pyx"):
        assert kernel.stem in last_line
    assert "pip install -e ." in last_line
