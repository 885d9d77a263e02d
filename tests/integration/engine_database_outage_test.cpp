// A PostgreSQL outage under a running worker and `serve`, made by cutting every connection to it
// (tests/support/tcp_cut.hpp) for a few seconds: the worker says so once and says when it is over
// (it wrote a warning per lane every 500 ms and nothing at the end), and so does `serve`, then
// they run a campaign as before; the admin endpoint's first answer after the outage does not fail on a pooled connection
// the outage broke.
#include "tests/support/e2e_campaign.hpp"
#include "tests/support/tcp_cut.hpp"

#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

#include <chrono>
#include <csignal>
#include <regex>
#include <thread>

namespace {

using namespace orch::test;
using namespace std::chrono_literals;

// The database URL with another port: the same database, through the forwarder.
std::string through(const std::string& database_url, unsigned short port) {
    boost::urls::url u = boost::urls::parse_uri(database_url).value();
    u.set_port_number(port);
    return std::string(u.buffer());
}

unsigned short port_of(const std::string& database_url) {
    return boost::urls::parse_uri(database_url).value().port_number();
}

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) {
        ++n;
    }
    return n;
}

template <class Pred>
bool wait_for(Pred done, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= until) {
            return false;
        }
        std::this_thread::sleep_for(50ms);
    }
    return true;
}

TEST(DatabaseOutage, TheWorkerTellsItOnceAndItsEndThenGoesOn) {
    ORCH_REQUIRE_SERVICE("DATABASE_URL");
    sandbox_process sandbox({"--accept-probability", "1"});
    orchestrator_env env(sandbox.port());
    auto connected = env.run({"accounts", "connect", "--login-token", "token-1", "--country", "FR", "--label",
                              "sender-1"});
    ASSERT_EQ(connected.exit_code, 0) << connected.output;
    tcp_cut database(port_of(env.database_url()));
    env.set("DATABASE_URL", through(env.database_url(), database.port()));
    // Three lanes, each polling every 200 ms while idle: the old worker wrote a warning per lane
    // and per listener attempt.
    auto worker = env.spawn({"worker", "--worker-lanes", "3", "--idle-poll-ms", "200"});
    // serve (hosted mode) through the outage too: it delivers the acceptances afterwards.
    auto serve = env.spawn({"serve", "--webhook-listen", "127.0.0.1:" + std::to_string(free_port()), "--admin-listen",
                            "off"});
    ASSERT_TRUE(wait_for([&] { return worker->log().find(" started with 3 lanes") != std::string::npos; }, 10s))
        << worker->log();
    std::this_thread::sleep_for(1s);

    database.cut();
    std::this_thread::sleep_for(6s);
    const std::string during = worker->log();
    database.restore();
    const std::string over = "worker: database available again after ";
    ASSERT_TRUE(wait_for([&] { return worker->log().find(over) != std::string::npos; }, 20s)) << worker->log();
    const std::string log = worker->log();
    EXPECT_EQ(occurrences(log, "worker: database unavailable ("), 1u) << log;
    EXPECT_NE(during.find("worker: database unavailable ("), std::string::npos) << during;
    EXPECT_EQ(occurrences(log, "database unavailable"), 1u) << log;
    EXPECT_EQ(occurrences(log, "lost its connection"), 0u) << log;
    // Told with its length and its failed attempts, each lane and the listener's.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(log, m, std::regex(R"(database available again after ([0-9.]+) s \(([0-9]+) failed attempts\))")))
        << log;
    EXPECT_GE(std::stod(m[1]), 5.5) << log;
    EXPECT_GE(std::stoi(m[2]), 4) << log;
    EXPECT_TRUE(worker->alive()) << log;
    // serve too: once, and its end (its inbox sender wrote an error every 3 s, the leader check
    // nothing).
    ASSERT_TRUE(wait_for([&] { return serve->log().find("serve: database available again after ") != std::string::npos; },
                         20s))
        << serve->log();
    EXPECT_EQ(occurrences(serve->log(), "serve: database unavailable ("), 1u) << serve->log();
    EXPECT_EQ(occurrences(serve->log(), "inbox sender"), 1u) << serve->log();

    // The worker runs a campaign after the outage as before.
    const std::string file = ::testing::TempDir() + "/outage.yaml";
    std::ofstream(file) << campaign_yaml("outage", search_audience(5), "1h", {"sender-1"});
    auto applied = env.run({"campaign", "apply", file});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    ASSERT_TRUE(wait_for([&] { return env.scalar("SELECT count(*) FROM enrollments WHERE status = 'done'") == "5"; },
                         60s))
        << env.scalar("SELECT string_agg(status || ':' || step, ', ') FROM enrollments") << "\n"
        << worker->log();
    EXPECT_EQ(worker->stop(SIGTERM), 0) << worker->log();
    EXPECT_EQ(serve->stop(SIGTERM), 0) << serve->log();
    const auto sent = read_side_effects(sandbox.control_port());
    EXPECT_EQ(sent.messages, 5);
    EXPECT_EQ(sent.duplicate_messages, 0);
    EXPECT_EQ(sent.duplicate_invite_requests, 0);
}

TEST(DatabaseOutage, TheAdminEndpointsFirstAnswerAfterAnOutageIsNotAStaleConnectionsError) {
    ORCH_REQUIRE_SERVICE("DATABASE_URL");
    sandbox_process sandbox;
    orchestrator_env env(sandbox.port());
    tcp_cut database(port_of(env.database_url()));
    env.set("DATABASE_URL", through(env.database_url(), database.port()));
    env.set("ORCH_ADMIN_TOKEN", "outage-test-token-0123456789");
    const auto port = free_port();
    env.set("ORCH_ADMIN_DB_CONNECTIONS", "2");
    auto serve = env.spawn({"serve", "--webhook-listen", "127.0.0.1:" + std::to_string(free_port()), "--admin-listen",
                            "127.0.0.1:" + std::to_string(port)});
    http_client admin("127.0.0.1", port);
    ASSERT_TRUE(wait_for(
        [&] {
            try {
                return admin.get("/readyz").status == 200;
            } catch (const std::exception&) {
                return false;  // not listening yet
            }
        },
        20s))
        << serve->log();

    // Every pooled connection made (a pool of 2, each request on either thread), then broken.
    for (int i = 0; i < 6; ++i) {
        EXPECT_EQ(admin.get("/readyz").status, 200);
    }
    database.cut();
    std::this_thread::sleep_for(1s);
    database.restore();
    // The pooled connections the outage broke are found broken before use (pinged once idle for
    // over 5 s), not by a request: every answer after the outage is ready.
    std::this_thread::sleep_for(6s);
    for (int i = 0; i < 6; ++i) {
        auto ready = admin.get("/readyz");
        EXPECT_EQ(ready.status, 200) << i << ": " << ready.body;
        EXPECT_EQ(ready.body_json()["checks"]["postgres"], "ok") << i << ": " << ready.body;
    }
    // During an outage, /readyz says PostgreSQL is unavailable (a 503, not a crash or a 500).
    database.cut();
    auto down = admin.get("/readyz");
    EXPECT_EQ(down.status, 503) << down.body;
    EXPECT_EQ(down.body_json()["checks"]["postgres"].get<std::string>().rfind("unavailable", 0), 0u) << down.body;
    database.restore();
    EXPECT_TRUE(serve->alive()) << serve->log();
}

}  // namespace
