"""conftest.py - shared fixtures, and one PASS/FAIL/SKIP line per test for make check's tests/run."""
import os
import shutil
import subprocess
import tempfile

import pytest

SRC = os.environ.get("PAGEMAP_SRC") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("PAGEMAP_BUILD") or os.path.join(SRC, "build")
_LINES = os.environ.get("PAGEMAP_PYTEST_LINES")


def pytest_runtest_logreport(report):
    if not _LINES:
        return
    name = "python/" + report.nodeid.replace("::", ":")
    line = None
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        line = "SKIP %s: %s" % (name, reason.replace("Skipped: ", ""))
    elif report.failed:
        line = "FAIL %s (%s)" % (name, report.when)
    elif report.when == "call":
        line = "PASS %s" % name
    if line:
        with open(_LINES, "a") as f:
            f.write(line.replace("\n", " ") + "\n")


@pytest.fixture(scope="session")
def fixtures_dir():
    """tests/fixtures trees unpacked (sparse pagemap files made whole) into a temporary directory."""
    work = tempfile.mkdtemp(prefix="pm-pytest-")
    yield lambda name: _unpack(name, work)
    shutil.rmtree(work, ignore_errors=True)


def _unpack(name, work):
    if not os.access(os.path.join(BUILD, "tests", "tools", "pm-sparse"), os.X_OK):
        pytest.skip("tests/tools/pm-sparse is not built (make test-programs): fixtures cannot be unpacked")
    dst = os.path.join(work, name)
    if not os.path.isdir(dst):
        subprocess.run([os.path.join(SRC, "tests", "fixtures", "unpack"), os.path.join(SRC, "tests", "fixtures", name),
                        dst], check=True)
    return dst


@pytest.fixture(scope="session")
def pagemap_cli():
    path = os.path.join(BUILD, "pagemap")
    if not os.access(path, os.X_OK):
        pytest.skip("the pagemap tool is not built (make)")
    return path
