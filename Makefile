# Two commands for newcomers: `make run` and `make test`.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)

.PHONY: all build run test fuzz sim sim-past-bug bootstrap clean

all: build

bootstrap:
	@./tools/bootstrap.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: bootstrap $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	./$(BUILD_DIR)/runtime/aisched --data-dir ./data

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure --timeout 600 -j $(JOBS)
	$(MAKE) fuzz

# libFuzzer targets (clang, ASan, UBSan), FUZZ_SECONDS each; see tests/fuzz/.
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 10
fuzz: bootstrap
	cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++-14 -DAISCHED_FUZZ=ON -DAISCHED_FUZZ_SECONDS=$(FUZZ_SECONDS)
	cmake --build $(FUZZ_DIR) --target fuzz_targets -j $(JOBS)
	cd $(FUZZ_DIR) && ctest --output-on-failure --timeout 300 -j $(JOBS)

# More seeds of the scheduler simulation than ctest runs (tests/sim/run_seeds.sh):
# `make sim SEEDS=100000` runs seeds FIRST..FIRST+SEEDS-1 in JOBS processes, each
# ROUNDS rounds of three faults long (1: about 5.5 simulated minutes; 23: an hour).
SEEDS ?= 1000
FIRST ?= 1
ROUNDS ?= 1
sim: bootstrap $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) --target scheduler_sim_test -j $(JOBS)
	AISCHED_SIM_ROUNDS=$(ROUNDS) tests/sim/run_seeds.sh $(BUILD_DIR) $(FIRST) $$(( $(FIRST) + $(SEEDS) - 1 )) $(JOBS)

# A past bug put back for the simulation to catch (tests/sim/past-bugs/README.md):
# `make sim-past-bug BUG=pool-ec39c14 SEEDS=100` succeeds when a seed catches it.
sim-past-bug: bootstrap $(BUILD_DIR)/build.ninja
	tests/sim/put_back.sh $(BUILD_DIR) $(BUG) $(FIRST) $$(( $(FIRST) + $(SEEDS) - 1 )) $(JOBS)

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_DIR)
