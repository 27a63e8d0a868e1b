// CAF binary decoding (proto/codec.hpp) of what a node reads back from RocksDB
// and the raft log: every command, log entries and the stored records. Never
// crashes, never throws; a decoded command or log entry is canonical (it encodes
// to the same bytes); any decoded value encodes to bytes that decode again. The
// records read by hand (instance, run_result: proto/hand_codec.cpp) are read
// as CAF's reader reads them: the same bytes accepted, the same value.
// Byte 0 picks the type, the rest is the encoding (seeds: fuzz_command_seeds).
#include "proto/codec.hpp"
#include "proto/commands.hpp"
#include "proto/types.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace proto = aisched::proto;

namespace {

template <class T>
void round_trip(std::string_view bytes, bool canonical) {
  auto x = proto::decode<T>(bytes);
  if (!x) return;
  auto again = proto::encode(*x);
  if (canonical) FUZZ_CHECK(again == bytes, "a decoded command is canonical");
  auto y = proto::decode<T>(again);
  FUZZ_CHECK(y, "what decodes, encodes to bytes that decode");
  FUZZ_CHECK(proto::encode(*y) == again, "encoding is stable");
}

/// The hand reader of T accepts what CAF's accepts, as the same value.
template <class T>
void read_as_caf_does(std::string_view bytes) {
  auto mine = proto::decode<T>(bytes);
  auto cafs = proto::detail::caf_decode<T>(bytes);
  FUZZ_CHECK(static_cast<bool>(mine) == static_cast<bool>(cafs),
             "the hand reader accepts what CAF's reader accepts, no more");
  if (mine)
    FUZZ_CHECK(proto::detail::caf_encode(*mine) == proto::detail::caf_encode(*cafs),
               "the hand reader reads the value CAF's reader reads");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 256 * 1024) return 0;
  auto bytes = aisched::fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 8) {
    case 0: round_trip<proto::log_entry>(bytes, true); break;
    case 1: round_trip<proto::command>(bytes, true); break;
    case 2: round_trip<proto::task>(bytes, false); break;
    case 3:
      round_trip<proto::instance>(bytes, false);
      read_as_caf_does<proto::instance>(bytes);
      break;
    case 4: round_trip<proto::attempt_record>(bytes, false); break;
    case 5: round_trip<proto::task_runtime>(bytes, false); break;
    case 6:
      round_trip<proto::run_result>(bytes, false);
      read_as_caf_does<proto::run_result>(bytes);
      break;
    default: round_trip<proto::set_membership>(bytes, false); break;
  }
  return 0;
}
