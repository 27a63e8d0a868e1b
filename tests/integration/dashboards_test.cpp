// tools/dashboards against promtool and a live node: the alert rules pass
// `promtool check rules`, a live /metrics passes `promtool check metrics`, and
// every metric the Grafana dashboard and the rules query exists on a live node
// (so a renamed family cannot silently blank a panel or an alert).
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/node_process.hpp"
#include "support/prometheus_text.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;

namespace {

const std::string dashboards = AISCHED_DASHBOARDS_DIR;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The metric names a PromQL expression reads: identifiers that are not
/// functions, aggregations, keywords, label names or label values.
std::set<std::string> metrics_of(std::string expr) {
  expr = std::regex_replace(expr, std::regex(R"(\{[^}]*\})"), " ");   // label matchers
  expr = std::regex_replace(expr, std::regex(R"(\[[^\]]*\])"), " ");  // ranges
  expr = std::regex_replace(expr, std::regex(R"(\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\))"), " ");
  expr = std::regex_replace(expr, std::regex(R"("[^"]*")"), " ");
  static const std::set<std::string> keywords{"and", "or", "unless", "bool", "offset", "inf", "nan"};
  std::set<std::string> out;
  std::regex ident(R"(([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\()?)");
  for (std::sregex_iterator i(expr.begin(), expr.end(), ident), end; i != end; ++i) {
    if ((*i)[2].matched) continue;  // a function or aggregation call
    auto name = (*i)[1].str();
    if (!keywords.count(name)) out.insert(name);
  }
  return out;
}

/// Every `expr` of the dashboard's panels' targets.
std::vector<std::string> dashboard_exprs(const json::value& d) {
  std::vector<std::string> out;
  for (auto& p : d.at("panels").as_array())
    for (auto& t : p.at("targets").as_array()) out.emplace_back(t.at("expr").as_string());
  return out;
}

/// Every `expr:` line of the rules file.
std::vector<std::string> rule_exprs(const std::string& yml) {
  std::vector<std::string> out;
  std::regex line(R"(^\s*expr:\s*(.+)$)");
  std::istringstream in(yml);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line)) out.push_back(m[1]);
  }
  return out;
}

}  // namespace

TEST(dashboards, the_metric_names_of_an_expression_are_found) {
  EXPECT_EQ(metrics_of(R"(histogram_quantile(0.99, sum by (le) (rate(x_bucket{a="b"}[5m]))) > 1)"),
            (std::set<std::string>{"x_bucket"}));
  EXPECT_EQ(metrics_of("max(a) >= 2 and on (instance) b"), (std::set<std::string>{"a", "b"}));
}

TEST(dashboards, promtool_accepts_the_alert_rules) {
  if (std::string(AISCHED_PROMTOOL).empty()) GTEST_SKIP() << "promtool not installed (tools/bootstrap.sh)";
  auto r = run_command({AISCHED_PROMTOOL, "check", "rules", dashboards + "/aisched-alerts.rules.yml"},
                       std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SUCCESS"), std::string::npos) << r.out;
}

TEST(dashboards, a_live_node_passes_promtool_and_serves_every_queried_metric) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  // One request so the per-route gateway series exist.
  ASSERT_EQ(http_call(port, "GET", "/healthz").status, 200u);
  auto scrape = http_call(port, "GET", "/metrics");
  ASSERT_EQ(scrape.status, 200u);

  if (!std::string(AISCHED_PROMTOOL).empty()) {
    auto r = run_command({AISCHED_PROMTOOL, "check", "metrics"}, std::chrono::seconds(30),
                         scrape.body);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  auto text = parse_prometheus_text(scrape.body);
  std::set<std::string> served;
  for (auto& s : text.samples) served.insert(s.name);
  auto dashboard = json::parse(read_file(dashboards + "/aisched-grafana.json"));
  auto exprs = dashboard_exprs(dashboard);
  EXPECT_GE(exprs.size(), 10u);
  for (auto& e : rule_exprs(read_file(dashboards + "/aisched-alerts.rules.yml"))) exprs.push_back(e);
  std::set<std::string> queried;
  for (auto& e : exprs)
    for (auto& m : metrics_of(e)) queried.insert(m);
  for (auto& m : queried) EXPECT_TRUE(served.count(m)) << m << " is queried but not on /metrics";
  for (auto family : {"raft_is_leader", "scheduler_dispatch_total", "scheduler_trigger_lateness_seconds_bucket",
                      "scheduler_instances", "scheduler_backpressure_state", "worker_inflight",
                      "gateway_requests_total", "gateway_request_duration_seconds_bucket",
                      "alerts_sent_total", "scheduler_workers"})
    EXPECT_TRUE(queried.count(family)) << family << " is on no panel or rule";
}
