"""test_stubs.py - the committed type stubs are what gen_stubs.py writes from today's tables (make python-stubs)."""
import os
import subprocess
import sys

from conftest import SRC


def test_stubs_are_current(tmp_path):
    out = tmp_path / "stubs.pyi"
    subprocess.run([sys.executable, os.path.join(SRC, "python", "gen_stubs.py"), str(out)], check=True)
    with open(os.path.join(SRC, "python", "libpagemap", "__init__.pyi")) as f:
        assert out.read_text() == f.read(), "the stubs are stale: run make python-stubs"


def test_stubs_compile_and_name_every_flag():
    import libpagemap as pm
    path = os.path.join(SRC, "python", "libpagemap", "__init__.pyi")
    text = open(path).read()
    compile(text, path, "exec")
    for row in pm.FLAGS:
        assert "    %s = %d\n" % (row[1].upper().replace("-", "_"), row[0]) in text
