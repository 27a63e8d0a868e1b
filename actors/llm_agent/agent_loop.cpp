// The agent's conversation loop; see agent_loop.hpp.
#include "actors/llm_agent/agent_loop.hpp"

#include <algorithm>

#include <boost/json.hpp>

#include "proto/errors.hpp"

namespace aisched::llm {

namespace json = boost::json;

namespace {

/// Tool results are cut to this many characters for the model: a page of
/// 50 tasks fits, a runaway output does not eat the context window.
constexpr size_t max_tool_result_chars = 16'000;

json::value as_json(const std::string& text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec) return json::string(text);
  return v;
}

std::string error_json(const std::string& message) {
  return json::serialize(json::object{{"error", message}});
}

}  // namespace

const std::string& default_system_prompt() {
  static const std::string p =
      "You are the operations assistant of aisched, a distributed job scheduler. Answer from "
      "real cluster data: call the tools to look things up instead of guessing, and say when "
      "data is missing. Tasks have numeric ids; runs (instances) have ids like "
      "42-1764471600000-0. Be brief and concrete. You act with the permissions of the user "
      "you talk to; if a tool answers with an error, explain it or correct your call. "
      "Deleting needs the user's confirmation: call delete_task and the user is asked.";
  return p;
}

agent_loop::agent_loop(std::string system_prompt, std::vector<chat_message> history,
                       std::string user_message, unsigned max_rounds)
    : system_prompt_(std::move(system_prompt)), messages_(std::move(history)),
      max_rounds_(max_rounds) {
  persisted_ = messages_.size();
  add({"user", std::move(user_message), {}, {}, {}});
  first_.what = agent_step::ask_model;
}

agent_loop agent_loop::after_confirmation(std::string system_prompt,
                                          std::vector<chat_message> history,
                                          const pending_action& action, bool approved,
                                          unsigned max_rounds) {
  agent_loop l(std::move(system_prompt), std::move(history), "", max_rounds);
  l.messages_.pop_back();  // no user text: the decision is the turn
  // The model asked for this call in an earlier turn and was told it waits for
  // the user; the decided call is replayed as its own call and result.
  l.add({"assistant", "", {{action.action_id, action.name, action.arguments}}, {}, {}});
  auto plan = plan_tool(action.name, action.arguments);
  if (approved && plan) {
    l.outstanding_.push_back(action.action_id);
    l.first_.what = agent_step::run_tools;
    l.first_.calls.push_back({action.action_id, action.name, action.arguments, std::move(*plan)});
    return l;
  }
  auto why = approved ? view(plan.error()).message : std::string("the user declined this action");
  l.add({"tool", error_json(why), {}, action.action_id, action.name});
  l.emit("tool_result", json::serialize(json::object{
                            {"id", action.action_id}, {"name", action.name}, {"ok", false},
                            {"result", {{"error", why}}}}));
  l.first_.what = agent_step::ask_model;
  return l;
}

void agent_loop::set_ids(std::string conversation_id, std::string action_prefix) {
  conversation_id_ = std::move(conversation_id);
  action_prefix_ = std::move(action_prefix);
}

agent_step agent_loop::start() { return first_; }

chat_request agent_loop::request() const {
  chat_request r;
  r.messages.push_back({"system", system_prompt_, {}, {}, {}});
  r.messages.insert(r.messages.end(), messages_.begin(), messages_.end());
  r.tools = tool_specs();
  r.stream = true;
  r.feature = "chat";
  return r;
}

