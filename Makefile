# lever: top-level convenience targets. Everything real lives in CMake.
BUILD      ?= build
ASAN_BUILD ?= build-asan
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build demo test test-unit test-asan test-browser bench bench-tables install clean format

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@examples/demo.sh $(BUILD)

# The whole suite: normal build, then the analysis code and the runtime unit
# tests again under ASan+UBSan (test_* with label "runtime").
test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory test-asan

test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DLEVER_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -L 'analysis|runtime'

# Browser checks (need chromium; not part of `make test`): a fresh lever profile
# loaded into Coz's own viewer, which must plot both loops of critical_path
# (the viewer plots a line once it has 10 speedup values, its "Minimum Points"
# default: short rounds and 50 ms experiments give each line ~20 on any
# machine), screenshot in $(BUILD)/coz-viewer.png; and the
# HTML page of `lever causal report --html` for it and for Coz's ferret
# profile, screenshot in $(BUILD)/causal-report.png (script errors fail); and
# the page of a load-amplified sweep, $(BUILD)/causal-report-amp.png; the
# struct heat map of `lever layout report --html`, $(BUILD)/layout-report.png.
test-browser: build
	@command -v chromium >/dev/null || scripts/install-deps.sh --browser
	@rm -f $(BUILD)/browser.coz
	@$(BUILD)/bin/lever causal -o $(BUILD)/browser.coz --experiment-length 50ms --seed 1 -- \
		$(BUILD)/tests/programs/causal_known/critical_path 1500 3000000 >/dev/null
	@tests/browser/coz_viewer.sh $(BUILD)/browser.coz $(BUILD)/coz-viewer.png \
		$(foreach l,a b,critical_path.c:$$(grep -n 'LINE:$(l)' tests/programs/causal_known/critical_path.c | cut -d: -f1))
	@tests/browser/causal_report.sh $(BUILD)/bin/lever $(BUILD)/browser.coz \
		$$(ls /usr/share/coz-profiler/viewer/profiles/ferret.coz 2>/dev/null) \
		$(BUILD)/causal-report.png
	@tests/browser/causal_report.sh $(BUILD)/bin/lever tests/e2e/data/amp_sweep.coz \
		$(BUILD)/causal-report-amp.png
	@tests/browser/layout_report.sh $(BUILD)/bin/lever $(BUILD)/layout-report.png

bench: build
	@scripts/install-deps.sh --bench
	@bench/run.sh $(BUILD)

# The tables of bench/results/ rebuilt from their committed raw data (no
# benchmark is re-run); ctest's bench_results checks they are up to date.
bench-tables:
	@bench/results/regenerate.sh $(BUILD)

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
