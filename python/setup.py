"""setup.py - build libpagemap._core (stable ABI, Python 3.11+) over the project's own library objects.

The library's position-independent objects (make's $(BUILD)/lib/*/*.pic.o) are linked into the extension:
nothing depends on an installed libpagemap.so or its path. They are built first when missing.
"""
import glob
import os
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.abspath(os.environ.get("PAGEMAP_BUILD") or os.path.join(ROOT, "build"))


def lib_objects():
    lib = os.path.join(ROOT, "lib")
    srcs = sorted(os.path.join(d, f) for d in os.listdir(lib) if os.path.isdir(os.path.join(lib, d))
                  for f in os.listdir(os.path.join(lib, d)) if f.endswith(".c"))
    return [os.path.join(BUILD, "lib", f[:-2] + ".pic.o") for f in srcs]


class build_ext_with_lib(build_ext):
    """Build the library's objects first (make knows how; BUILD is its output directory), only when building."""

    def run(self):
        objs = lib_objects()
        if not all(os.path.exists(o) for o in objs):
            subprocess.check_call(["make", "-C", ROOT, "BUILD=" + BUILD] + objs)
        super().run()


core = Extension(
    "libpagemap._core",
    sources=["libpagemap/" + f for f in ("_core.c", "_records.c", "_array.c", "_target.c", "_watch.c", "_more.c", "_features.c", "_allow.c")],
    include_dirs=[os.path.join(ROOT, "include")],
    define_macros=[("Py_LIMITED_API", "0x030B0000"), ("_GNU_SOURCE", None)],
    extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                        "-Wno-missing-field-initializers", "-fvisibility=hidden"],
    # The headers and the library's objects: an edit of either builds the extension again.
    depends=["libpagemap/_core.h", os.path.join(ROOT, "include", "pagemap.h")]
    + sorted(glob.glob(os.path.join(ROOT, "include", "pagemap", "*.h"))) + lib_objects(),
    extra_objects=lib_objects(),
    libraries=["zstd"],
    py_limited_api=True,
)

setup(
    name="libpagemap",
    version="0.1.0",
    description="Linux /proc/PID/pagemap decoded and walked: the libpagemap C library for Python",
    python_requires=">=3.11",
    packages=["libpagemap"],
    package_data={"libpagemap": ["*.pyi", "py.typed"]},
    ext_modules=[core],
    cmdclass={"build_ext": build_ext_with_lib},
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
