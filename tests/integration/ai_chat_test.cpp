// The AI chat against a real `aisched` node configured with a scripted
// OpenAI-compatible server: tool calls reach the cluster for real (a task is
// created and paused), a malformed call is corrected, delete waits for the
// user's confirmation, conversations survive a restart, tokens are counted in
// /metrics, and without a model the chat answers 503 llm_not_configured.
#include <algorithm>
#include <csignal>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/node_process.hpp"
#include "support/prometheus_text.hpp"
#include "support/raft_group_process.hpp"
#include "support/scripted_llm.hpp"

using namespace aisched::test;
namespace json = boost::json;

namespace {

struct sse_event {
  std::string name;
  json::value data;
};

/// The events of a whole SSE body.
std::vector<sse_event> events_of(const std::string& body) {
  std::vector<sse_event> out;
  size_t pos = 0;
  while (pos < body.size()) {
    auto end = body.find("\n\n", pos);
    if (end == std::string::npos) end = body.size();
    auto block = body.substr(pos, end - pos);
    pos = end + 2;
    sse_event e;
    size_t i = 0;
    while (i < block.size()) {
      auto nl = block.find('\n', i);
      if (nl == std::string::npos) nl = block.size();
      auto line = block.substr(i, nl - i);
      i = nl + 1;
      if (line.rfind("event: ", 0) == 0) e.name = line.substr(7);
      if (line.rfind("data: ", 0) == 0) {
        boost::system::error_code ec;
        e.data = json::parse(line.substr(6), ec);
      }
    }
    if (!e.name.empty()) out.push_back(std::move(e));
  }
  return out;
}

const sse_event* find(const std::vector<sse_event>& events, const std::string& name, size_t nth = 0) {
  for (auto& e : events)
    if (e.name == name && nth-- == 0) return &e;
  return nullptr;
}

json::value parse(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  return ec ? json::value(nullptr) : v;
}

/// Sends one frame over GET /api/v1/ai/ws and collects the event frames until
/// `done` or `error` (bounded by `timeout`).
std::vector<json::object> ws_turn(uint16_t port, const std::string& frame,
                                  std::chrono::seconds timeout = std::chrono::seconds(20)) {
  namespace asio = boost::asio;
  namespace beast = boost::beast;
  namespace websocket = beast::websocket;
  asio::io_context ioc;
  websocket::stream<beast::tcp_stream> ws(ioc);
  beast::flat_buffer buf;
  std::vector<json::object> out;
  std::function<void()> read_next = [&] {
    ws.async_read(buf, [&](beast::error_code ec, size_t) {
      if (ec) return;
      auto v = parse(beast::buffers_to_string(buf.data()));
      buf.consume(buf.size());
      if (!v.is_object()) return;
      out.push_back(v.as_object());
      auto ev = out.back().at("event").as_string();
      if (ev == "done" || ev == "error") return beast::get_lowest_layer(ws).close();
      read_next();
    });
  };
  beast::get_lowest_layer(ws).async_connect(
      asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port),
      [&](beast::error_code ec) {
        if (ec) return;
        ws.async_handshake("127.0.0.1", "/api/v1/ai/ws", [&](beast::error_code ec) {
          if (ec) return;
          ws.text(true);
          ws.async_write(asio::buffer(frame), [&](beast::error_code ec, size_t) {
            if (!ec) read_next();
          });
        });
      });
  ioc.run_for(timeout);
  return out;
}

class ai_chat : public ::testing::Test {
 protected:
  std::vector<std::string> llm_args(const scripted_llm& llm) {
    return {"--llm-endpoint", llm.endpoint(), "--llm-model", "scripted", "--llm-api-key", "sk-test",
            "--llm-timeout", "10"};
  }

  http_result chat(node_process& node, const std::string& message, const std::string& conv = "") {
    json::object body{{"message", message}};
    if (!conv.empty()) body["conversation_id"] = conv;
    return http_call(node.http_port(), "POST", "/api/v1/ai/chat", json::serialize(body),
                     std::chrono::seconds(30));
  }

  temp_dir dir_;
};

