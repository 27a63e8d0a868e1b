// The llm_agent actor; see llm_agent_actor.hpp.
#include "actors/llm_agent/llm_agent_actor.hpp"

#include <atomic>

#include <boost/json.hpp>
#include <caf/actor_cast.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "common/counted.hpp"
#include "actors/llm_agent/tool_runner.hpp"
#include "proto/errors.hpp"
#include "proto/json_wire.hpp"

namespace aisched::llm {

namespace json = boost::json;

/// One chat or confirm turn in progress.
struct turn {
  agent_loop loop;
  conversation conv;
  caller who;
  event_sink sink;
  size_t pending_stored = 0;  // loop.pending() entries already in the store
};

namespace {

using self_ptr = llm_agent_actor::stateful_pointer<llm_agent_state>;

agent_event error_event(const caf::error& err) {
  auto v = view(err);
  return {"error", json::serialize(json::object{{"code", to_string(v.code)}, {"message", v.message}})};
}

void fail(const event_sink& sink, const caf::error& err) {
  sink.send(error_event(err));
  sink.close();
}

/// Sends what the loop produced, stores new messages and held actions, and
/// starts what the step asks for.
void drive(self_ptr self, const llm_agent_options& opts, uint64_t id, agent_step step) {
  auto i = self->state.turns.find(id);
  if (i == self->state.turns.end()) return;
  auto t = i->second;
  auto& store = *self->state.store;
  // Store before telling the client: a confirm may follow at once.
  auto& pending = t->loop.pending();
  for (; t->pending_stored < pending.size(); ++t->pending_stored)
    if (auto err = store.put_pending(t->conv.id, pending[t->pending_stored]))
      t->sink.send(error_event(err));
  if (auto err = store.append(t->conv, t->loop.take_new_messages(), now_of(self)))
    t->sink.send(error_event(err));
  for (auto& e : t->loop.take_events()) t->sink.send(e);
  if (t->loop.finished()) {
    t->sink.close();
    self->state.turns.erase(id);
    return;
  }
  auto me = caf::actor_cast<llm_agent_actor>(self);
  if (step.what == agent_step::ask_model) {
    auto streamed = std::make_shared<std::atomic<bool>>(false);
    auto sink = t->sink;
    opts.client->complete_async(
        t->loop.request(),
        [sink, streamed](const stream_delta& d) {
          if (d.content.empty()) return;
          streamed->store(true);
          sink.send({"text", json::serialize(json::object{{"delta", d.content}})});
        },
        [me, id, streamed](caf::expected<completion> r) {
          auto out = std::make_shared<llm_outcome>();
          out->result = std::move(r);
          out->streamed = streamed->load();
          caf::anon_send(me, llm_reply_atom::value, id, std::move(out));
        });
    return;
  }
  for (auto& call : step.calls) {
    auto call_id = call.call_id;
    run_tool(opts.api ? *opts.api : gateway::handler_fn{}, call.plan, t->who.headers,
             [me, id, call_id](bool ok, std::string result) {
               caf::anon_send(me, tool_reply_atom::value, id, call_id, ok, std::move(result));
             });
  }
}

/// The conversation `id` if `who` may see it (another tenant's is not found).
caf::expected<conversation> owned(conversation_store& store, const std::string& id,
                                  const caller& who) {
  auto c = store.get(id);
  if (c && c->tenant != who.tenant)
    return make_error(errc::not_found, "conversation_id", "no conversation '" + id + "'");
  return c;
}

uint64_t start_turn(self_ptr self, std::shared_ptr<turn> t) {
  auto id = self->state.next_turn++;
  ++self->state.turns_started;
  // Action ids stay unique within a conversation across turns and restarts.
  t->loop.set_ids(t->conv.id, "a" + std::to_string(t->conv.messages) + "-");
  t->sink.send({"conversation_id", json::serialize(json::object{{"conversation_id", t->conv.id}})});
  self->state.turns.emplace(id, std::move(t));
  return id;
}

}  // namespace

llm_agent_actor::behavior_type llm_agent_impl(self_ptr self, llm_agent_options opts) {
  self->state.clock = opts.clock;
  self->state.store = std::make_unique<conversation_store>(opts.db, opts.write);
  return inspector::counted(self, {
      [=](proto::inspect_atom) {
        auto& st = self->state;
        return inspector::summary_of(
            self, {{"model", opts.client && opts.client->configured() ? "configured" : "none"},
                   {"turns_running", std::to_string(st.turns.size())},
                   {"turns_started", std::to_string(st.turns_started)}});
      },
      [=](chat_atom, std::shared_ptr<chat_job> job) {
        auto& store = *self->state.store;
        if (!opts.client || !opts.client->configured())
          return fail(job->sink, make_error(errc::unavailable, "llm_not_configured",
                                            "no LLM endpoint is configured"));
        auto conv = job->conversation_id.empty()
                        ? store.create(job->who.tenant, job->who.subject, job->message,
                                       now_of(self))
                        : owned(store, job->conversation_id, job->who);
        if (!conv) return fail(job->sink, conv.error());
        auto history = store.recent(conv->id, opts.history);
        if (!history) return fail(job->sink, history.error());
        auto t = std::make_shared<turn>(turn{
            agent_loop(opts.system_prompt, std::move(*history), job->message, opts.max_rounds),
            std::move(*conv), job->who, job->sink});
        auto id = start_turn(self, t);
        drive(self, opts, id, t->loop.start());
      },
      [=](confirm_atom, std::shared_ptr<confirm_job> job) {
        auto& store = *self->state.store;
        auto conv = owned(store, job->conversation_id, job->who);
        if (!conv) return fail(job->sink, conv.error());
        auto action = store.take_pending(conv->id, job->action_id);
        if (!action) return fail(job->sink, action.error());
        if (job->approve && (!opts.client || !opts.client->configured()))
          return fail(job->sink, make_error(errc::unavailable, "llm_not_configured",
                                            "no LLM endpoint is configured"));
        auto history = store.recent(conv->id, opts.history);
        if (!history) return fail(job->sink, history.error());
        auto t = std::make_shared<turn>(
            turn{agent_loop::after_confirmation(opts.system_prompt, std::move(*history), *action,
                                                job->approve, opts.max_rounds),
                 std::move(*conv), job->who, job->sink});
        auto id = start_turn(self, t);
        drive(self, opts, id, t->loop.start());
      },
      [=](conversations_atom, const std::string& tenant, uint64_t limit) -> caf::result<std::string> {
        auto list = self->state.store->list(tenant, limit);
        if (!list) return list.error();
        json::array items;
        for (auto& c : *list) items.push_back(proto::to_json(c));
        return json::serialize(json::object{{"items", std::move(items)}});
      },
      [=](messages_atom, const std::string& tenant, const std::string& id,
          uint64_t limit) -> caf::result<std::string> {
        caller who;
        who.tenant = tenant;
        auto conv = owned(*self->state.store, id, who);
        if (!conv) return conv.error();
        auto msgs = self->state.store->messages(id, limit);
        if (!msgs) return msgs.error();
        json::array items;
        for (auto& m : *msgs) items.push_back(proto::to_json(m));
        return json::serialize(
            json::object{{"conversation_id", id}, {"items", std::move(items)}});
      },
      [=](llm_reply_atom, uint64_t id, std::shared_ptr<llm_outcome> out) {
        auto i = self->state.turns.find(id);
        if (i == self->state.turns.end()) return;
        auto& loop = i->second->loop;
        auto step = out->result ? loop.on_completion(*out->result, out->streamed)
                                : loop.on_model_error(out->result.error());
        drive(self, opts, id, std::move(step));
      },
      [=](tool_reply_atom, uint64_t id, const std::string& call_id, bool ok,
          const std::string& result) {
        auto i = self->state.turns.find(id);
        if (i == self->state.turns.end()) return;
        drive(self, opts, id, i->second->loop.on_tool_result(call_id, ok, result));
      },
  });
}

}  // namespace aisched::llm
