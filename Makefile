# Common commands. `make test` is the one command that builds and tests
# everything from a fresh clone: it installs what is missing first.

BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build testenv test test-versions unit integration e2e bench quality clean
.PHONY: sanitize asan tsan fuzz-smoke fuzz

all: build

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The local control plane (Go); cached by Go's build cache after the first
# build. K8S_VERSION (e.g. 1.35) builds that Kubernetes version instead of
# the default (the newest; `scripts/k8s-versions.sh` lists them), and every
# target that starts the control plane then runs against it.
K8S_VERSION ?=
testenv: deps
	bash scripts/build-testenv.sh $(BUILD) $(K8S_VERSION)

# The C++ build and the control plane's Go build run side by side: each
# leaves a core idle at times (links, module downloads).
test: deps
	$(MAKE) --no-print-directory -j 2 build testenv
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The differential, integration and e2e tests against every supported
# Kubernetes version in turn (K8S_VERSIONS picks some, e.g. "1.35 1.36"),
# each version's kube-scheduler as the oracle; the default version's
# control plane is built back at the end (scripts/test-versions.sh).
K8S_VERSIONS ?=
test-versions: build
	bash scripts/test-versions.sh $(BUILD) $(K8S_VERSIONS)

unit: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L unit

e2e: build testenv
	ctest --test-dir $(BUILD) --output-on-failure -L e2e

integration: build testenv
	ctest --test-dir $(BUILD) --output-on-failure -L integration

# Every benchmark: the scoring hot path, the metrics refresh, decoding
# pods' watch events, and the
# end-to-end comparison with kube-scheduler and the bind-only client
# (bench/bind_only, built by `build` with the rest) on a control plane of
# its own (minutes; see docs/benchmarks.md). E2E_FLAGS, e.g. --nodes=100
# --pods=500 --runs=1 --rss_pods=0, makes a quick run.
E2E_FLAGS ?=
bench: build testenv
	$(BUILD)/bench/scoring_bench
	$(BUILD)/bench/metrics_bench
	$(BUILD)/bench/decode_bench
	$(BUILD)/bench/metric_views_bench
	$(BUILD)/bench/e2e_bench --build_dir=$(BUILD) --source_dir=. $(E2E_FLAGS)

# The placement-quality benchmark (docs/quality.md): every shipped trace
# under kube-scheduler, metrics-scheduler, the load-aware peers' rules and
# the clairvoyant limit, in a closed loop with a real Prometheus; prints a
# table per trace and writes $(BUILD)/bench/quality.json and quality.html.
# QUALITY_FLAGS, e.g. --traces=heterogeneous --runs=1, picks less.
QUALITY_FLAGS ?=
quality: build testenv
	$(BUILD)/bench/quality_bench --build_dir=$(BUILD) --source_dir=. $(QUALITY_FLAGS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)

# Sanitizers, each in a build directory of its own (scripts/sanitize.sh),
# built with clang at -O1: the unit and integration tests under
# AddressSanitizer and UndefinedBehaviorSanitizer, and the unit tests of the
# concurrent parts (metrics cache, queue, binder, leader election, token
# files, informers, interned label sets) under ThreadSanitizer. The
# integration tests start the control plane built by `make testenv`.
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
TSAN_TESTS ?= metrics_test scheduler_test kube_test http_test model_test common_test
sanitize: asan tsan

asan: deps testenv
	bash scripts/sanitize.sh asan $(ASAN_BUILD) $(BUILD)/testenv/testenv $(JOBS)

tsan: deps
	bash scripts/sanitize.sh tsan $(TSAN_BUILD) $(BUILD)/testenv/testenv $(JOBS) $(TSAN_TESTS)

# libFuzzer targets (tests/fuzz/, clang): every decoder of outside input,
# built in the ASan tree (its libraries carry libFuzzer's coverage, so
# after `make asan` only the targets themselves are compiled).
# fuzz-smoke runs each one briefly, as CI does, JOBS at a time;
# `make fuzz FUZZ_SECONDS=600` runs each for longer, growing the corpus kept
# in $(FUZZ_BUILD)/fuzz-corpus. FUZZ_TARGETS picks some, e.g.
# FUZZ_TARGETS=config_fuzz.
FUZZ_BUILD ?= $(ASAN_BUILD)
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 15
FUZZ_TARGETS ?=
fuzz-smoke: deps
	bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS) $(JOBS) $(FUZZ_TARGETS)

fuzz: deps
	bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(JOBS) $(FUZZ_TARGETS)

# The scheduler at work in a few minutes: a local control plane, Prometheus
# fed with synthetic per-node metrics, pods following them (scripts/demo.sh).
.PHONY: demo
demo: build testenv
	bash scripts/demo.sh $(BUILD)
