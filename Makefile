# `make demo` and `make test` are the two entry points (README.md). Both create .venv and
# install what they need; a second run only reinstalls when pyproject.toml changed.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.stamp-install
VTEST := /usr/share/doc/opencv-doc/examples/data/vtest.avi
CHROMEDRIVER := /usr/bin/chromedriver
ESPEAK := /usr/bin/espeak-ng
DEMO_DIR ?= demo-out

.PHONY: demo test wheel-check bench install clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[cpu,offline,server,eval,dev,ray]'
	touch $(STAMP)

install: $(STAMP)

# vtest.avi (Debian opencv-doc) is real footage of people walking; tests that need it skip
# with a reason when it cannot be installed.
$(VTEST):
	-@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get install -y -qq opencv-doc >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq opencv-doc >/dev/null 2>&1)) || true; fi

# Debian's chromium + chromium-driver run the web page's browser test (tests/test_browser.py),
# which skips with a reason when they cannot be installed.
$(CHROMEDRIVER):
	-@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1)) || true; fi

# Debian's espeak-ng speaks the spoken test track (tests/conftest.py `speech_video`) and the
# track of benchmarks/asr.py and `videomem synth --speech`; the speech tests skip with a reason
# when it cannot be installed.
$(ESPEAK):
	-@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get install -y -qq espeak-ng >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq espeak-ng >/dev/null 2>&1)) || true; fi

test: $(STAMP) $(VTEST) $(CHROMEDRIVER) $(ESPEAK)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q

# The wheel as a user installs it (non-editable, fresh venv reusing $(VENV)'s installed wheels,
# no network): `videomem ingest` of a real sample video and `videomem ask` outside the checkout.
wheel-check: $(STAMP)
	VENV=$(VENV) .ci/wheel-check

demo: $(STAMP)
	$(PY) -m videomem.demo --out $(DEMO_DIR)

bench: $(STAMP)
	$(PY) benchmarks/sampling.py
	$(PY) benchmarks/offline_caption.py
	$(PY) benchmarks/visual_stage.py
	$(PY) benchmarks/ppr.py
	$(PY) benchmarks/asr.py
	$(PY) benchmarks/objects_scale.py
	$(PY) benchmarks/streaming.py
	$(PY) benchmarks/embed_batches.py
	$(PY) benchmarks/timeline_scale.py
	$(PY) benchmarks/import_cycles.py
	$(PY) benchmarks/speech_scale.py

clean:
	rm -rf $(VENV) $(DEMO_DIR)