TEST_F(ai_chat, creates_and_pauses_a_task_through_tool_calls) {
  scripted_llm llm(
      dir_.path(),
      {scripted_llm::call("c1", "create_task",
                          R"({"name":"ai-made","kind":"noop","schedule":"@every 1h"})"),
       scripted_llm::call("c2", "get_task_detail", R"({"task_id": 1)"),  // malformed: corrected next
       scripted_llm::call("c3", "pause_task", R"({"task_id":1})"),
       scripted_llm::say("Created ai-made and paused it.")});
  node_process node(dir_.path() + "/data", llm_args(llm));
  ASSERT_TRUE(node.running());

  auto r = chat(node, "create a task ai-made and pause it");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.content_type, "text/event-stream");
  auto ev = events_of(r.body);
  ASSERT_FALSE(ev.empty()) << r.body;
  EXPECT_EQ(ev.front().name, "conversation_id");
  EXPECT_EQ(ev.back().name, "done") << r.body;
  auto* created = find(ev, "tool_result", 0);
  ASSERT_NE(created, nullptr) << r.body;
  EXPECT_TRUE(created->data.at("ok").as_bool()) << r.body;
  EXPECT_EQ(created->data.at("result").at("name").as_string(), "ai-made");
  auto* malformed = find(ev, "tool_result", 1);
  ASSERT_NE(malformed, nullptr);
  EXPECT_FALSE(malformed->data.at("ok").as_bool());
  auto* paused = find(ev, "tool_result", 2);
  ASSERT_NE(paused, nullptr);
  EXPECT_TRUE(paused->data.at("ok").as_bool()) << r.body;
  std::string text;
  for (auto& e : ev)
    if (e.name == "text") text += e.data.at("delta").as_string().c_str();
  EXPECT_EQ(text, "Created ai-made and paused it.");
  EXPECT_EQ(find(ev, "done")->data.at("rounds").as_int64(), 3);

  // The cluster really has the task, paused.
  auto task = http_call(node.http_port(), "GET", "/api/v1/tasks/1");
  ASSERT_EQ(task.status, 200u) << task.body;
  auto t = parse(task.body);
  EXPECT_EQ(t.at("name").as_string(), "ai-made");
  EXPECT_TRUE(t.at("paused").as_bool());

  // The model saw each tool result (the malformed call as an error it could fix).
  auto reqs = llm.requests();
  ASSERT_EQ(reqs.size(), 4u);
  auto second = json::serialize(reqs[1].at("body").at("messages"));
  EXPECT_NE(second.find("ai-made"), std::string::npos);
  auto third = json::serialize(reqs[2].at("body").at("messages"));
  EXPECT_NE(third.find("not valid JSON"), std::string::npos) << third;
  EXPECT_EQ(reqs[0].at("authorization").as_string(), "Bearer sk-test");

  // Tokens are counted: 4 requests of 10 prompt and 5 completion tokens.
  auto metrics = parse_prometheus_text(http_call(node.http_port(), "GET", "/metrics").body);
  EXPECT_TRUE(metrics.errors.empty()) << metrics.errors.front();
  EXPECT_EQ(metrics.value("ai_tokens_total", {{"type", "prompt"}}), 40.0);
  EXPECT_EQ(metrics.value("ai_tokens_total", {{"type", "completion"}}), 20.0);
  EXPECT_EQ(metrics.value("ai_requests_total", {{"feature", "chat"}, {"result", "ok"}}), 4.0);
}

