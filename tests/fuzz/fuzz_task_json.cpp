// A task document as a client sends it to POST /api/v1/tasks: the body parse,
// the strict decoding, validation and the schedule check the route applies
// (gateway/api.cpp validate_full, less its clock). Never crashes; an error names
// a field; an accepted task's JSON view reads back to the same view; any parsed
// body prints (to_text) as JSON that reads back as the same value.
#include <algorithm>
#include <cmath>

#include <boost/json.hpp>

#include "actors/trigger/schedule.hpp"
#include "proto/json.hpp"
#include "proto/validate.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace proto = aisched::proto;
namespace json = boost::json;

namespace {

/// Equal values, doubles within a relative 1e-14: Boost.JSON 1.81's parser is
/// not correctly rounded (`2222E222` and its shortest form read back a few
/// ulps apart), which to_text cannot mend.
bool same(const json::value& a, const json::value& b) {
  if (a.is_number() && b.is_number() && (a.is_double() || b.is_double())) {
    double x = a.to_number<double>(), y = b.to_number<double>();
    return x == y || std::fabs(x - y) <= 1e-14 * std::max(std::fabs(x), std::fabs(y));
  }
  if (a.kind() != b.kind()) return false;
  if (a.is_array()) {
    auto &p = a.get_array(), &q = b.get_array();
    if (p.size() != q.size()) return false;
    for (size_t i = 0; i < p.size(); ++i)
      if (!same(p[i], q[i])) return false;
    return true;
  }
  if (a.is_object()) {
    auto &p = a.get_object(), &q = b.get_object();
    if (p.size() != q.size()) return false;
    for (auto& kv : p) {
      auto* other = q.if_contains(kv.key());
      if (!other || !same(kv.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  auto v = proto::parse_json(aisched::fuzz::as_text(data, size));
  if (!v) {
    auto body = proto::to_text(proto::error_to_json(v.error()));
    FUZZ_CHECK(proto::parse_json(body), "an error body is JSON");
    return 0;
  }
  auto text = proto::to_text(*v);
  auto reparsed = proto::parse_json(text);
  FUZZ_CHECK(reparsed, "to_text prints JSON");
  FUZZ_CHECK(same(*reparsed, *v), "to_text reads back as the same value");

  auto t = proto::task_from_json(*v);
  if (!t) {
    FUZZ_CHECK(proto::parse_json(proto::to_text(proto::error_to_json(t.error()))),
               "an error body is JSON");
    return 0;
  }
  if (proto::validate_task(*t)) return 0;
  auto s = aisched::trigger::schedule::parse(t->schedule.empty() ? "@every 1h" : t->schedule,
                                             t->timezone);
  if (!s) return 0;
  if (!t->schedule.empty()) s->next_n(1'764'547'200'000, 3, t->start_at, t->end_at);

  auto view = proto::to_json(*t);
  auto back = proto::task_from_json(view);
  FUZZ_CHECK(back, "an accepted task's view decodes");
  FUZZ_CHECK(proto::to_text(proto::to_json(*back)) == proto::to_text(view),
             "an accepted task's view reads back to itself");
  FUZZ_CHECK(!proto::validate_task(*back), "an accepted task's view validates");
  return 0;
}
