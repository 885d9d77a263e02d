#include "tests/support/orchestrator_env.hpp"

#include <pqxx/pqxx>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <unistd.h>

namespace orch::test {

std::string orchestrator_binary() {
    if (const char* env = std::getenv("ORCH_ORCHESTRATOR_BIN")) {
        return env;
    }
    return ORCH_ORCHESTRATOR_BIN;
}

std::string services_database_url() {
    const char* url = std::getenv("DATABASE_URL");
    return url ? url : "";
}

namespace {
// postgresql://user@host:port/db -> the same URL with another database name.
std::string with_database(const std::string& url, const std::string& db) {
    auto slash = url.rfind('/');
    auto query = url.find('?', slash);
    return url.substr(0, slash + 1) + db + (query == std::string::npos ? "" : url.substr(query));
}
}  // namespace

orchestrator_env::orchestrator_env(unsigned short sandbox_port, std::string api_key)
    : admin_url_(services_database_url()),
      api_url_("http://127.0.0.1:" + std::to_string(sandbox_port)),
      api_key_(std::move(api_key)) {
    static std::atomic<int> counter{0};
    name_ = "orch_t_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
    {
        pqxx::connection c(admin_url_);
        pqxx::nontransaction tx(c);
        tx.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
        tx.exec("CREATE DATABASE " + name_);
    }
    database_url_ = with_database(admin_url_, name_);
    auto r = run({"migrate"});
    if (r.exit_code != 0) {
        throw std::runtime_error("orchestrator migrate failed: " + r.output);
    }
}

orchestrator_env::~orchestrator_env() {
    try {
        pqxx::connection c(admin_url_);
        pqxx::nontransaction tx(c);
        tx.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    } catch (const std::exception&) {
        // the services are going away with the test run; nothing to clean
    }
}

std::map<std::string, std::string> orchestrator_env::env() const {
    const char* redis = std::getenv("REDIS_URL");
    // Tests that are not about rate limits run without quotas (the defaults would spread a
    // campaign over days); tests about them set their own through set().
    std::map<std::string, std::string> e = {{"DATABASE_URL", database_url_},
                                            {"REDIS_URL", redis ? redis : ""},
                                            {"OUTREACH_API_URL", api_url_},
                                            {"OUTREACH_API_KEY", api_key_},
                                            {"ORCH_LOG_LEVEL", "info"},
                                            {"ORCH_KEY_REQUESTS_PER_MINUTE", "60000000"},
                                            {"ORCH_KEY_BURST", "100000"},
                                            {"ORCH_RAMP_UP", "false"},
                                            {"ORCH_SECRET_KEY", "test-only-secret-key-0123456789abcdef"}};
    for (const char* q : {"INVITE", "SEND", "VISIT", "WITHDRAW", "SEARCH"}) {
        e[std::string("ORCH_") + q + "_PER_DAY"] = "-1";
        e[std::string("ORCH_") + q + "_PER_WEEK"] = "-1";
    }
    for (const auto& [k, v] : overrides_) {
        e[k] = v;
    }
    return e;
}

run_result orchestrator_env::run(std::vector<std::string> args, int timeout_ms,
                                 const std::optional<std::string>& input) const {
    args.insert(args.begin(), orchestrator_binary());
    return run_program(args, env(), timeout_ms, input);
}

std::unique_ptr<background_process> orchestrator_env::spawn(std::vector<std::string> args) const {
    args.insert(args.begin(), orchestrator_binary());
    return std::make_unique<background_process>(args, env());
}

std::string orchestrator_env::scalar(const std::string& sql) const {
    pqxx::connection c(database_url_);
    pqxx::nontransaction tx(c);
    auto r = tx.exec(sql);
    if (r.empty() || r[0][0].is_null()) {
        return "";
    }
    return r[0][0].as<std::string>();
}

}  // namespace orch::test
