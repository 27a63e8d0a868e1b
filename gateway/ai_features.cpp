// The AI structured-feature routes; see ai_features.hpp. Each request runs in
// a short-lived bridge actor that gathers the facts step by step (a failed
// step leaves its facts out and says so in "notes" rather than failing the
// request), then the rules answer, then the model's judgement when one is
// configured. The model's reply runs on the LLM client's thread and answers
// through the (thread-safe) reply function.
#include "gateway/ai_features.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <set>
#include <memory>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "actors/ai_features/advisor.hpp"
#include "actors/ai_features/judgement.hpp"
#include "actors/ai_features/stats.hpp"
#include "actors/ai_features/task_draft.hpp"
#include "common/clock.hpp"
#include "proto/errors.hpp"
#include "proto/json.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

/// Instances read per state for one feature's facts: the facts are exact below
/// it and say `scan_limit_reached` above it.
constexpr size_t scan_limit = 2000;
/// A model call takes longer than a store read.
constexpr std::chrono::seconds analyze_timeout{120};

using bridge = caf::event_based_actor*;

// -- gathering facts ---------------------------------------------------------

/// One asynchronous step; calls `next` exactly once when done.
using step = std::function<void(std::function<void()> next)>;

void run_steps(std::shared_ptr<std::vector<step>> steps, size_t i, std::function<void()> last) {
  if (i == steps->size()) return last();
  (*steps)[i]([=] { run_steps(steps, i + 1, last); });
}

/// What the steps gather, shared by them.
struct gathered {
  std::vector<load_sample> load;  // worker load history samples, when asked for
  std::string tenant;  // the caller's: every fact is scoped to it
  std::vector<worker> workers;
  bool have_pressure = false;
  pressure_status pressure;
  std::vector<instance> runs;  // finished runs (success, failed, timed_out) in range
  bool scan_limit_reached = false;
  json::array notes;
};

std::string level_name(pressure_level l) {
  static const char* names[] = {"green", "yellow", "red"};
  return names[static_cast<int>(l)];
}

unix_ms finished_time(const instance& x) {
  return x.finished_at ? x.finished_at : std::max(x.dispatched_at, x.created_at);
}

step workers_step(bridge self, const api_context& ctx, std::shared_ptr<gathered> g) {
  return [=](std::function<void()> next) {
    self->request(ctx.router, ctx.timeout, list_workers_atom::value)
        .then(
            [=](worker_list& l) {
              for (auto& w : l.items)
                if (w.tenant == g->tenant) g->workers.push_back(std::move(w));
              next();
            },
            [=](caf::error& e) {
              g->notes.emplace_back("workers unavailable: " + view(e).message);
              next();
            });
  };
}

/// The worker load history samples between `from` and `to` (all workers; the
/// caller keeps those of its tenant's workers).
step load_step(bridge self, const api_context& ctx, std::shared_ptr<gathered> g, unix_ms from,
               unix_ms to) {
  return [=](std::function<void()> next) {
    load_query q;
    q.since = from;
    q.until = to;
    self->request(ctx.store, ctx.timeout, load_history_atom::value, q)
        .then(
            [=](load_history& h) {
              g->load = std::move(h.items);
              next();
            },
            [=](caf::error& e) {
              g->notes.emplace_back("load history unavailable: " + view(e).message);
              next();
            });
  };
}

step pressure_step(bridge self, const api_context& ctx, std::shared_ptr<gathered> g) {
  return [=](std::function<void()> next) {
    self->request(ctx.backpressure, ctx.timeout, pressure_status_atom::value)
        .then(
            [=](pressure_status& p) {
              g->pressure = p;
              g->have_pressure = true;
              if (!p.leading) g->notes.emplace_back("this node does not lead: backlog and "
                                                    "pressure are the leader's to know");
              next();
            },
            [=](caf::error& e) {
              g->notes.emplace_back("backpressure unavailable: " + view(e).message);
              next();
            });
  };
}

