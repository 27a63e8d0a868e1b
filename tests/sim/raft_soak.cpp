// raft_soak: a by-hand soak runner for the raft core simulation
// (raft_sim.hpp, beside it). Runs many seeds, prints a summary and, for each failing
// seed, the command that replays it. Not part of ctest: minutes, not seconds.
//
//   raft_soak --seeds 10000 --nodes 5              # seeds 1..10000
//   raft_soak --first 50000 --seeds 2000 --nodes 3,5
//   raft_soak --seed 1234 --nodes 5 --trace        # one run, every event printed
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "tests/sim/raft_sim.hpp"

namespace {

using aisched::steady_now;
using aisched::raft::sim::options;

void usage() {
  std::puts(
      "usage: raft_soak [--seeds N] [--first S] [--seed S] [--nodes 3,5] [--steps K]\n"
      "                 [--pre-vote 0|1] [--check-quorum 0|1] [--keep-going] [--trace]\n"
      "  --seeds N        number of seeds to run (default 1000)\n"
      "  --first S        first seed (default 1)\n"
      "  --seed S         run exactly one seed (same as --first S --seeds 1)\n"
      "  --nodes LIST     group sizes, comma separated (default 3,5)\n"
      "  --steps K        chaos events per run (default 3000)\n"
      "  --pre-vote B     force pre-vote on/off (default: drawn from the seed)\n"
      "  --check-quorum B force check-quorum on/off (default: drawn from the seed)\n"
      "  --keep-going     do not stop at the first failure\n"
      "  --trace          print every event (use with --seed)");
}

std::vector<size_t> parse_sizes(const char* arg) {
  std::vector<size_t> out;
  std::string s{arg};
  size_t pos = 0;
  while (pos <= s.size()) {
    auto comma = s.find(',', pos);
    auto part = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!part.empty()) out.push_back(std::strtoull(part.c_str(), nullptr, 10));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t first = 1;
  uint64_t seeds = 1000;
  std::vector<size_t> sizes{3, 5};
  options base;
  bool keep_going = false;
  for (int i = 1; i < argc; ++i) {
    auto is = [&](const char* name) { return std::strcmp(argv[i], name) == 0; };
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "raft_soak: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (is("--seeds")) {
      seeds = std::strtoull(value(), nullptr, 10);
    } else if (is("--first")) {
      first = std::strtoull(value(), nullptr, 10);
    } else if (is("--seed")) {
      first = std::strtoull(value(), nullptr, 10);
      seeds = 1;
    } else if (is("--nodes")) {
      sizes = parse_sizes(value());
    } else if (is("--steps")) {
      base.steps = std::strtoull(value(), nullptr, 10);
    } else if (is("--pre-vote")) {
      base.pre_vote = std::strcmp(value(), "1") == 0;
    } else if (is("--check-quorum")) {
      base.check_quorum = std::strcmp(value(), "1") == 0;
    } else if (is("--keep-going")) {
      keep_going = true;
    } else if (is("--trace")) {
      base.trace = stderr;
    } else {
      usage();
      return is("--help") || is("-h") ? 0 : 2;
    }
  }
  for (auto n : sizes) {
    if (n < 1 || n > 9) {
      std::fprintf(stderr, "raft_soak: --nodes takes sizes from 1 to 9\n");
      return 2;
    }
  }
  aisched::raft::sim::install_abort_reporter("raft_soak");
  auto start = steady_now();
  uint64_t runs = 0;
  uint64_t failures = 0;
  uint64_t ticks = 0;
  uint64_t crashes = 0;
  uint64_t snapshots = 0;
  uint64_t leaders = 0;
  uint64_t committed = 0;
  int worst_recovery = 0;
  for (auto n : sizes) {
    for (auto seed = first; seed < first + seeds; ++seed) {
      auto opts = base;
      opts.seed = seed;
      opts.nodes = n;
      auto res = aisched::raft::sim::run(opts);
      ++runs;
      ticks += res.stats.ticks;
      crashes += res.stats.crashes;
      snapshots += res.stats.snapshots;
      leaders += res.stats.leaders;
      committed += res.stats.committed;
      worst_recovery = std::max(worst_recovery, res.stats.max_recovery_ticks);
      if (!res.ok) {
        ++failures;
        std::printf("FAIL seed %llu, %zu members: %s\n  profile: %s\n  replay:  %s\n",
                    static_cast<unsigned long long>(seed), n, res.failure.c_str(),
                    res.profile.c_str(), aisched::raft::sim::replay_hint(opts).c_str());
        std::fflush(stdout);
        if (!keep_going) goto done;
      }
      if (seeds > 1 && runs % 500 == 0) {
        std::printf("  ... %llu runs, %llu failures\n", static_cast<unsigned long long>(runs),
                    static_cast<unsigned long long>(failures));
        std::fflush(stdout);
      }
    }
  }
done:
  auto secs = std::chrono::duration<double>(steady_now() - start).count();
  std::printf(
      "%llu runs, %llu failures in %.1f s: %llu ticks, %llu crashes, %llu snapshots "
      "installed, %llu leaders, %llu entries committed, worst recovery %d ticks\n",
      static_cast<unsigned long long>(runs), static_cast<unsigned long long>(failures), secs,
      static_cast<unsigned long long>(ticks), static_cast<unsigned long long>(crashes),
      static_cast<unsigned long long>(snapshots), static_cast<unsigned long long>(leaders),
      static_cast<unsigned long long>(committed), worst_recovery);
  return failures == 0 ? 0 : 1;
}