TEST_F(ai_chat, delete_waits_for_the_users_confirmation) {
  scripted_llm llm(dir_.path(), {scripted_llm::call("d1", "delete_task", R"({"task_id":1})"),
                                 scripted_llm::say("Deleted task 1.")});
  node_process node(dir_.path() + "/data", llm_args(llm));
  ASSERT_TRUE(node.running());
  auto created = http_call(node.http_port(), "POST", "/api/v1/tasks",
                           R"({"name":"keep-me","kind":"noop","schedule":"@every 1h"})");
  ASSERT_EQ(created.status, 201u) << created.body;

  auto r = chat(node, "delete task 1");
  ASSERT_EQ(r.status, 200u);
  auto ev = events_of(r.body);
  auto* confirm = find(ev, "confirmation_required");
  ASSERT_NE(confirm, nullptr) << r.body;
  EXPECT_EQ(confirm->data.at("name").as_string(), "delete_task");
  EXPECT_EQ(ev.back().name, "done");
  EXPECT_EQ(find(ev, "tool_result"), nullptr) << "delete ran without confirmation: " << r.body;
  EXPECT_EQ(http_call(node.http_port(), "GET", "/api/v1/tasks/1").status, 200u);

  auto conv = std::string(find(ev, "conversation_id")->data.at("conversation_id").as_string());
  auto action = std::string(confirm->data.at("action_id").as_string());
  auto body = json::serialize(
      json::object{{"conversation_id", conv}, {"action_id", action}, {"approve", true}});
  auto c = http_call(node.http_port(), "POST", "/api/v1/ai/confirm", body, std::chrono::seconds(30));
  ASSERT_EQ(c.status, 200u) << c.body;
  auto cev = events_of(c.body);
  auto* result = find(cev, "tool_result");
  ASSERT_NE(result, nullptr) << c.body;
  EXPECT_TRUE(result->data.at("ok").as_bool()) << c.body;
  EXPECT_EQ(cev.back().name, "done") << c.body;
  EXPECT_EQ(http_call(node.http_port(), "GET", "/api/v1/tasks/1").status, 404u);

  // An action is decided once.
  auto again = http_call(node.http_port(), "POST", "/api/v1/ai/confirm", body, std::chrono::seconds(30));
  auto aev = events_of(again.body);
  ASSERT_NE(find(aev, "error"), nullptr) << again.body;
  EXPECT_EQ(find(aev, "error")->data.at("code").as_string(), "not_found");
}

// The AI memory is replicated: a conversation held on the member that took it
// survives that member's loss, and another member continues it with its history.
TEST_F(ai_chat, a_conversation_survives_the_loss_of_the_member_that_took_it) {
  scripted_llm llm(dir_.path(), {scripted_llm::say("Noted: your name is Ada."),
                                 scripted_llm::say("You are Ada.")});
  raft_group g(dir_.path(), 3, llm_args(llm));
  auto l = g.await_leader({0, 1, 2});
  ASSERT_NE(l, none);
  size_t f = (l + 1) % 3, other = (l + 2) % 3;  // a follower takes the chat

  json::object body{{"message", "my name is Ada"}};
  auto r = http_call(g.port(f), "POST", "/api/v1/ai/chat", json::serialize(body),
                     std::chrono::seconds(30));
  ASSERT_EQ(r.status, 200u) << r.body;
  auto ev = events_of(r.body);
  auto* c = find(ev, "conversation_id");
  ASSERT_NE(c, nullptr) << r.body;
  std::string conv = c->data.at("conversation_id").as_string().c_str();
  g.kill(f);

  auto path = "/api/v1/ai/conversations/" + conv + "/messages";
  http_result msgs;
  ASSERT_TRUE(eventually([&] {
    msgs = http_call(g.port(other), "GET", path);
    return msgs.status == 200 && parse(msgs.body).at("items").as_array().size() == 2;
  }, std::chrono::seconds(10))) << msgs.status << " " << msgs.body;
  auto m = parse(msgs.body).at("items").as_array();
  EXPECT_EQ(m[0].at("content").as_string(), "my name is Ada");
  EXPECT_EQ(m[1].at("content").as_string(), "Noted: your name is Ada.");
  auto list = http_call(g.port(other), "GET", "/api/v1/ai/conversations");
  ASSERT_EQ(list.status, 200u) << list.body;
  EXPECT_EQ(parse(list.body).at("items").as_array().size(), 1u) << list.body;

  // Another member continues it: the model is sent the history.
  body = {{"message", "what is my name?"}, {"conversation_id", conv}};
  r = http_call(g.port(other), "POST", "/api/v1/ai/chat", json::serialize(body),
                std::chrono::seconds(30));
  ASSERT_EQ(r.status, 200u) << r.body;
  auto reqs = llm.requests();
  ASSERT_EQ(reqs.size(), 2u);
  auto sent = json::serialize(reqs[1].at("body").at("messages"));
  EXPECT_NE(sent.find("Noted: your name is Ada."), std::string::npos) << sent;
}