/// Pages through the instances in `state` (or of `task_id`, newest first) and
/// keeps those for which `keep` holds, reading at most scan_limit.
step runs_step(bridge self, const api_context& ctx, std::shared_ptr<gathered> g,
               instance_query q, std::function<bool(const instance&)> keep) {
  return [=](std::function<void()> next) {
    auto read = std::make_shared<size_t>(0);
    auto page = std::make_shared<std::function<void(std::string)>>();
    *page = [=](std::string cursor) {
      auto pq = q;
      pq.tenant = g->tenant;
      pq.cursor = std::move(cursor);
      pq.limit = 500;
      self->request(ctx.store, ctx.timeout, list_instances_atom::value, pq)
          .then(
              [=](instance_page& p) {
                *read += p.items.size();
                for (auto& x : p.items)
                  if (keep(x)) g->runs.push_back(std::move(x));
                if (!p.next_cursor.empty() && *read < scan_limit) return (*page)(p.next_cursor);
                if (!p.next_cursor.empty()) g->scan_limit_reached = true;
                *page = nullptr;  // break the self-reference
                next();
              },
              [=](caf::error& e) {
                g->notes.emplace_back("instances unavailable: " + view(e).message);
                *page = nullptr;
                next();
              });
    };
    (*page)("");
  };
}

instance_query by_state(instance_state s) {
  instance_query q;
  q.by_state = true;
  q.state = s;
  return q;
}

/// Steps reading the finished runs (success, failed, timed_out) since `from`.
void add_finished_runs(std::vector<step>& steps, bridge self, const api_context& ctx,
                       std::shared_ptr<gathered> g, unix_ms from) {
  for (auto s : {instance_state::success, instance_state::failed, instance_state::timed_out})
    steps.push_back(runs_step(self, ctx, g, by_state(s),
                              [from](const instance& x) { return finished_time(x) >= from; }));
}

std::vector<ai::worker_fact> worker_facts(const std::vector<worker>& ws) {
  std::vector<ai::worker_fact> out;
  for (auto& w : ws)
    out.push_back({w.id, std::string(name_of(w.status)), w.load, w.max_load, w.cpu_percent,
                   w.memory_percent});
  return out;
}

json::value worker_facts_json(const std::vector<ai::worker_fact>& ws) {
  json::array a;
  for (auto& w : ws)
    a.push_back(json::object{{"id", w.id},
                             {"status", w.status},
                             {"load", w.load},
                             {"max_load", w.max_load},
                             {"utilization", w.utilization()},
                             {"cpu_percent", w.cpu_percent},
                             {"memory_percent", w.memory_percent}});
  return a;
}

double utilization_of(const std::vector<ai::worker_fact>& ws) {
  uint64_t load = 0, cap = 0;
  for (auto& w : ws)
    if (w.status == "online") load += w.load, cap += w.max_load;
  return cap ? double(load) / double(cap) : 0;
}

// -- the model's judgement ---------------------------------------------------

/// Checks the model's object and, when it is acceptable, merges it into the
/// answer; an error leaves the answer untouched.
using merge_fn = std::function<caf::error(json::object& answer, const json::object& judged)>;

/// `answer` with the model's `text` merged in by `merge`, or why the text is rejected.
caf::error accept_judgement(json::object& answer, const std::string& text, const merge_fn& merge) {
  auto o = ai::extract_json_object(text);
  if (!o) return make_error(errc::invalid_argument, "body", "no JSON object in the reply");
  return merge(answer, *o);
}

