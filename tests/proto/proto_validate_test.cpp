// Tests of proto's validation rules (each broken rule names its field) and of
// its time helpers: RFC 3339 parsing and formatting, Go-style durations.
#include "proto/proto_fixture.hpp"

namespace aisched::proto {
namespace {

using namespace testing_support;

// -- validation ----------------------------------------------------------------

task valid_shell_task() {
  task t;
  t.name = "backup";
  t.command = "pg_dump shop";
  t.schedule = "0 3 * * *";
  return t;
}

TEST(validate, valid_tasks_of_every_kind_pass) {
  EXPECT_FALSE(validate_task(valid_shell_task()));

  auto h = valid_shell_task();
  h.kind = task_kind::http;
  h.command.clear();
  h.http.url = "https://example.com/hook";
  h.http.method = "DELETE";
  EXPECT_FALSE(validate_task(h));

  auto c = valid_shell_task();
  c.kind = task_kind::container;
  c.image = "alpine:3";
  EXPECT_FALSE(validate_task(c));

  auto n = valid_shell_task();
  n.kind = task_kind::noop;
  n.command.clear();
  n.schedule.clear();
  EXPECT_FALSE(validate_task(n)) << "no trigger at all means manual only";

  auto edges = valid_shell_task();
  edges.id = 3;
  edges.shards = 1024;
  edges.retry.max_attempts = 100;
  edges.retry.initial = edges.retry.max = 5'000;
  edges.start_at = t_2026_01_01;
  edges.end_at = t_2026_01_01 + 1;
  edges.depends_on = {1, 2, 4};
  edges.timeout = max_timeout;
  EXPECT_FALSE(validate_task(edges)) << "limits themselves are allowed";

  auto full = full_task();  // every field set, but three triggers at once
  full.at = 0;
  full.event.clear();
  EXPECT_FALSE(validate_task(full)) << view(validate_task(full)).message;
}

struct rule_case {
  const char* what;
  void (*breaks)(task&);
  const char* field;
};

TEST(validate, each_broken_rule_is_invalid_argument_naming_its_field) {
  const rule_case cases[] = {
      {"empty name", [](task& t) { t.name.clear(); }, "name"},
      {"name too long", [](task& t) { t.name.assign(max_name_length + 1, 'n'); }, "name"},
      {"shell without command", [](task& t) { t.command.clear(); }, "command"},
      {"http without url",
       [](task& t) {
         t.kind = task_kind::http;
         t.http.url.clear();
       },
       "http.url"},
      {"http with non-http url",
       [](task& t) {
         t.kind = task_kind::http;
         t.http.url = "ftp://example.com/x";
       },
       "http.url"},
      {"http with bare scheme",
       [](task& t) {
         t.kind = task_kind::http;
         t.http.url = "https://";
       },
       "http.url"},
      {"http with bad method",
       [](task& t) {
         t.kind = task_kind::http;
         t.http.url = "http://example.com";
         t.http.method = "FETCH";
       },
       "http.method"},
      {"container without image", [](task& t) { t.kind = task_kind::container; }, "image"},
      {"schedule and at", [](task& t) { t.at = t_2026_11_30_07; }, "schedule"},
      {"at and event",
       [](task& t) {
         t.schedule.clear();
         t.at = t_2026_11_30_07;
         t.event = "deploy";
       },
       "schedule"},
      {"shards 0", [](task& t) { t.shards = 0; }, "shards"},
      {"shards 1025", [](task& t) { t.shards = 1025; }, "shards"},
      {"timeout 0", [](task& t) { t.timeout = 0; }, "timeout"},
      {"timeout over a week", [](task& t) { t.timeout = max_timeout + 1; }, "timeout"},
      {"max_attempts 0", [](task& t) { t.retry.max_attempts = 0; }, "retry.max_attempts"},
      {"max_attempts 101", [](task& t) { t.retry.max_attempts = 101; }, "retry.max_attempts"},
      {"exponential max below initial",
       [](task& t) {
         t.retry.kind = retry_kind::exponential;
         t.retry.initial = 10'000;
         t.retry.max = 9'999;
       },
       "retry.max"},
      {"on_error_codes without codes",
       [](task& t) {
         t.retry.kind = retry_kind::on_error_codes;
         t.retry.error_codes.clear();
       },
       "retry.error_codes"},
      {"end_at equal to start_at",
       [](task& t) {
         t.start_at = t_2026_01_01;
         t.end_at = t_2026_01_01;
       },
       "end_at"},
      {"end_at before start_at",
       [](task& t) {
         t.start_at = t_2027_01_01;
         t.end_at = t_2026_01_01;
       },
       "end_at"},
      {"depends on itself",
       [](task& t) {
         t.id = 7;
         t.depends_on = {3, 7};
       },
       "depends_on"},
      {"duplicate dependency", [](task& t) { t.depends_on = {3, 5, 3}; }, "depends_on"},
      {"dependency id 0", [](task& t) { t.depends_on = {0}; }, "depends_on"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto t = valid_shell_task();
    c.breaks(t);
    auto e = view(validate_task(t));
    EXPECT_EQ(e.code, errc::invalid_argument);
    EXPECT_EQ(e.field, c.field);
    EXPECT_FALSE(e.message.empty());
  }
}

TEST(validate, http_header_with_cr_or_lf_is_refused_naming_the_header) {
  struct header_case {
    std::string name, value, field;
  };
  const header_case cases[] = {
      {"X-Foo", "a\r\nX-Injected: 1", "http.headers.X-Foo"},
      {"X-Foo", "a\nb", "http.headers.X-Foo"},
      {"X-Foo", "a\rb", "http.headers.X-Foo"},
      {"X-Bad\r\nX-Injected", "1", "http.headers.X-Bad\\r\\nX-Injected"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.field);
    auto t = valid_shell_task();
    t.kind = task_kind::http;
    t.http.url = "http://example.com/hook";
    t.http.headers = {{"X-Fine", "ok"}, {c.name, c.value}};
    auto e = view(validate_task(t));
    EXPECT_EQ(e.code, errc::invalid_argument);
    EXPECT_EQ(e.field, c.field);
    EXPECT_NE(e.message.find("CR or LF"), std::string::npos) << e.message;
  }
  auto fine = valid_shell_task();
  fine.kind = task_kind::http;
  fine.http.url = "http://example.com/hook";
  fine.http.headers = {{"X-Fine", "tab\tand: colon"}};
  EXPECT_FALSE(validate_task(fine));
}

TEST(validate, worker_needs_id_callback_url_and_capacity) {
  worker w;
  w.id = "w1";
  EXPECT_FALSE(validate_worker(w));
  auto no_id = w;
  no_id.id.clear();
  EXPECT_EQ(view(validate_worker(no_id)).field, "id");
  auto http = w;
  http.protocol = worker_protocol::http;
  http.address = "localhost:9000";
  EXPECT_EQ(view(validate_worker(http)).field, "callback_url");
  auto zero = w;
  zero.max_load = 0;
  EXPECT_EQ(view(validate_worker(zero)).field, "max_load");
}

// -- time ----------------------------------------------------------------------

TEST(time, rfc3339_parses_utc_offsets_and_milliseconds) {
  EXPECT_EQ(parse_rfc3339("2026-11-30T07:00:00Z"), t_2026_11_30_07);
  EXPECT_EQ(parse_rfc3339("2026-11-30t07:00:00z"), t_2026_11_30_07);
  EXPECT_EQ(parse_rfc3339("2026-11-30T08:00:00+01:00"), t_2026_11_30_07);
  EXPECT_EQ(parse_rfc3339("2026-11-30T01:30:00-05:30"), t_2026_11_30_07);
  EXPECT_EQ(parse_rfc3339("2026-11-30T07:00:00.250Z"), t_2026_11_30_07 + 250);
  EXPECT_EQ(parse_rfc3339("2026-11-30T07:00:00.5Z"), t_2026_11_30_07 + 500);
  EXPECT_EQ(parse_rfc3339("2026-11-30T07:00:00.123456789Z"), t_2026_11_30_07 + 123);
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_rfc3339("2024-02-29T12:00:00Z"), 1'709'208'000'000) << "leap day";
  EXPECT_EQ(parse_rfc3339("2027-01-01T00:59:59.999+01:00"), t_2027_01_01 - 1);
}

TEST(time, rfc3339_rejects_invalid_dates_and_garbage) {
  for (const char* s : {"2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
                        "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z",
                        "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "2026-01-01T00:00:00",
                        "2026-01-01 00:00:00Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00Z",
                        "2026-01-01T00:00:00+1:00", "2026-01-01T00:00:00+24:00",
                        "2026-01-01T00:00:00Zjunk", " 2026-01-01T00:00:00Z", "26-01-01T00:00:00Z",
                        "garbage", ""}) {
    EXPECT_FALSE(parse_rfc3339(s).has_value()) << "'" << s << "'";
  }
}

TEST(time, rfc3339_formats_utc_with_milliseconds_only_when_set) {
  EXPECT_EQ(format_rfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_rfc3339(t_2026_11_30_07), "2026-11-30T07:00:00Z");
  EXPECT_EQ(format_rfc3339(t_2026_11_30_07 + 250), "2026-11-30T07:00:00.250Z");
  EXPECT_EQ(format_rfc3339(t_2026_11_30_07 + 7), "2026-11-30T07:00:00.007Z");
  EXPECT_EQ(format_rfc3339(-1), "1969-12-31T23:59:59.999Z") << "before the epoch";
  EXPECT_EQ(parse_rfc3339("1969-12-31T23:59:59.999Z"), -1);
}

RC_GTEST_PROP(time, rfc3339_format_then_parse_is_identity, ()) {
  // 1970 .. 9999, the years RFC 3339 can write with four digits.
  const auto t = *rc::gen::inRange<unix_ms>(0, 253'402'300'800'000);
  RC_ASSERT(parse_rfc3339(format_rfc3339(t)) == std::optional<unix_ms>(t));
}

TEST(time, durations_parse_go_style_groups) {
  EXPECT_EQ(parse_duration("1h30m"), 5'400'000);
  EXPECT_EQ(parse_duration("500ms"), 500);
  EXPECT_EQ(parse_duration("10s"), 10'000);
  EXPECT_EQ(parse_duration("1m1ms"), 60'001);
  EXPECT_EQ(parse_duration("2h3m4s5ms"), 7'384'005);
  EXPECT_EQ(parse_duration("90m"), 5'400'000);
  EXPECT_EQ(parse_duration("0"), 0);
  EXPECT_EQ(parse_duration("0s"), 0);
}

TEST(time, durations_reject_garbage_and_overflow) {
  for (const char* s : {"", "10x", "-1s", "1.5s", "1h30", "h", "ms", " 1s", "1s ", "1 s", "1H",
                        "1d", "0x10s", "9223372036854775808ms", "2562047788016h",
                        "99999999999999999999s", "2562047788015h2562047788015h"}) {
    EXPECT_FALSE(parse_duration(s).has_value()) << "'" << s << "'";
  }
}

TEST(time, durations_format_the_way_they_parse) {
  EXPECT_EQ(format_duration(5'400'000), "1h30m");
  EXPECT_EQ(format_duration(500), "500ms");
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(3'723'004), "1h2m3s4ms");
  EXPECT_EQ(format_duration(48 * 3'600'000LL), "48h");
  constexpr auto max = std::numeric_limits<duration_ms>::max();
  EXPECT_EQ(parse_duration(format_duration(max)), max) << format_duration(max);
}

RC_GTEST_PROP(time, duration_format_then_parse_is_identity, ()) {
  const auto d = *rc::gen::inRange<duration_ms>(0, std::numeric_limits<duration_ms>::max());
  RC_ASSERT(parse_duration(format_duration(d)) == std::optional<duration_ms>(d));
}


}  // namespace
}  // namespace aisched::proto
