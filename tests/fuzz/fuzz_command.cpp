// The decoding (proto/codec.hpp: the wire format) of what a node reads back
// from RocksDB and the raft log: every command, log entries and the stored
// records. Never crashes, never throws; any decoded value encodes to bytes
// that decode again, and a command read as the struct its type number names
// (visit_command, as the state machine does) re-encodes as a command that
// reads the same. The reader of data formats 0 and 1 (proto::format_1, CAF's
// encoding), which the migrations run over every stored record, holds to the
// same. Byte 0 picks the type, the rest is the encoding (seeds:
// fuzz_command_seeds).
#include "proto/codec.hpp"
#include "proto/command_visit.hpp"
#include "proto/commands.hpp"
#include "proto/types.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace proto = aisched::proto;

namespace {

template <class T>
void round_trip(std::string_view bytes) {
  auto x = proto::decode<T>(bytes);
  if (!x) return;
  auto again = proto::encode(*x);
  auto y = proto::decode<T>(again);
  FUZZ_CHECK(y, "what decodes, encodes to bytes that decode");
  FUZZ_CHECK(proto::encode(*y) == again, "encoding is stable");
}

/// Reads `cmd` as the state machine does; what reads, reads the same again.
void visit(const proto::command& cmd) {
  auto r = proto::visit_command(cmd, [&](const auto& c) -> caf::expected<bool> {
    proto::command again = c;
    FUZZ_CHECK(again.type == cmd.type, "a command keeps its type number");
    auto back = proto::command_as<std::decay_t<decltype(c)>>(again);
    FUZZ_CHECK(back.has_value(), "a command that reads, re-encodes to one that reads");
    FUZZ_CHECK(proto::command{*back}.data == again.data, "a command's encoding is stable");
    return true;
  });
  (void)r;
}

/// What the reader of formats 0 and 1 accepts encodes in both formats to
/// bytes that read back as the same value.
template <class T>
void format_1_round_trip(std::string_view bytes) {
  auto x = proto::format_1::decode<T>(bytes);
  if (!x) return;
  auto again = proto::format_1::decode<T>(proto::format_1::encode(*x));
  FUZZ_CHECK(again, "what format 1 reads, it writes back readable");
  auto wire = proto::decode<T>(proto::encode(*x));
  FUZZ_CHECK(wire, "what format 1 reads, format 2 writes readable");
  FUZZ_CHECK(proto::format_1::encode(*wire) == proto::format_1::encode(*x),
             "a migrated value is the value format 1 held");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 256 * 1024) return 0;
  auto bytes = aisched::fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 8) {
    case 0:
      round_trip<proto::log_entry>(bytes);
      if (auto e = proto::decode<proto::log_entry>(bytes)) visit(e->cmd);
      break;
    case 1:
      round_trip<proto::command>(bytes);
      if (auto c = proto::decode<proto::command>(bytes)) visit(*c);
      break;
    case 2:
      round_trip<proto::task>(bytes);
      format_1_round_trip<proto::task>(bytes);
      break;
    case 3:
      round_trip<proto::instance>(bytes);
      format_1_round_trip<proto::instance>(bytes);
      break;
    case 4: round_trip<proto::attempt_record>(bytes); break;
    case 5: round_trip<proto::task_runtime>(bytes); break;
    case 6:
      round_trip<proto::run_result>(bytes);
      format_1_round_trip<proto::run_result>(bytes);
      break;
    default: round_trip<proto::set_membership>(bytes); break;
  }
  return 0;
}