/// Answers `answer` (the facts and the rules' reading) as is without a model
/// (marked `llm_not_configured`), else with the model's judgement merged in
/// (`source: "llm"`), or with `llm_error` when the model failed or its answer
/// did not pass `merge` (then counted as ai_requests_total{result="invalid"}).
void judge_and_reply(const api_context& ctx, const std::string& feature, std::string system,
                     json::object answer, merge_fn merge, reply_fn reply) {
  answer["source"] = "rules";
  if (!ctx.judge) {
    answer["llm_not_configured"] = true;
    return reply(json_response(200, answer));
  }
  auto facts = json::serialize(answer);
  // The judge's verdict: the same merge on a copy, so the count matches the reply.
  auto check = [answer, merge](const std::string& text) {
    auto copy = answer;
    return accept_judgement(copy, text, merge);
  };
  ctx.judge(ai::judge_request{feature, std::move(system), std::move(facts), std::move(check)},
            [answer, merge, reply](caf::expected<std::string> r) mutable {
              if (!r) {
                answer["llm_error"] = "model unavailable: " + view(r.error()).message;
                return reply(json_response(200, answer));
              }
              auto merged = answer;
              if (auto err = accept_judgement(merged, *r, merge)) {
                answer["llm_error"] = "model answer rejected: " + view(err).message;
                return reply(json_response(200, answer));
              }
              merged["source"] = "llm";
              reply(json_response(200, merged));
            });
}

caf::error bad_judgement(const std::string& field, const std::string& why) {
  return make_error(errc::invalid_argument, field, field + ": " + why);
}

/// Reads the model's recommendations: each with a known type and priority.
caf::expected<json::array> judged_recommendations(const json::object& o) {
  auto* rs = o.if_contains("recommendations");
  if (!rs || !rs->is_array()) return bad_judgement("recommendations", "expected an array");
  json::array out;
  for (auto& r : rs->as_array()) {
    if (!r.is_object()) return bad_judgement("recommendations", "expected objects");
    auto& ro = r.as_object();
    auto type = ai::required_string(ro, "type");
    if (!type) return type.error();
    if (*type != "throttle" && *type != "migrate" && *type != "scale" && *type != "config")
      return bad_judgement("type", "one of throttle, migrate, scale, config");
    json::object rec{{"type", *type}};
    for (auto key : {"priority", "target", "reason", "action"}) {
      auto s = ai::required_string(ro, key);
      if (!s) return s.error();
      rec[key] = *s;
    }
    auto p = rec["priority"].as_string();
    if (p != "low" && p != "medium" && p != "high")
      return bad_judgement("priority", "one of low, medium, high");
    out.push_back(std::move(rec));
  }
  return out;
}

caf::error merge_recommendations(json::object& answer, const json::object& judged) {
  auto recs = judged_recommendations(judged);
  if (!recs) return recs.error();
  auto summary = ai::required_string(judged, "summary");
  if (!summary) return summary.error();
  answer["rule_recommendations"] = answer["recommendations"];
  answer["recommendations"] = std::move(*recs);
  answer["summary"] = *summary;
  return {};
}

const char* recommendation_shape =
    "Answer with ONE JSON object and nothing else: {\"summary\": string, \"recommendations\": "
    "[{\"type\": \"throttle\"|\"migrate\"|\"scale\"|\"config\", \"priority\": "
    "\"low\"|\"medium\"|\"high\", \"target\": string, \"reason\": string (cite the facts), "
    "\"action\": string}]}. An empty list is fine when nothing needs doing.";

// -- routes ------------------------------------------------------------------

void analysis(const api_context& ctx, bool recompute, const std::string& tenant,
              const std::string& id, reply_fn reply) {
  bool configured = static_cast<bool>(ctx.judge);
  auto on_ok = [reply, configured](failure_analysis& a) {
    auto v = to_json(a);
    if (!configured) v.as_object()["llm_not_configured"] = true;
    reply(json_response(200, v));
  };
  auto on_err = [reply](caf::error& e) { reply(error_response(e)); };
  auto target = ctx.analysis;
  auto timeout = recompute ? std::chrono::milliseconds(analyze_timeout) : ctx.timeout;
  ctx.sys->spawn([=](caf::event_based_actor* self) {
    if (recompute)
      self->request(target, timeout, analyze_atom::value, tenant, id)
          .then(on_ok, on_err);
    else
      self->request(target, timeout, get_analysis_atom::value, tenant, id)
          .then(on_ok, on_err);
  });
}

