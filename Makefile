# `make demo` and `make test` are the two entry points (README.md). Both create .venv and
# install what they need; a second run only reinstalls when pyproject.toml changed.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.stamp-install
VTEST := /usr/share/doc/opencv-doc/examples/data/vtest.avi
DEMO_DIR ?= demo-out

.PHONY: demo test bench install clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[cpu,offline,server,dev]'
	touch $(STAMP)

install: $(STAMP)

# vtest.avi (Debian opencv-doc) is real footage of people walking; tests that need it skip
# with a reason when it cannot be installed.
$(VTEST):
	-@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get install -y -qq opencv-doc >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq opencv-doc >/dev/null 2>&1)) || true; fi

test: $(STAMP) $(VTEST)
	$(VENV)/bin/ruff check src tests benchmarks
	$(PY) -m pytest -q

demo: $(STAMP)
	$(PY) -m videomem.demo --out $(DEMO_DIR)

bench: $(STAMP)
	$(PY) benchmarks/sampling.py
	$(PY) benchmarks/offline_caption.py

clean:
	rm -rf $(VENV) $(DEMO_DIR)
