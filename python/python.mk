# python/python.mk - the Python package (included by the Makefile).
# make python          build libpagemap for Python into $(BUILD)/python/lib (PYTHONPATH=$(BUILD)/python/lib)
# make install-python  pip install it (into the active venv; PIP_FLAGS=--break-system-packages for the system)
# make check runs python/run-tests, which skips with the reason when the package could not be built here.

# Debian's interpreter: the package is built against its python3-dev and tested with its python3-pytest.
PYTHON     ?= /usr/bin/python3
PY_LIB     := $(abspath $(BUILD))/python/lib
PY_SKIP    := $(abspath $(BUILD))/python/skip
PY_HAVE_DEV = $(shell $(PYTHON) -c 'import os, sysconfig, setuptools; \
	print("yes" if os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")) else "")' 2>/dev/null)
TEST_DEBS += python3-dev python3-setuptools python3-pytest python3-numpy python3-venv python3-pip

.PHONY: python install-python python-for-check
python: $(LIB_PIC)
	@mkdir -p $(BUILD)/python && rm -f $(PY_SKIP)
	cd python && PAGEMAP_BUILD=$(abspath $(BUILD)) $(PYTHON) setup.py -q build --build-base $(abspath $(BUILD))/python \
		--build-lib $(PY_LIB) >/dev/null

install-python: $(LIB_PIC)
	PAGEMAP_BUILD=$(abspath $(BUILD)) $(PYTHON) -m pip install --no-build-isolation $(PIP_FLAGS) ./python

# For make check: build where it can, else leave the reason for run-tests to print as a SKIP line.
# An ASan/UBSan library cannot be loaded into python3 (its runtime must come first): under SANITIZE the
# package is built from the plain objects (in $(PY_PLAIN)) and tested against the sanitized CLI.
PY_PLAIN   ?= build
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
	PYTHONPATH=$(PY_LIB) PAGEMAP_BUILD=$(abspath $(BUILD)) PAGEMAP_SRC=$(abspath .) flock /tmp/bench.lock $(PYTHON) bench/python/bench.py

# make python-stubs: write python/libpagemap/__init__.pyi again from the flag table and the record types' field
# docs of the built module (python/tests/test_stubs.py fails when the committed stubs differ from what this writes).
.PHONY: python-stubs
python-stubs: python
	PYTHONPATH=$(PY_LIB) $(PYTHON) python/gen_stubs.py python/libpagemap/__init__.pyi