void advice(const api_context& ctx, const std::string& tenant, reply_fn reply) {
  ctx.sys->spawn([ctx, tenant, reply](caf::event_based_actor* self) {
    auto g = std::make_shared<gathered>();
    g->tenant = tenant;
    auto now = system_now_ms();
    auto hour_ago = now - 3'600'000;
    auto steps = std::make_shared<std::vector<step>>();
    steps->push_back(workers_step(self, ctx, g));
    steps->push_back(pressure_step(self, ctx, g));
    add_finished_runs(*steps, self, ctx, g, hour_ago);
    run_steps(steps, 0, [=] {
      ai::advice_facts f;
      f.workers = worker_facts(g->workers);
      if (g->have_pressure && g->pressure.leading) {
        f.backlog = g->pressure.backlog;
        f.max_backlog = g->pressure.max_backlog;
        f.pressure = level_name(g->pressure.current.level);
      } else {
        f.pressure = "unknown";
      }
      std::vector<double> waits;
      for (auto& x : g->runs) {
        ++f.runs_last_hour;
        if (x.state != instance_state::success) {
          ++f.failures_last_hour;
          ++f.failures_by_task[x.task_id];
        }
        if (x.dispatched_at >= hour_ago && x.created_at && x.dispatched_at >= x.created_at)
          waits.push_back(double(x.dispatched_at - x.created_at));
      }
      std::sort(waits.begin(), waits.end());
      f.dispatch_samples = waits.size();
      f.dispatch_p50_ms = ai::percentile(waits, 50);
      f.dispatch_p95_ms = ai::percentile(waits, 95);
      json::object by_task;
      for (auto& [task, n] : f.failures_by_task) by_task[std::to_string(task)] = n;
      json::object facts{{"workers", worker_facts_json(f.workers)},
                         {"utilization", utilization_of(f.workers)},
                         {"backpressure", f.pressure},
                         {"backlog", f.backlog},
                         {"max_backlog", f.max_backlog},
                         {"runs_last_hour", f.runs_last_hour},
                         {"failures_last_hour", f.failures_last_hour},
                         {"failures_by_task", std::move(by_task)},
                         {"dispatch_latency_ms",
                          json::object{{"samples", f.dispatch_samples},
                                       {"p50", f.dispatch_p50_ms},
                                       {"p95", f.dispatch_p95_ms}}},
                         {"scan_limit_reached", g->scan_limit_reached}};
      json::object answer{{"generated_at", format_rfc3339(now)},
                          {"facts", std::move(facts)},
                          {"recommendations", ai::to_json(ai::advise(f))},
                          {"notes", g->notes}};
      judge_and_reply(ctx, "advice",
                      std::string("You advise the operator of aisched, a distributed job "
                                  "scheduler, from live facts (worker load, backlog, "
                                  "backpressure, failures in the last hour, dispatch latency) "
                                  "and the rule engine's recommendations. ") +
                          recommendation_shape,
                      std::move(answer), merge_recommendations, reply);
    });
  });
}

/// Parses and validates a drafted task document exactly like a REST create.
json::object checked_draft(const json::object& doc, const std::string& tenant) {
  json::object out{{"document", doc}};
  auto t = task_from_json(doc);
  if (!t) {
    out["valid"] = false;
    out["validation_error"] = error_to_json(t.error()).as_object()["error"];
    return out;
  }
  t->tenant = tenant;
  if (auto err = validate_full(*t, system_now_ms())) {
    out["valid"] = false;
    out["validation_error"] = error_to_json(err).as_object()["error"];
    return out;
  }
  out["valid"] = true;
  out["task"] = task_view(*t);
  return out;
}

