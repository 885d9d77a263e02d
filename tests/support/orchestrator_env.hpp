// An orchestrator under test: a fresh database of its own (created on the Postgres of
// deploy/dev-services.sh, dropped at the end), the environment pointing at a sandbox, and the
// real `orchestrator` binary run as a child process.
#pragma once

#include "tests/support/process.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace orch::test {

std::string orchestrator_binary();

// DATABASE_URL of the test run, or "" when the services are not running.
std::string services_database_url();

class orchestrator_env {
public:
    // Creates database orch_t_<pid>_<n> and migrates it. Throws std::runtime_error on failure.
    orchestrator_env(unsigned short sandbox_port, std::string api_key = "test-key");
    ~orchestrator_env();

    const std::string& database_url() const { return database_url_; }
    // The environment every orchestrator command of this test gets: its database, REDIS_URL of
    // the services, the sandbox, and no rate-limit quotas unless set() says otherwise.
    std::map<std::string, std::string> env() const;
    void set(const std::string& name, const std::string& value) { overrides_[name] = value; }
    run_result run(std::vector<std::string> args, int timeout_ms = 60'000,
                   const std::optional<std::string>& input = std::nullopt) const;
    std::unique_ptr<background_process> spawn(std::vector<std::string> args) const;
    // One value of a query on the test database, as text ("" for NULL or no row).
    std::string scalar(const std::string& sql) const;

private:
    std::string admin_url_;
    std::string name_;
    std::string database_url_;
    std::string api_url_;
    std::string api_key_;
    std::map<std::string, std::string> overrides_;
};

}  // namespace orch::test
