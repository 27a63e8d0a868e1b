// Schedule expressions (cron, macros, @every, one-shot `at`) from untrusted task
// documents: parse never crashes, and whatever parses yields strictly increasing
// instants, each the next after the one before (what the planner relies on).
// Byte 0 picks the time zone, the rest is the expression.
#include "actors/trigger/schedule.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using aisched::trigger::schedule;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 512) return 0;
  static const char* zones[] = {"UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe",
                                "Asia/Kathmandu", "", "Not/AZone"};
  auto tz = zones[data[0] % (sizeof zones / sizeof zones[0])];
  auto expr = aisched::fuzz::as_text(data + 1, size - 1);
  // Around a spring-forward night in Europe and in the US, and a plain instant.
  const aisched::unix_ms starts[] = {1'711'846'800'000, 1'710'054'000'000, 1'764'547'200'000};
  for (auto kind : {0, 1}) {
    auto s = kind == 0 ? schedule::parse(expr, tz) : schedule::parse_at(expr);
    if (!s) continue;
    for (auto from : starts) {
      auto times = s->next_n(from, 6);
      aisched::unix_ms prev = from;
      for (auto t : times) {
        FUZZ_CHECK(t > prev, "instants strictly increase");
        FUZZ_CHECK(s->next_after(prev) == t, "next_n agrees with next_after");
        if (s->type() == schedule::kind::cron) FUZZ_CHECK(t % 1000 == 0, "cron: whole seconds");
        prev = t;
      }
    }
  }
  return 0;
}
