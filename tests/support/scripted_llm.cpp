// The scripted OpenAI-compatible server harness; see scripted_llm.hpp.
#include "support/scripted_llm.hpp"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace aisched::test {

namespace json = boost::json;

scripted_llm::scripted_llm(const std::string& dir, const json::array& script,
                           const std::string& name) {
  auto script_path = dir + "/" + name + "-script.json";
  auto port_file = dir + "/" + name + ".port";
  log_path_ = dir + "/" + name + "-requests.jsonl";
  std::ofstream(script_path) << json::serialize(script);
  proc_ = std::make_unique<child_process>(
      std::vector<std::string>{"/usr/bin/python3", AISCHED_SCRIPTED_LLM, "--script", script_path,
                               "--log", log_path_, "--port-file", port_file},
      dir + "/" + name + ".log");
  bool up = eventually(
      [&] {
        std::ifstream f(port_file);
        unsigned p = 0;
        if (f >> p) port_ = static_cast<uint16_t>(p);
        return port_ != 0;
      },
      std::chrono::seconds(10));
  if (!up) ADD_FAILURE() << "the scripted LLM server did not start: " << proc_->log();
}

scripted_llm::~scripted_llm() = default;  // child_process kills it

std::vector<json::object> scripted_llm::requests() const {
  std::vector<json::object> out;
  std::ifstream f(log_path_);
  std::string line;
  while (std::getline(f, line)) {
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (!ec && v.is_object()) out.push_back(v.as_object());
  }
  return out;
}

json::object scripted_llm::say(const std::string& text) { return {{"say", text}}; }

json::object scripted_llm::call(const std::string& id, const std::string& name,
                                const std::string& arguments) {
  return {{"call", json::array{json::object{{"id", id}, {"name", name}, {"arguments", arguments}}}}};
}

json::object scripted_llm::status(unsigned code) { return {{"status", code}, {"body", "scripted failure"}}; }

json::object scripted_llm::hang(int seconds) { return {{"hang", seconds}}; }

}  // namespace aisched::test