TEST_F(ai_chat, conversations_persist_across_a_restart) {
  scripted_llm llm(dir_.path(), {scripted_llm::say("Noted: your name is Ada."),
                                 scripted_llm::say("You are Ada.")});
  std::string conv;
  {
    node_process node(dir_.path() + "/data", llm_args(llm));
    ASSERT_TRUE(node.running());
    auto r = chat(node, "my name is Ada");
    ASSERT_EQ(r.status, 200u);
    auto ev = events_of(r.body);
    auto* c = find(ev, "conversation_id");
    ASSERT_NE(c, nullptr) << r.body;
    conv = c->data.at("conversation_id").as_string().c_str();
    EXPECT_EQ(node.stop(SIGTERM), 0);
  }
  node_process node(dir_.path() + "/data", llm_args(llm));
  ASSERT_TRUE(node.running());
  auto list = http_call(node.http_port(), "GET", "/api/v1/ai/conversations");
  ASSERT_EQ(list.status, 200u) << list.body;
  auto items = parse(list.body).at("items").as_array();
  ASSERT_EQ(items.size(), 1u) << list.body;
  EXPECT_EQ(items[0].at("id").as_string(), conv);
  auto msgs = http_call(node.http_port(), "GET", "/api/v1/ai/conversations/" + conv + "/messages");
  ASSERT_EQ(msgs.status, 200u) << msgs.body;
  auto m = parse(msgs.body).at("items").as_array();
  ASSERT_EQ(m.size(), 2u) << msgs.body;
  EXPECT_EQ(m[0].at("role").as_string(), "user");
  EXPECT_EQ(m[1].at("content").as_string(), "Noted: your name is Ada.");

  // The next turn replays the history to the model.
  auto r = chat(node, "what is my name?", conv);
  ASSERT_EQ(r.status, 200u);
  auto reqs = llm.requests();
  ASSERT_EQ(reqs.size(), 2u);
  auto sent = json::serialize(reqs[1].at("body").at("messages"));
  EXPECT_NE(sent.find("my name is Ada"), std::string::npos) << sent;
  EXPECT_NE(sent.find("Noted: your name is Ada."), std::string::npos) << sent;
  EXPECT_EQ(http_call(node.http_port(), "GET", "/api/v1/ai/conversations/c-nope/messages").status,
            404u);
}

TEST_F(ai_chat, without_a_model_chat_answers_llm_not_configured) {
  node_process node(dir_.path() + "/data");
  ASSERT_TRUE(node.running());
  auto r = chat(node, "hello");
  EXPECT_EQ(r.status, 503u);
  EXPECT_EQ(parse(r.body).at("error").at("code").as_string(), "llm_not_configured") << r.body;
  auto bad = http_call(node.http_port(), "POST", "/api/v1/ai/chat", R"({"message":""})");
  EXPECT_EQ(bad.status, 400u);
  auto list = http_call(node.http_port(), "GET", "/api/v1/ai/conversations");
  EXPECT_EQ(list.status, 200u);
}

TEST_F(ai_chat, a_failing_model_ends_the_stream_with_an_error_event) {
  scripted_llm llm(dir_.path(), {scripted_llm::status(500)});
  node_process node(dir_.path() + "/data", llm_args(llm));
  ASSERT_TRUE(node.running());
  auto r = chat(node, "hello");
  ASSERT_EQ(r.status, 200u);
  auto ev = events_of(r.body);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().name, "error") << r.body;
  EXPECT_NE(json::serialize(ev.back().data).find("HTTP 500"), std::string::npos);
}

TEST_F(ai_chat, the_websocket_carries_the_same_events) {
  scripted_llm llm(dir_.path(), {scripted_llm::call("w1", "query_workers", "{}"),
                                 scripted_llm::say("One worker is online.")});
  node_process node(dir_.path() + "/data", llm_args(llm));
  ASSERT_TRUE(node.running());
  auto frames = ws_turn(node.http_port(), R"({"type":"chat","message":"how many workers?"})");
  ASSERT_FALSE(frames.empty()) << "no frames over the WebSocket";
  std::vector<std::string> seen;
  for (auto& f : frames) seen.push_back(f.at("event").as_string().c_str());
  EXPECT_EQ(seen.front(), "conversation_id");
  EXPECT_EQ(seen.back(), "done");
  EXPECT_NE(std::find(seen.begin(), seen.end(), "tool_call"), seen.end());
  EXPECT_NE(std::find(seen.begin(), seen.end(), "tool_result"), seen.end());
  std::string text;
  for (auto& f : frames)
    if (f.at("event").as_string() == "text") text += f.at("data").at("delta").as_string().c_str();
  EXPECT_EQ(text, "One worker is online.");
  // A plain GET describes the protocol instead.
  EXPECT_EQ(http_call(node.http_port(), "GET", "/api/v1/ai/ws").status, 200u);
}

