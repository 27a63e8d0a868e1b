// The analysis actor; see analysis_actor.hpp.
#include "actors/ai_features/analysis_actor.hpp"

#include <boost/json.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/ai_features/judgement.hpp"
#include "common/counted.hpp"
#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"

namespace aisched::ai {

using namespace proto;

namespace {

using self_ptr = analysis_actor::stateful_pointer<analysis_state>;
using promise = caf::typed_response_promise<failure_analysis>;

/// Reads instance `id` and its task (the task may be gone) and calls `k` with
/// the facts, or `on_err` when the instance cannot be read.
template <class K, class E>
void read_facts(self_ptr self, const std::string& tenant, const std::string& id, K k, E on_err) {
  auto timeout = self->state.opts.store_timeout;
  auto store = self->state.store;
  self->request(store, timeout, get_instance_atom::value, tenant, id)
      .then(
          [=](instance& x) {
            self->request(store, timeout, get_task_atom::value, x.tenant, x.task_id)
                .then([=](task& t) { k(facts_of(x, &t)); },
                      [=](caf::error&) { k(facts_of(x, nullptr)); });
          },
          [=](caf::error& e) { on_err(e); });
}

void pump(self_ptr self);

/// Stores `result` as the analysis of `id`, answers everyone waiting for it,
/// and starts the next queued analysis.
void finish(self_ptr self, const std::string& id, failure_analysis result) {
  auto& st = self->state;
  auto i = st.in_flight.find(id);
  if (i == st.in_flight.end()) return;
  result.analyzed_at = now_of(self);
  if (auto err = st.opts.write ? st.opts.write({analysis_record(i->second.tenant, result)})
                                : make_error(errc::unavailable, "analyses are not stored here")) {
    ++st.store_errors;  // still answered: the analysis is right, only not kept
  } else {
    ++st.stored;
  }
  for (auto& p : i->second.waiting) p.deliver(result);
  st.in_flight.erase(i);
  pump(self);
}

void fail(self_ptr self, const std::string& id, const caf::error& e) {
  auto& st = self->state;
  auto i = st.in_flight.find(id);
  if (i == st.in_flight.end()) return;
  for (auto& p : i->second.waiting) p.deliver(e);
  st.in_flight.erase(i);
  pump(self);
}

/// Analyses (tenant, id): rules, then the model when configured. A second
/// request for an instance in flight waits for the same answer.
void begin(self_ptr self, const std::string& tenant, const std::string& id,
           std::optional<promise> rp) {
  auto& st = self->state;
  auto [i, fresh] = st.in_flight.try_emplace(id);
  if (rp) i->second.waiting.push_back(*rp);
  if (!fresh) return;
  i->second.tenant = tenant;
  read_facts(
      self, tenant, id,
      [=](failure_facts f) {
        auto& st = self->state;
        auto j = st.in_flight.find(id);
        if (j == st.in_flight.end()) return;
        j->second.rules = analyze_by_rules(f);
        if (!st.opts.judge) return finish(self, id, j->second.rules);
        // The check is the judged handler's own reading of the text, so the
        // judge counts as "invalid" exactly the answers stored with llm_error.
        judge_request req{"analysis", analysis_system_prompt(),
                          analysis_user_prompt(f, j->second.rules),
                          [rules = j->second.rules](const std::string& text) -> caf::error {
                            auto judged = analysis_from_judgement(text, rules);
                            return judged ? caf::error{} : judged.error();
                          }};
        auto hdl = caf::actor_cast<analysis_actor>(self);
        st.opts.judge(std::move(req), [hdl, id](caf::expected<std::string> r) {
          if (r) caf::anon_send(hdl, judged_atom::value, id, true, std::move(*r));
          else caf::anon_send(hdl, judged_atom::value, id, false, view(r.error()).message);
        });
      },
      [=](const caf::error& e) { fail(self, id, e); });
}

void pump(self_ptr self) {
  auto& st = self->state;
  while (st.in_flight.size() < st.opts.max_in_flight && !st.queue.empty()) {
    auto [tenant, id] = st.queue.front();
    st.queue.pop_front();
    if (st.in_flight.count(id)) continue;
    ++st.auto_started;
    begin(self, tenant, id, std::nullopt);
  }
}

std::map<std::string, std::string> details_of(self_ptr self) {
  auto& st = self->state;
  return {{"leading", st.leading ? "true" : "false"},
          {"llm_configured", st.opts.judge ? "true" : "false"},
          {"in_flight", std::to_string(st.in_flight.size())},
          {"queued", std::to_string(st.queue.size())},
          {"auto_started", std::to_string(st.auto_started)},
          {"auto_dropped", std::to_string(st.auto_dropped)},
          {"stored", std::to_string(st.stored)},
          {"store_errors", std::to_string(st.store_errors)}};
}

}  // namespace

caf::expected<std::optional<failure_analysis>> load_analysis(storage::rocks& db,
                                                             const std::string& tenant,
                                                             const std::string& id) {
  auto raw = db.get(storage::column::ai_analysis, storage::keys::analysis(tenant, id));
  if (!raw) return raw.error();
  if (!*raw) return std::optional<failure_analysis>{};
  auto a = decode<failure_analysis>(**raw);
  if (!a) return a.error();
  return std::optional<failure_analysis>{std::move(*a)};
}

proto::ai_record analysis_record(const std::string& tenant, const failure_analysis& a) {
  return {proto::ai_column::analyses, storage::keys::analysis(tenant, a.instance_id), encode(a), false};
}

std::string analysis_user_prompt(const failure_facts& f, const failure_analysis& rules) {
  boost::json::array cats;
  for (auto& c : rules.categories) cats.emplace_back(c);
  boost::json::object facts{
      {"instance_id", f.instance_id},
      {"state", std::string(name_of(f.state))},
      {"task_kind", std::string(name_of(f.kind))},
      {"command", f.command},
      {"exit_code", f.exit_code},
      {"error", f.error},
      {"output_tail", f.output.size() > 2000 ? f.output.substr(f.output.size() - 2000) : f.output},
      {"attempt", f.attempt},
      {"memory_mb", f.memory_mb},
      {"timeout", f.timeout ? format_duration(f.timeout) : std::string()},
      {"rules",
       boost::json::object{{"summary", rules.summary},
                           {"categories", std::move(cats)},
                           {"root_cause", rules.root_cause},
                           {"confidence", rules.confidence}}}};
  return boost::json::serialize(facts);
}

analysis_actor::behavior_type analysis_actor_impl(self_ptr self,
                                                  std::shared_ptr<storage::rocks> db,
                                                  store_actor store, analysis_options opts) {
  auto& st = self->state;
  st.db = std::move(db);
  st.store = std::move(store);
  st.opts = std::move(opts);
  st.clock = st.opts.clock;
  return inspector::counted(self, {
      [=](inspect_atom) { return inspector::summary_of(self, details_of(self)); },
      [=](leader_atom, const leadership& l) { self->state.leading = l.leading; },
      [=](committed_atom, const applied& a) {
        auto& st = self->state;
        // Only the leader analyses automatically (one model call per failure,
        // not one per replica), and only with a model: rules are computed on read.
        if (!st.leading || !st.opts.judge) return;
        for (auto& x : a.instances) {
          if (x.state != instance_state::failed && x.state != instance_state::timed_out) continue;
          if (st.queue.size() >= st.opts.max_queued) {
            ++st.auto_dropped;
            continue;
          }
          st.queue.emplace_back(x.tenant, x.id);
        }
        pump(self);
      },
      [=](get_analysis_atom, const std::string& tenant,
          const std::string& id) -> caf::result<failure_analysis> {
        auto stored = load_analysis(*self->state.db, tenant, id);
        if (stored && *stored) return std::move(**stored);
        auto rp = self->make_response_promise<failure_analysis>();
        auto shared = std::make_shared<promise>(rp);  // the callbacks are const
        read_facts(
            self, tenant, id, [shared](failure_facts f) { shared->deliver(analyze_by_rules(f)); },
            [shared](const caf::error& e) { shared->deliver(e); });
        return rp;
      },
      [=](analyze_atom, const std::string& tenant,
          const std::string& id) -> caf::result<failure_analysis> {
        auto rp = self->make_response_promise<failure_analysis>();
        begin(self, tenant, id, rp);
        return rp;
      },
      [=](judged_atom, const std::string& id, bool ok, const std::string& text) {
        auto& st = self->state;
        auto i = st.in_flight.find(id);
        if (i == st.in_flight.end()) return;
        auto result = i->second.rules;
        if (!ok) {
          result.llm_error = "model unavailable: " + text;
        } else if (auto judged = analysis_from_judgement(text, i->second.rules)) {
          result = std::move(*judged);
        } else {
          result.llm_error = "model answer rejected: " + view(judged.error()).message;
        }
        finish(self, id, std::move(result));
      },
  });
}

}  // namespace aisched::ai
