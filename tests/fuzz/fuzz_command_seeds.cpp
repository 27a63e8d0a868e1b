// Writes the seed corpus of fuzz_command: one file per command of
// proto::all_commands (as a command and as a log entry) and one per stored record,
// each prefixed by fuzz_command's type byte. Run it again after adding a
// command: `fuzz_command_seeds tests/fuzz/corpus/command`.
#include <cstdio>
#include <fstream>
#include <string>

#include "proto/codec.hpp"
#include "proto/commands.hpp"
#include "proto/types.hpp"

namespace proto = aisched::proto;

namespace {

std::string dir;

void put(const std::string& name, char type, const std::string& bytes) {
  std::ofstream(dir + "/" + name, std::ios::binary) << type << bytes;
}

template <class... Ts>
void each_command(proto::command_list<Ts...>) {
  size_t i = 0;
  auto one = [&](auto x) {
    proto::command cmd = x;
    auto n = std::to_string(i++);
    put("command-" + n, 1, proto::encode(cmd));
    put("log_entry-" + n, 0, proto::encode(proto::log_entry{7, 3, cmd}));
  };
  (one(Ts{}), ...);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_command_seeds DIR\n");
    return 2;
  }
  dir = argv[1];
  each_command(proto::all_commands{});
  proto::task t;
  t.name = "nightly";
  t.schedule = "0 3 * * *";
  t.command = "echo hi";
  put("task", 2, proto::encode(t));
  put("instance", 3, proto::encode(proto::instance{}));
  put("attempt_record", 4, proto::encode(proto::attempt_record{}));
  put("task_runtime", 5, proto::encode(proto::task_runtime{}));
  put("run_result", 6, proto::encode(proto::run_result{}));
  put("set_membership", 7, proto::encode(proto::set_membership{}));
  return 0;
}
