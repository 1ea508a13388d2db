# rung: the two commands of the README.
#   make quickstart   install what is missing, build what it runs, run the main job (a small real sweep)
#   make test         install what is missing, build, run every test
# Deployment and GPU (deploy/README.md):
#   make install      build, then copy the binaries and the builtin corpus under $(PREFIX)
#   make gpu-deps     (here, with Debian) unpack what rung-train links besides LibTorch into third_party/gpu-deps
#   make gpu-build    (on the GPU machine) build core/ and rung-train against PyTorch's CUDA LibTorch
#   make bench-gpu    (on the GPU machine) GPT-2 124M tokens/s and TFLOP/s: rung vs plain PyTorch
#   make gpu-check    (on the GPU machine) gpu-build, then Hugging Face imports evaluated on CUDA against the CPU
# Fuzzing (docs/fuzzing.md):
#   make fuzz FUZZ_SECONDS=N   build the libFuzzer targets (clang-14, ASan + UBSan) in build-fuzz, run each N s
#   make fuzz-ci               the same, all targets over their corpora in 2 minutes together
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# Ninja schedules the whole build graph at once (Make's per-folder passes leave a core idle at their
# ends); a build folder configured earlier keeps the generator it has.
GENERATOR := $(if $(wildcard $(BUILD)/CMakeCache.txt),,-G Ninja)

# ccache only hits across build folders and clones with these (docs/performance.md, "Compile time").
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime

.PHONY: all deps configure build build-run corpus corpus-bytes test quickstart bench bench-orchestration clean install gpu-deps gpu-build bench-gpu gpu-check \
        fuzz-build fuzz fuzz-ci

all: build

deps:
	deploy/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# What `make quickstart` runs (rung run: the CLI, the coordinator, its workers and their trainer), and
# nothing else: a fresh machine's first quickstart builds no tests, benches or rung-data.
RUN_TARGETS := rung rung-coordinator rung-worker rung-train
build-run: configure
	cmake --build $(BUILD) -j $(JOBS) --target $(RUN_TARGETS)

# The builtin corpus (bytes), then its BPE form (data.builtin_form: bpe-4096) with rung-data.
corpus-bytes: deps
	deploy/fetch-builtin-corpus.sh $(BUILD)/data/builtin

corpus: configure corpus-bytes
	cmake --build $(BUILD) -j $(JOBS) --target rung-data
	deploy/build-builtin-tokens.sh $(BUILD)/bin/rung-data $(BUILD)/data/builtin

test: build corpus
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 1200

# The main job: a real sweep (4 variants x 3 rungs of the builtin corpus) through a local
# coordinator and 2 workers, live progress, results and compute multipliers at the end.
quickstart: build-run corpus-bytes
	$(BUILD)/bin/rung run sweeps/examples/quickstart.yaml --workers 2 --dir $(BUILD)/runs/quickstart-$$(date +%Y%m%d-%H%M%S)

bench: build corpus
	deploy/install-deps.sh --with-bench
	/usr/bin/python3 bench/train_throughput.py --build-dir $(BUILD)

# Coordinator and workers under load (bench/README.md "Orchestration"): rung against Optuna on 2,000
# trials, metric ingestion, coordinator memory. Torch-free targets only.
bench-orchestration: configure
	deploy/install-deps.sh --with-bench
	cmake --build $(BUILD) -j $(JOBS) --target rung-coordinator rung-worker rung rung-stand-in rung-bench-metric-ingest
	/usr/bin/python3 bench/orchestration.py --build-dir $(BUILD) --out-json $(BUILD)/bench/orchestration.json

clean:
	rm -rf $(BUILD)

PREFIX ?= /usr/local
GPU_BUILD ?= build-gpu
PYTHON ?= python3

# The binaries (rung-train only when built with LibTorch) and the builtin corpus where
# rung-train looks for it ($(PREFIX)/share/rung/builtin).
install: build corpus
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/rung/builtin
	install -m 0755 $(BUILD)/bin/rung $(BUILD)/bin/rung-coordinator $(BUILD)/bin/rung-worker $(DESTDIR)$(PREFIX)/bin/
	if [ -x $(BUILD)/bin/rung-train ]; then install -m 0755 $(BUILD)/bin/rung-train $(DESTDIR)$(PREFIX)/bin/; fi
	install -m 0644 $(BUILD)/data/builtin/austen.txt $(BUILD)/data/builtin/austen.json $(DESTDIR)$(PREFIX)/share/rung/builtin/
	install -d $(DESTDIR)$(PREFIX)/share/rung/builtin/austen-bpe-4096
	install -m 0644 $(BUILD)/data/builtin/austen-bpe-4096/* $(DESTDIR)$(PREFIX)/share/rung/builtin/austen-bpe-4096/

gpu-deps:
	deploy/gpu/vendor-deps.sh third_party/gpu-deps

# Needs only a compiler, CMake, CUDA and PyTorch 2.x: no gRPC, SQLite or Debian -dev packages.
gpu-build:
	cmake -S . -B $(GPU_BUILD) -DCMAKE_BUILD_TYPE=Release -DRUNG_TRAINER_ONLY=ON -DRUNG_CPU_ATTENTION_SGEMM=OFF \
	  $(if $(wildcard third_party/gpu-deps/usr),-DRUNG_DEPS_PREFIX=$(CURDIR)/third_party/gpu-deps) \
	  -DCMAKE_PREFIX_PATH="$$($(PYTHON) -c 'import torch; print(torch.utils.cmake_prefix_path)')" $(CMAKE_FLAGS)
	cmake --build $(GPU_BUILD) -j $(JOBS) --target rung-train rung-model

gpu-check: gpu-build
	$(PYTHON) bench/gpu/check_hf_import.py --bin $(GPU_BUILD)/bin

bench-gpu:
	bench/gpu/run.sh --build-dir $(GPU_BUILD)

# libFuzzer targets (fuzz/, docs/fuzzing.md): their own build folder, clang-14, torch-free. New inputs
# go to $(FUZZ_BUILD)/fuzz-scratch, crashes to $(FUZZ_BUILD)/fuzz-artifacts; a crash fails the target.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_CI_SECONDS ?= 120

fuzz-build: deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 -DRUNG_FUZZ=ON \
	  -DRUNG_WITH_TORCH=OFF $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target rung_fuzzers

fuzz: fuzz-build
	fuzz/run.sh $(FUZZ_BUILD) --seconds $(FUZZ_SECONDS)

fuzz-ci: fuzz-build
	fuzz/run.sh $(FUZZ_BUILD) --total $(FUZZ_CI_SECONDS)
