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

/// retry_failed_instance, second half: trigger the task of a finished-badly run.
void retry_task(std::shared_ptr<tool_run> run, const json::value& inst) {
  auto* o = inst.if_object();
  auto state = o && o->contains("state") && o->at("state").is_string()
                   ? std::string(o->at("state").get_string()) : std::string();
  if (state != "failed" && state != "timed_out" && state != "cancelled")
    return run->done(false, json::serialize(json::object{
        {"error", "only failed, timed-out or cancelled runs are retried; this one is '" + state + "'"}}));
  auto* task_id = o->if_contains("task_id");
  if (!task_id || !task_id->is_number())
    return run->done(false, json::serialize(json::object{{"error", "the instance names no task"}}));
  gateway::http_request req;
  req.method = "POST";
  req.path = "/api/v1/tasks/" + std::to_string(task_id->to_number<uint64_t>()) + "/trigger";
  req.body = "{}";
  req.headers["content-type"] = "application/json";
  call(run, std::move(req), [run](unsigned status, json::value v) {
    bool ok = status >= 200 && status < 300;
    run->done(ok, json::serialize(ok ? json::value{{"retried", true}, {"trigger", v}} : v));
  });
}

void step(std::shared_ptr<tool_run> run) {
  auto& s = run->plan.steps[run->next];
  call(run, s.request, [run](unsigned status, json::value v) {
    auto& label = run->plan.steps[run->next].label;
    bool ok = status >= 200 && status < 300;
    if (!ok && run->plan.steps.size() == 1) return run->done(false, json::serialize(v));
    if (run->plan.retry_instance)
      return ok ? retry_task(run, v) : run->done(false, json::serialize(v));
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
