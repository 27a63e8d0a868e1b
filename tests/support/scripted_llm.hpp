// Test harness: a scripted OpenAI-compatible server (tests/support/scripted_llm.py)
// on a free loopback port, owned by the test: started with a script of answers,
// killed (by pid) on destruction. requests() reads back what the client sent.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "support/node_process.hpp"

namespace aisched::test {

class scripted_llm {
 public:
  /// Starts the server in `dir` (a test's temp dir) with `script` (see the .py);
  /// `name` keeps two servers in one dir apart. Fails the test if it does not come up.
  scripted_llm(const std::string& dir, const boost::json::array& script,
               const std::string& name = "llm");
  ~scripted_llm();

  /// The base URL to configure ("http://127.0.0.1:PORT/v1").
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  uint16_t port() const { return port_; }

  /// The requests received so far: {"path", "authorization", "body"}.
  std::vector<boost::json::object> requests() const;

  // -- script entries ---------------------------------------------------------
  static boost::json::object say(const std::string& text);
  static boost::json::object call(const std::string& id, const std::string& name,
                                  const std::string& arguments);
  static boost::json::object status(unsigned code);
  static boost::json::object hang(int seconds);

 private:
  std::string log_path_;
  std::unique_ptr<child_process> proc_;
  uint16_t port_ = 0;
};

}  // namespace aisched::test