agent_step agent_loop::on_completion(const completion& c, bool streamed) {
  if (c.tool_calls.empty()) {
    add({"assistant", c.content, {}, {}, {}});
    if (!streamed && !c.content.empty())
      emit("text", json::serialize(json::object{{"delta", c.content}}));
    return finish();
  }
  if (rounds_ >= max_rounds_) {
    auto note = "I gave up after " + std::to_string(max_rounds_) +
                " tool rounds without reaching an answer.";
    add({"assistant", note, {}, {}, {}});
    emit("text", json::serialize(json::object{{"delta", note}}));
    return finish();
  }
  ++rounds_;
  chat_message call_msg{"assistant", c.content, c.tool_calls, {}, {}};
  for (size_t i = 0; i < call_msg.tool_calls.size(); ++i)
    if (call_msg.tool_calls[i].id.empty())
      call_msg.tool_calls[i].id = "call_" + std::to_string(rounds_) + "_" + std::to_string(i);
  if (!streamed && !c.content.empty())
    emit("text", json::serialize(json::object{{"delta", c.content}}));
  auto calls = call_msg.tool_calls;
  add(std::move(call_msg));
  agent_step step;
  step.what = agent_step::run_tools;
  for (auto& tc : calls) {
    emit("tool_call", json::serialize(json::object{
                          {"id", tc.id}, {"name", tc.name}, {"arguments", tc.arguments}}));
    auto plan = plan_tool(tc.name, tc.arguments);
    if (!plan) {
      auto msg = view(plan.error()).message;
      add({"tool", error_json(msg), {}, tc.id, tc.name});
      emit("tool_result", json::serialize(json::object{
                              {"id", tc.id}, {"name", tc.name}, {"ok", false},
                              {"result", {{"error", msg}}}}));
      continue;
    }
    if (plan->destructive) {
      pending_action a{action_prefix_ + tc.id, tc.name, tc.arguments, plan->summary};
      add({"tool",
           json::serialize(json::object{{"status", "awaiting_confirmation"},
                                        {"action_id", a.action_id},
                                        {"summary", a.summary}}),
           {}, tc.id, tc.name});
      emit("confirmation_required",
           json::serialize(json::object{{"action_id", a.action_id}, {"name", a.name},
                                        {"arguments", a.arguments}, {"summary", a.summary}}));
      pending_.push_back(std::move(a));
      continue;
    }
    outstanding_.push_back(tc.id);
    step.calls.push_back({tc.id, tc.name, tc.arguments, std::move(*plan)});
  }
  if (step.calls.empty()) return after_tools();
  return step;
}

agent_step agent_loop::on_model_error(const caf::error& err) {
  auto v = view(err);
  auto code = v.field == "llm_not_configured" ? v.field : std::string(to_string(v.code));
  emit("error", json::serialize(json::object{{"code", code}, {"message", v.message}}));
  finished_ = true;
  return {};
}

agent_step agent_loop::on_tool_result(const std::string& call_id, bool ok,
                                      const std::string& result) {
  auto i = std::find(outstanding_.begin(), outstanding_.end(), call_id);
  if (i == outstanding_.end()) return {agent_step::run_tools, {}};  // unknown or late: ignore
  outstanding_.erase(i);
  std::string name;
  for (auto& m : messages_)
    for (auto& tc : m.tool_calls)
      if (tc.id == call_id) name = tc.name;
  auto content = ok ? result : json::serialize(json::object{{"error", as_json(result)}});
  if (content.size() > max_tool_result_chars)
    content = content.substr(0, max_tool_result_chars) + " ...[truncated]";
  add({"tool", content, {}, call_id, name});
  emit("tool_result", json::serialize(json::object{
                          {"id", call_id}, {"name", name}, {"ok", ok}, {"result", as_json(result)}}));
  if (!outstanding_.empty()) return {agent_step::run_tools, {}};
  return after_tools();
}

agent_step agent_loop::after_tools() {
  // A turn that holds a destructive call stops here: the user decides next.
  if (!pending_.empty()) return finish();
  return {agent_step::ask_model, {}};
}

agent_step agent_loop::finish() {
  emit("done", json::serialize(json::object{{"conversation_id", conversation_id_},
                                            {"rounds", rounds_}}));
  finished_ = true;
  return {};
}

std::vector<agent_event> agent_loop::take_events() {
  std::vector<agent_event> out;
  out.swap(events_);
  return out;
}

std::vector<chat_message> agent_loop::take_new_messages() {
  std::vector<chat_message> out(messages_.begin() + static_cast<ptrdiff_t>(persisted_), messages_.end());
  persisted_ = messages_.size();
  return out;
}

void agent_loop::emit(std::string name, std::string data) {
  events_.push_back({std::move(name), std::move(data)});
}

void agent_loop::add(chat_message m) { messages_.push_back(std::move(m)); }

}  // namespace aisched::llm