// RBAC through the agent (auth flags as in tests/integration/auth_node_test.cpp):
// chatting spends model tokens, so a viewer gets 403 before the model is asked;
// an operator's agent must not delete a task (admin-only): the confirmed tool
// call re-enters the REST API with the operator's token and gets 403.
TEST_F(ai_chat, a_viewer_cannot_chat_and_an_operators_agent_cannot_delete) {
  scripted_llm llm(dir_.path(), {scripted_llm::call("d1", "delete_task", R"({"task_id":1})"),
                                 scripted_llm::say("I may not delete it.")});
  std::ofstream(dir_.path() + "/secret") << "ai-chat-test-secret-0123456789abcdef\n";
  std::ofstream(dir_.path() + "/admin") << "admin-password-1\n";
  auto args = llm_args(llm);
  for (auto a : {"--auth", "--auth-secret-file", "", "--admin-password-file", ""}) args.push_back(a);
  args[args.size() - 3] = dir_.path() + "/secret";
  args[args.size() - 1] = dir_.path() + "/admin";
  node_process node(dir_.path() + "/data", args);
  ASSERT_TRUE(node.running());
  auto login = [&](const std::string& user, const std::string& password) {
    std::string token;
    eventually([&] {  // the bootstrap admin exists once its proposal commits
      auto r = http_call(node.http_port(), "POST", "/api/v1/auth/login",
                         json::serialize(json::object{{"username", user}, {"password", password}}));
      auto v = parse(r.body);
      if (r.status == 200 && v.is_object()) token = std::string(v.at("token").as_string());
      return !token.empty();
    }, std::chrono::seconds(20));
    EXPECT_FALSE(token.empty()) << user << " cannot log in";
    return token;
  };
  auto admin = login("admin", "admin-password-1");
  std::map<std::string, std::string> as_admin{{"Authorization", "Bearer " + admin}};
  for (auto body : {R"({"name":"ada","password":"ada-password","role":"viewer"})",
                    R"({"name":"otto","password":"otto-password","role":"operator"})"})
    ASSERT_EQ(http_call(node.http_port(), "POST", "/api/v1/users", body, std::chrono::seconds(10),
                        as_admin).status, 201u);
  ASSERT_EQ(http_call(node.http_port(), "POST", "/api/v1/tasks",
                      R"({"name":"guarded","kind":"noop","schedule":"@every 1h"})",
                      std::chrono::seconds(10), as_admin).status, 201u);

  auto viewer = login("ada", "ada-password");
  auto denied = http_call(node.http_port(), "POST", "/api/v1/ai/chat", R"({"message":"delete task 1"})",
                          std::chrono::seconds(30), {{"Authorization", "Bearer " + viewer}});
  EXPECT_EQ(denied.status, 403u) << denied.body;
  EXPECT_TRUE(llm.requests().empty()) << "a viewer's chat reached the model";

  std::map<std::string, std::string> as_otto{{"Authorization", "Bearer " + login("otto", "otto-password")}};
  auto r = http_call(node.http_port(), "POST", "/api/v1/ai/chat", R"({"message":"delete task 1"})",
                     std::chrono::seconds(30), as_otto);
  ASSERT_EQ(r.status, 200u) << r.body;
  auto ev = events_of(r.body);
  auto* confirm = find(ev, "confirmation_required");
  ASSERT_NE(confirm, nullptr) << r.body;
  auto conv = std::string(find(ev, "conversation_id")->data.at("conversation_id").as_string());
  auto body = json::serialize(json::object{{"conversation_id", conv},
                                           {"action_id", confirm->data.at("action_id")},
                                           {"approve", true}});
  auto c = http_call(node.http_port(), "POST", "/api/v1/ai/confirm", body, std::chrono::seconds(30),
                     as_otto);
  ASSERT_EQ(c.status, 200u) << c.body;
  auto confirmed = events_of(c.body);  // find() points into it: keep it alive
  auto* result = find(confirmed, "tool_result");
  ASSERT_NE(result, nullptr) << c.body;
  EXPECT_FALSE(result->data.at("ok").as_bool()) << c.body;
  EXPECT_NE(json::serialize(result->data).find("forbidden"), std::string::npos) << c.body;
  EXPECT_EQ(http_call(node.http_port(), "GET", "/api/v1/tasks/1", "", std::chrono::seconds(10),
                      as_admin).status, 200u) << "the operator's agent deleted the task";
}

}  // namespace