void task_draft(const api_context& ctx, http_request& req, reply_fn reply) {
  auto body = parse_json(req.body);
  if (!body) return reply(error_response(body.error()));
  auto* text = body->is_object() ? body->as_object().if_contains("text") : nullptr;
  if (!text || !text->is_string() || text->as_string().empty() || text->as_string().size() > 4000)
    return reply(error_response(make_error(errc::invalid_argument, "text",
                                           "text: a description of 1 to 4000 characters")));
  std::string input(text->as_string());
  std::string why;
  auto doc = ai::draft_from_text(input, why);
  json::object answer{{"text", input}, {"created", false}};
  if (doc) {
    auto checked = checked_draft(*doc, req.who.tenant);
    for (auto& kv : checked) answer[kv.key()] = kv.value();
  } else {
    // An invalid draft always says why, in the same place a rejected document does.
    answer["valid"] = false;
    answer["document"] = nullptr;
    answer["validation_error"] =
        error_to_json(make_error(errc::invalid_argument, "text", why)).as_object()["error"];
  }
  if (!why.empty()) answer["notes"] = why;
  auto merge = [tenant = req.who.tenant](json::object& answer,
                                         const json::object& judged) -> caf::error {
    auto* inner = judged.if_contains("task");
    const json::object& doc = inner && inner->is_object() ? inner->as_object() : judged;
    auto checked = checked_draft(doc, tenant);
    if (!checked["valid"].as_bool())
      return bad_judgement("task", "the drafted task is not valid: " +
                                       json::serialize(checked["validation_error"]));
    answer["rule_document"] = answer["document"];
    for (auto& kv : checked) answer[kv.key()] = kv.value();
    answer.erase("validation_error");
    if (auto* n = judged.if_contains("notes"); n && n->is_string()) answer["notes"] = *n;
    return {};
  };
  judge_and_reply(
      ctx, "task_draft",
      "You turn an operator's request into an aisched task document, to be shown for "
      "confirmation (never created). Fields: name (string), kind (\"shell\"|\"http\"), command "
      "(shell), http {method, url, headers, body} (http), schedule (5- or 6-field cron, "
      "\"@every 5m\", \"@hourly\", \"@daily\"), timezone (IANA, default UTC), timeout (\"10m\"), "
      "retry {policy: \"fixed\"|\"exponential\", max_attempts}, labels {}. The facts include "
      "a rule-based draft you may improve. Answer with ONE JSON object and nothing else: "
      "{\"task\": {...the task document...}, \"notes\": string}.",
      std::move(answer), merge, reply);
}

void duration(const api_context& ctx, const std::string& tenant, uint64_t task_id,
              reply_fn reply) {
  ctx.sys->spawn([ctx, tenant, task_id, reply](caf::event_based_actor* self) {
    self->request(ctx.store, ctx.timeout, get_task_atom::value, tenant, task_id)
        .then(
            [=](task& t) {
              auto g = std::make_shared<gathered>();
              g->tenant = tenant;
              instance_query q;
              q.task_id = task_id;
              auto steps = std::make_shared<std::vector<step>>();
              steps->push_back(runs_step(self, ctx, g, q, [](const instance& x) {
                return x.state == instance_state::success && x.started_at && x.finished_at &&
                       x.finished_at >= x.started_at;
              }));
              auto name = t.name;
              run_steps(steps, 0, [=] {
                auto runs = g->runs;
                std::sort(runs.begin(), runs.end(), [](const instance& a, const instance& b) {
                  return a.started_at < b.started_at;
                });
                std::vector<double> ds;
                for (auto& x : runs) ds.push_back(double(x.finished_at - x.started_at));
                auto s = ai::compute_duration_stats(ds);
                json::array recent;
                for (size_t i = ds.size() > 20 ? ds.size() - 20 : 0; i < ds.size(); ++i)
                  recent.push_back(ds[i]);
                json::object answer{{"task_id", task_id},
                                    {"task_name", name},
                                    {"count", s.count},
                                    {"mean_ms", s.mean_ms},
                                    {"p50_ms", s.p50_ms},
                                    {"p95_ms", s.p95_ms},
                                    {"max_ms", s.max_ms},
                                    {"min_ms", s.min_ms},
                                    {"slope_ms_per_run", s.slope_ms_per_run},
                                    {"trend", s.trend},
                                    {"trend_source", "regression"},
                                    {"estimate_next_ms", s.next_estimate_ms},
                                    {"recent_ms", std::move(recent)},
                                    {"scan_limit_reached", g->scan_limit_reached},
                                    {"notes", g->notes}};
                auto merge = [](json::object& answer, const json::object& j) -> caf::error {
                  auto trend = ai::required_string(j, "trend");
                  if (!trend) return trend.error();
                  if (*trend != "rising" && *trend != "stable" && *trend != "falling")
                    return bad_judgement("trend", "one of rising, stable, falling");
                  auto* est = j.if_contains("estimate_next_ms");
                  if (est && !(est->is_number() && est->to_number<double>() >= 0))
                    return bad_judgement("estimate_next_ms", "a number >= 0");
                  answer["regression_trend"] = answer["trend"];
                  answer["trend"] = *trend;
                  answer["trend_source"] = "llm";
                  if (est) answer["llm_estimate_next_ms"] = est->to_number<double>();
                  if (auto* r = j.if_contains("reasoning"); r && r->is_string())
                    answer["reasoning"] = *r;
                  return {};
                };
                judge_and_reply(
                    ctx, "duration",
                    "You judge the trend of a scheduled task's run durations. aisched "
                    "computed the statistics (milliseconds) and a least-squares trend; "
                    "recent_ms lists the latest durations, oldest first. Answer with ONE JSON "
                    "object and nothing else: {\"trend\": \"rising\"|\"stable\"|\"falling\", "
                    "\"estimate_next_ms\": number, \"reasoning\": string}.",
                    std::move(answer), merge, reply);
              });
            },
            [=](caf::error& e) { reply(error_response(e)); });
  });
}

