// Executes tool plans through the REST handler; see tool_runner.hpp.
#include "actors/llm_agent/tool_runner.hpp"

#include <boost/json.hpp>

namespace aisched::llm {

namespace json = boost::json;

namespace {

struct tool_run {
  gateway::handler_fn api;
  tool_plan plan;
  std::string authorization;
  tool_done_fn done;
  size_t next = 0;
  json::object results;  // by step label, for plans with several steps
};

json::value body_json(const std::string& body) {
  if (body.empty()) return json::object{};
  json::error_code ec;
  auto v = json::parse(body, ec);
  if (ec) return json::string(body);
  return v;
}

void call(std::shared_ptr<tool_run> run, gateway::http_request req,
          std::function<void(unsigned, json::value)> then) {
  if (!run->authorization.empty()) req.headers["authorization"] = run->authorization;
  req.headers["x-aisched-via"] = "ai-agent";
  run->api(std::move(req), [then = std::move(then)](gateway::http_response res) {
    if (res.stream) {  // no tool asks for a stream; never leave one open
      then(500, json::object{{"error", "unexpected streamed answer"}});
      return;
    }
    then(res.status, body_json(res.body));
  });
}

void step(std::shared_ptr<tool_run> run) {
  auto& s = run->plan.steps[run->next];
  call(run, s.request, [run](unsigned status, json::value v) {
    auto& label = run->plan.steps[run->next].label;
    bool ok = status >= 200 && status < 300;
    if (!ok && run->plan.steps.size() == 1) return run->done(false, json::serialize(v));
    if (run->plan.steps.size() == 1) return run->done(true, json::serialize(v));
    run->results[label] = ok ? v : json::value{{"status", status}, {"answer", v}};
    if (++run->next < run->plan.steps.size()) return step(run);
    run->done(true, json::serialize(run->results));
  });
}

}  // namespace

void run_tool(const gateway::handler_fn& api, const tool_plan& plan,
              const std::map<std::string, std::string>& caller_headers, tool_done_fn done) {
  if (plan.steps.empty() || !api) {
    done(false, R"({"error":"this tool is not available"})");
    return;
  }
  auto run = std::make_shared<tool_run>();
  run->api = api;
  run->plan = plan;
  run->done = std::move(done);
  if (auto i = caller_headers.find("authorization"); i != caller_headers.end())
    run->authorization = i->second;
  step(run);
}

}  // namespace aisched::llm
