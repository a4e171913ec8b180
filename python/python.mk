# python/python.mk - the Python package (included by the Makefile).
# make python          build libpagemap for Python into $(BUILD)/python/lib (PYTHONPATH=$(BUILD)/python/lib)
# make install-python  install it into PYTHON: the active venv's interpreter, else Debian's (README: one line a case)
# make check runs python/run-tests, which skips with the reason when the package could not be built here.

# Debian's interpreter builds the package (python3-dev, python3-setuptools, python3-wheel) and tests it
# (python3-pytest): make python, make check, and the wheel that install-python hands to PYTHON's pip. One
# build serves every Python from 3.11 on (the stable ABI), so an interpreter without headers, setuptools or
# wheel (a venv, pyenv's, with no index to fetch them from) installs it all the same.
PY_BUILD   ?= /usr/bin/python3
# Where install-python installs: the venv that `activate` made active (it sets VIRTUAL_ENV), else Debian's
# python3 (as root into /usr/local: PIP_FLAGS=--break-system-packages, PEP 668); PYTHON=... for another
# (pyenv's python3, a venv not activated).
PYTHON     ?= $(if $(VIRTUAL_ENV),$(VIRTUAL_ENV)/bin/python,$(PY_BUILD))
PY_LIB     := $(abspath $(BUILD))/python/lib
PY_SKIP    := $(abspath $(BUILD))/python/skip
PY_DIST    := $(abspath $(BUILD))/python/dist
# The plain build, whose objects Python loads when this one is sanitized (SANITIZE=1).
PY_PLAIN   ?= build
PY_HAVE_DEV = $(shell $(PY_BUILD) -c 'import os, sysconfig, setuptools; \
	print("yes" if os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")) else "")' 2>/dev/null)
PY_DEBS    := python3-dev python3-setuptools python3-wheel
TEST_DEBS += $(PY_DEBS) python3-pytest python3-numpy python3-venv python3-pip
# setup.py's build and bdist_wheel, all their output under $(BUILD)/python (nothing written into python/).
PY_SETUP    = cd python && PAGEMAP_BUILD=$(abspath $(BUILD)) $(PY_BUILD) \
	-W 'ignore:setup.py install is deprecated' setup.py -q build --build-base $(abspath $(BUILD))/python --build-lib $(PY_LIB)

.PHONY: python install-python python-for-check
python: $(LIB_PIC)
	@mkdir -p $(BUILD)/python && rm -f $(PY_SKIP)
	$(PY_SETUP) >/dev/null

PY_SYSTEM_HINT := install-python: no venv is active: into Debian's python3 only with PIP_FLAGS=--break-system-packages, \
	else in a venv (python3 -m venv ~/pm && . ~/pm/bin/activate && make install-python)
# The wheel comes from Debian's setuptools and wheel, so PYTHON's pip only unpacks it: no build of its own (which
# needs wheel there: "invalid command 'bdist_wheel'"), no index reached (--no-index; the package needs nothing).
# The version stays 0.1.0 from one build to the next, hence --force-reinstall.
ifneq ($(SANFLAGS),)
# An ASan/UBSan library cannot be loaded into python (see python-for-check): the plain objects go in.
install-python:
	$(MAKE) --no-print-directory SANITIZE= BUILD=$(PY_PLAIN) install-python
else
install-python: $(LIB_PIC)
	@tools/install-deps $(PY_DEBS) $(if $(filter $(PY_BUILD),$(PYTHON)),python3-pip)
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "install-python: $(PYTHON) is Python $$($(PYTHON) -c 'import platform; print(platform.python_version())'): libpagemap needs 3.11 or later" >&2; exit 1; }
	@rm -rf $(PY_DIST)
	$(PY_SETUP) egg_info --egg-base $(abspath $(BUILD))/python bdist_wheel --dist-dir $(PY_DIST) >/dev/null
	@echo "install-python: into $$($(PYTHON) -c 'import sys; print(sys.prefix)') ($(PYTHON))"
	$(PYTHON) -m pip install --no-deps --no-index --force-reinstall $(PIP_FLAGS) $(PY_DIST)/libpagemap-*.whl || \
		{ $(if $(and $(filter $(PY_BUILD),$(PYTHON)),$(if $(findstring break-system,$(PIP_FLAGS)),,no)),echo "$(PY_SYSTEM_HINT)" >&2;) exit 1; }
endif

# For make check: build where it can, else leave the reason for run-tests to print as a SKIP line.
# An ASan/UBSan library cannot be loaded into python3 (its runtime must come first): under SANITIZE the
# package is built from the plain objects (in $(PY_PLAIN)) and tested against the sanitized CLI.
python-for-check:
	@mkdir -p $(BUILD)/python
	@rm -f $(PY_SKIP)
	@if [ -z "$(PY_HAVE_DEV)" ]; then \
		echo "python3-dev or python3-setuptools is missing (make test-deps, or apt-get install python3-dev python3-setuptools)" > $(PY_SKIP); \
	elif [ -n "$(SANFLAGS)" ]; then \
		$(MAKE) --no-print-directory SANITIZE= BUILD=$(PY_PLAIN) python && \
		rm -rf $(PY_LIB) && mkdir -p $(dir $(PY_LIB)) && ln -s $(abspath $(PY_PLAIN))/python/lib $(PY_LIB); \
	else \
		$(MAKE) --no-print-directory python; \
	fi
test-programs: python-for-check

# make bench-python: the package against C and pure Python (bench/python/bench.py; figures in bench/README.md).
.PHONY: bench-python
bench-python: python $(STLIB)
	PYTHONPATH=$(PY_LIB) PAGEMAP_BUILD=$(abspath $(BUILD)) PAGEMAP_SRC=$(abspath .) flock /tmp/bench.lock $(PY_BUILD) bench/python/bench.py

# make python-stubs: write python/libpagemap/__init__.pyi again from the flag table and the record types' field
# docs of the built module (python/tests/test_stubs.py fails when the committed stubs differ from what this writes).
.PHONY: python-stubs
python-stubs: python
	PYTHONPATH=$(PY_LIB) $(PY_BUILD) python/gen_stubs.py python/libpagemap/__init__.pyi
