// The AI chat routes; see ai_routes.hpp.
#include "gateway/ai_routes.hpp"

#include <cctype>
#include <optional>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include "gateway/api.hpp"
#include "proto/errors.hpp"

namespace aisched::gateway {

namespace json = boost::json;

namespace {

constexpr size_t max_message_chars = 16 * 1024;

http_response not_configured() {
  return error_response(503, "llm_not_configured",
                        "no LLM is configured on this node: set AISCHED_LLM_ENDPOINT and "
                        "AISCHED_LLM_MODEL (or --llm-endpoint / --llm-model)");
}

http_response bad(const std::string& field, const std::string& message) {
  return error_response(make_error(errc::invalid_argument, field, message));
}

/// The body as a JSON object, or the 400 to answer.
std::optional<json::object> body_object(const http_request& req, const reply_fn& reply) {
  json::error_code ec;
  auto v = json::parse(req.body, ec);
  if (ec || !v.is_object()) {
    reply(bad("body", "the body must be a JSON object"));
    return std::nullopt;
  }
  return std::move(v.get_object());
}

std::string text_of(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

/// A streamed answer whose events come from the agent; `start` hands the
/// sink to the agent once the headers are out.
http_response event_stream(std::function<void(llm::event_sink)> start) {
  http_response res;
  res.content_type = "text/event-stream";
  res.stream = [start = std::move(start)](std::shared_ptr<stream_writer> out) {
    llm::event_sink sink;
    sink.send = [out](const llm::agent_event& e) { return out->write(sse_event(e)); };
    sink.close = [out] { out->close(); };
    start(std::move(sink));
  };
  return res;
}

void chat(const std::shared_ptr<ai_context>& ctx, const http_request& req, const reply_fn& reply) {
  auto body = body_object(req, reply);
  if (!body) return;
  auto job = std::make_shared<llm::chat_job>();
  job->message = text_of(*body, "message");
  job->conversation_id = text_of(*body, "conversation_id");
  if (job->message.empty()) return reply(bad("message", "message is required"));
  if (job->message.size() > max_message_chars)
    return reply(bad("message", "message is longer than 16 KiB"));
  if (body->contains("conversation_id") && !body->at("conversation_id").is_string() &&
      !body->at("conversation_id").is_null())
    return reply(bad("conversation_id", "conversation_id must be a string"));
  if (!ctx || !ctx->client || !ctx->client->configured()) return reply(not_configured());
  job->who = caller_of(req);
  auto agent = ctx->agent;
  reply(event_stream([agent, job](llm::event_sink sink) {
    job->sink = std::move(sink);
    caf::anon_send(agent, llm::chat_atom::value, job);
  }));
}

void confirm(const std::shared_ptr<ai_context>& ctx, const http_request& req,
             const reply_fn& reply) {
  auto body = body_object(req, reply);
  if (!body) return;
  auto job = std::make_shared<llm::confirm_job>();
  job->conversation_id = text_of(*body, "conversation_id");
  job->action_id = text_of(*body, "action_id");
  if (job->conversation_id.empty()) return reply(bad("conversation_id", "conversation_id is required"));
  if (job->action_id.empty()) return reply(bad("action_id", "action_id is required"));
  auto* approve = body->if_contains("approve");
  if (!approve || !approve->is_bool()) return reply(bad("approve", "approve must be true or false"));
  job->approve = approve->get_bool();
  if (!ctx || !ctx->client || !ctx->client->configured()) return reply(not_configured());
  job->who = caller_of(req);
  auto agent = ctx->agent;
  reply(event_stream([agent, job](llm::event_sink sink) {
    job->sink = std::move(sink);
    caf::anon_send(agent, llm::confirm_atom::value, job);
  }));
}

/// One event as a WebSocket text frame: {"event": name, "data": {...}}.
std::string ws_frame(const llm::agent_event& e) {
  json::error_code ec;
  auto data = json::parse(e.data, ec);
  return json::serialize(json::object{{"event", e.name}, {"data", ec ? json::value(e.data) : data}});
}

void ws_error(const std::shared_ptr<ws_channel>& ch, const std::string& code, const std::string& message) {
  ch->send(ws_frame({"error", json::serialize(json::object{{"code", code}, {"message", message}})}));
}

/// One client frame: {"type":"chat","message","conversation_id"?} or
/// {"type":"confirm","conversation_id","action_id","approve"}.
void on_ws_frame(const std::shared_ptr<ai_context>& ctx, const llm::caller& who,
                 const std::shared_ptr<ws_channel>& ch, const std::string& text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) return ws_error(ch, "invalid_argument", "a frame must be a JSON object");
  auto& o = v.get_object();
  if (!ctx || !ctx->client || !ctx->client->configured())
    return ws_error(ch, "llm_not_configured", "no LLM is configured on this node");
  llm::event_sink sink;
  sink.send = [ch](const llm::agent_event& e) { return ch->send(ws_frame(e)); };
  sink.close = [] {};  // the connection outlives the turn
  auto type = text_of(o, "type");
  if (type == "confirm") {
    auto job = std::make_shared<llm::confirm_job>();
    job->conversation_id = text_of(o, "conversation_id");
    job->action_id = text_of(o, "action_id");
    auto* approve = o.if_contains("approve");
    if (job->conversation_id.empty() || job->action_id.empty() || !approve || !approve->is_bool())
      return ws_error(ch, "invalid_argument", "confirm needs conversation_id, action_id and approve");
    job->approve = approve->get_bool();
    job->who = who;
    job->sink = std::move(sink);
    return caf::anon_send(ctx->agent, llm::confirm_atom::value, job);
  }
  if (!type.empty() && type != "chat")
    return ws_error(ch, "invalid_argument", "type must be chat or confirm");
  auto job = std::make_shared<llm::chat_job>();
  job->message = text_of(o, "message");
  job->conversation_id = text_of(o, "conversation_id");
  if (job->message.empty() || job->message.size() > max_message_chars)
    return ws_error(ch, "invalid_argument", "message is required (at most 16 KiB)");
  job->who = who;
  job->sink = std::move(sink);
  caf::anon_send(ctx->agent, llm::chat_atom::value, job);
}

void ws(const std::shared_ptr<ai_context>& ctx, const http_request& req, const reply_fn& reply) {
  std::string up;
  if (auto i = req.headers.find("upgrade"); i != req.headers.end()) up = i->second;
  for (auto& c : up) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool upgrade = up == "websocket";
  if (!upgrade)  // a plain GET says how to talk to it
    return reply(json_response(
        200, json::object{{"protocol", "websocket"},
                          {"send", json::array{R"({"type":"chat","message":"...","conversation_id":"..."})",
                                               R"({"type":"confirm","conversation_id":"...","action_id":"...","approve":true})"}},
                          {"receive", R"({"event":"conversation_id|text|tool_call|tool_result|confirmation_required|done|error","data":{...}})"}}));
  auto who = caller_of(req);
  http_response res;
  res.status = 101;
  res.websocket = [ctx, who](std::shared_ptr<ws_channel> ch) {
    return std::function<void(std::string)>(
        [ctx, who, ch](std::string text) { on_ws_frame(ctx, who, ch, text); });
  };
  reply(std::move(res));
}

/// Asks the agent from a short-lived bridge actor and answers with its JSON.
template <class... Ts>
void ask_agent(const std::shared_ptr<ai_context>& ctx, const reply_fn& reply, Ts... xs) {
  auto agent = ctx->agent;
  auto timeout = ctx->timeout;
  ctx->sys->spawn([=](caf::event_based_actor* self) {
    self->request(agent, timeout, xs...)
        .then([=](const std::string& body) { reply(http_response{200, body, "application/json"}); },
              [=](caf::error& err) { reply(error_response(err)); });
  });
}

}  // namespace

llm::caller caller_of(const http_request& req) {
  llm::caller who;
  who.tenant = req.who.tenant;
  who.subject = req.who.subject;
  if (auto i = req.headers.find("authorization"); i != req.headers.end())
    who.headers["authorization"] = i->second;
  return who;
}

std::string sse_event(const llm::agent_event& e) {
  return "event: " + e.name + "\ndata: " + e.data + "\n\n";
}

namespace {

/// The `limit` query parameter of the conversation listings (1..1000, default
/// 100); nullopt after answering 400. Also 503 when this node has no agent.
std::optional<uint64_t> listing_limit(route_call& c) {
  if (!c.ctx.ai || !c.ctx.ai->sys) {
    c.reply(not_configured());
    return std::nullopt;
  }
  uint64_t limit = 100;
  if (auto i = c.req.query.find("limit"); i != c.req.query.end()) {
    try {
      limit = std::stoull(i->second);
    } catch (...) {
      limit = 0;
    }
    if (limit < 1 || limit > 1000) {
      c.reply(bad("limit", "limit must be between 1 and 1000"));
      return std::nullopt;
    }
  }
  return limit;
}

}  // namespace

void ai_chat(route_call& c) { chat(c.ctx.ai, c.req, c.reply); }
void ai_confirm(route_call& c) { confirm(c.ctx.ai, c.req, c.reply); }
void ai_ws(route_call& c) { ws(c.ctx.ai, c.req, c.reply); }

void ai_conversations(route_call& c) {
  auto limit = listing_limit(c);
  if (!limit) return;
  ask_agent(c.ctx.ai, c.reply, llm::conversations_atom::value, c.req.who.tenant, *limit);
}

void ai_messages(route_call& c) {
  auto limit = listing_limit(c);
  if (!limit) return;
  ask_agent(c.ctx.ai, c.reply, llm::messages_atom::value, c.req.who.tenant, c.param(),
            *limit * 10);
}

}  // namespace aisched::gateway