void trends(const api_context& ctx, http_request& req, reply_fn reply) {
  duration_ms window = 24 * 3'600'000LL;
  if (auto i = req.query.find("window"); i != req.query.end()) {
    auto w = parse_duration(i->second);
    if (!w || *w < 3'600'000 || *w > 7 * 24 * 3'600'000LL)
      return reply(error_response(make_error(errc::invalid_argument, "window",
                                             "window: a duration from 1h to 168h, e.g. 24h")));
    window = *w;
  }
  ctx.sys->spawn([ctx, window, reply, tenant = req.who.tenant](caf::event_based_actor* self) {
    auto g = std::make_shared<gathered>();
    g->tenant = tenant;
    auto to = system_now_ms();
    auto from = to - window;
    auto steps = std::make_shared<std::vector<step>>();
    steps->push_back(workers_step(self, ctx, g));
    steps->push_back(pressure_step(self, ctx, g));
    add_finished_runs(*steps, self, ctx, g, from);
    steps->push_back(load_step(self, ctx, g, from, to));
    run_steps(steps, 0, [=] {
      constexpr size_t n = 12;
      std::vector<ai::run_outcome> outcomes;
      for (auto& x : g->runs)
        outcomes.push_back({finished_time(x), x.state != instance_state::success});
      auto slices = ai::slice_outcomes(outcomes, from, to, n);
      // Load from what exists: the run time the workers spent in each slice.
      std::vector<double> busy(slices.size(), 0);
      for (auto& x : g->runs) {
        if (!x.started_at || !x.finished_at) continue;
        for (size_t i = 0; i < slices.size(); ++i) {
          auto lo = std::max(x.started_at, slices[i].start);
          auto hi = std::min(x.finished_at, slices[i].end);
          if (hi > lo) busy[i] += double(hi - lo) / 1000.0;
        }
      }
      // Utilization per slice from the sampled worker load (of this tenant's
      // workers): the direction of load comes from it when there are samples.
      std::set<std::string> own;
      for (auto& w : g->workers) own.insert(w.id);
      std::vector<double> used(slices.size(), 0), capacity(slices.size(), 0);
      for (auto& sample : g->load) {
        if (!own.count(sample.worker_id)) continue;
        for (size_t i = 0; i < slices.size(); ++i)
          if (sample.at >= slices[i].start && sample.at < slices[i].end) {
            used[i] += sample.load;
            capacity[i] += sample.max_load;
          }
      }
      json::array items;
      std::vector<std::pair<double, double>> load_pts, fail_pts, util_pts;
      uint64_t runs = 0, failures = 0;
      for (size_t i = 0; i < slices.size(); ++i) {
        auto& s = slices[i];
        runs += s.runs;
        failures += s.failures;
        load_pts.emplace_back(double(i), busy[i]);
        auto utilization = capacity[i] > 0 ? json::value(used[i] / capacity[i]) : json::value(nullptr);
        if (capacity[i] > 0) util_pts.emplace_back(double(i), used[i] / capacity[i]);
        if (s.runs) fail_pts.emplace_back(double(i), s.failure_rate());
        items.push_back(json::object{{"start", format_rfc3339(s.start)},
                                     {"end", format_rfc3339(s.end)},
                                     {"runs", s.runs},
                                     {"failures", s.failures},
                                     {"failure_rate", s.failure_rate()},
                                     {"busy_seconds", busy[i]},
                                     {"utilization", utilization}});
      }
      auto workers = worker_facts(g->workers);
      ai::trend_facts f;
      const bool sampled = util_pts.size() >= 2;
      if (sampled) f.load_direction = ai::direction(util_pts, 0.2, 0.05);
      else f.load_direction = runs ? ai::direction(load_pts, 0.2, 1.0) : "unknown";
      f.failure_direction = ai::direction(fail_pts, 0.2, 0.01);
      f.failure_rate = runs ? double(failures) / double(runs) : 0;
      f.runs = runs;
      f.utilization = utilization_of(workers);
      if (g->have_pressure && g->pressure.leading) {
        f.backlog = g->pressure.backlog;
        f.max_backlog = g->pressure.max_backlog;
      }
      json::object answer{
          {"window", format_duration(window)},
          {"from", format_rfc3339(from)},
          {"to", format_rfc3339(to)},
          {"slices", std::move(items)},
          {"runs", runs},
          {"failures", failures},
          {"failure_rate", f.failure_rate},
          {"failure_direction", f.failure_direction},
          {"load_direction", f.load_direction},
          {"load_source", sampled ? "worker_load_history" : "run_time"},
          {"load_samples", g->load.size()},
          {"utilization", f.utilization},
          {"workers", worker_facts_json(workers)},
          {"backlog", f.backlog},
          {"max_backlog", f.max_backlog},
          {"scan_limit_reached", g->scan_limit_reached},
          {"recommendations", ai::to_json(ai::recommend_trends(f))},
          {"notes", g->notes}};
      judge_and_reply(ctx, "trends",
                      std::string("You analyse trends of aisched, a distributed job scheduler, "
                                  "over a time window: failure rate and run time per slice, "
                                  "current worker load and backlog, and the rule engine's "
                                  "recommendations. ") +
                          recommendation_shape,
                      std::move(answer), merge_recommendations, reply);
    });
  });
}

std::optional<uint64_t> parse_id(const std::string& s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || s.empty() || v == 0) return std::nullopt;
  return v;
}

}  // namespace

void get_instance_analysis(route_call& c) {
  analysis(c.ctx, false, c.req.who.tenant, c.param(), c.reply);
}

void analyze_instance(route_call& c) { analysis(c.ctx, true, c.req.who.tenant, c.param(), c.reply); }

void get_advice(route_call& c) { advice(c.ctx, c.req.who.tenant, c.reply); }

void draft_task(route_call& c) { task_draft(c.ctx, c.req, c.reply); }

void predict_duration(route_call& c) {
  auto id = parse_id(c.param());
  if (!id)
    return c.reply(
        error_response(make_error(errc::invalid_argument, "id", "task id must be a positive integer")));
  duration(c.ctx, c.req.who.tenant, *id, c.reply);
}

void get_trends(route_call& c) { trends(c.ctx, c.req, c.reply); }

}  // namespace aisched::gateway
