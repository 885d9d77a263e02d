// End-to-end tests of the limits (issue 6): the Redis rate-limit buckets and the credit ledger,
// through the real `orchestrator` binary (worker processes racing) against the real sandbox,
// with a real Postgres database of the test's own. The truth comes from the sandbox: its request
// log (GET /control/requests), its side-effect record and its credit counters.
//
// Every test uses an API key of its own (the Redis buckets are keyed by the API key's hash), so
// tests running in parallel (ctest -j2) never share Redis state.
#include "engine/store.hpp"
#include "tests/support/env_limiter.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/process.hpp"
#include "tests/support/require_services.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace {

using orch::test::free_port;

using orch::test::background_process;
using orch::test::http_client;
using orch::test::json;

// An account's use of one action's quota as `accounts list --format json` gives it (its
// limits.actions, as GET /v1/accounts), null when not listed.
json action_use(const json& account, const std::string& action) {
    for (const auto& a : account["limits"]["actions"]) {
        if (a["action"] == action) {
            return a;
        }
    }
    return nullptr;
}
using orch::test::orchestrator_env;
using orch::test::sandbox_process;
using namespace std::chrono_literals;

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}


// check_invitation -> invite -> wait for acceptance (`wait`) -> message; a file audience (no
// search through the API, so every charged call is a step's call and is in the ledger).
// `extra`: more top-level lines (e.g. "budget_per_day_credits: 10\n").
std::string campaign_yaml(const std::string& name, const std::string& csv_file, const std::string& wait,
                          std::int64_t budget_credits, const std::string& extra = "") {
    return "name: " + name + "\naccounts: [sender-1, sender-2, sender-3]\naudience:\n  file: " + csv_file +
           "\nschedule:\n  time_zone: UTC\n  days: [mon, tue, wed, thu, fri, sat, sun]\n  hours: \"00:00-24:00\"\n"
           "budget_credits: " + std::to_string(budget_credits) + "\n" + extra + "stop_on_reply: true\nsteps:\n"
           "  - id: check\n    kind: check_invitation\n    on_accepted: message\n    on_pending: wait\n"
           "    on_no_invitation: invite\n"
           "  - id: invite\n    kind: invite\n    note: \"Hi {{first_name}}, let's connect.\"\n"
           "  - id: wait\n    kind: wait_accepted\n    timeout: " + wait + "\n    next: message\n    on_timeout: end\n"
           "  - id: message\n    kind: send\n    message_text: \"Thanks {{first_name}}, open to a chat?\"\n";
}

struct request_entry {
    std::int64_t at_ms = 0;
    int status = 0;
    std::string action;
    std::string account_id;
    std::string error_code;
    std::int64_t credits = 0;
};

std::vector<std::string> inside_cooldowns(const std::vector<request_entry>& log, std::int64_t hold_ms);

class LimitsTest : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        char tmpl[] = "/tmp/orch-limits-XXXXXX";
        dir_ = mkdtemp(tmpl);
        // A key of this test's own: its Redis buckets are not shared with any other test.
        key_ = std::string("lim-") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
               std::to_string(getpid()) + "-" + std::to_string(now_ms());
    }
    void TearDown() override {
        if (!dir_.empty()) {
            std::filesystem::remove_all(dir_);
        }
    }

    // The sandbox (key_ with `credits`), this test's database, and 3 connected senders.
    // The key is this test's own, so the senders' accounts, and the people the sandbox seeds as
    // having invited them, differ from run to run. A lead whose person invited its sender fails by
    // design (EngineTest covers it); these tests count invitations and leads against the limits,
    // so no one has invited the senders unless a test says otherwise.
    void start(std::vector<std::string> sandbox_flags, std::int64_t credits = 1'000'000) {
        if (std::find(sandbox_flags.begin(), sandbox_flags.end(), "--received-invitations-per-account") ==
            sandbox_flags.end()) {
            sandbox_flags.insert(sandbox_flags.end(), {"--received-invitations-per-account", "0"});
        }
        sandbox_flags.push_back("--api-key");
        sandbox_flags.push_back(key_ + ":" + std::to_string(credits));
        sandbox_ = std::make_unique<sandbox_process>(std::move(sandbox_flags));
        env_ = std::make_unique<orchestrator_env>(sandbox_->port(), key_);
        for (int i = 1; i <= 3; ++i) {
            auto r = env_->run({"accounts", "connect", "--login-token", "token-" + std::to_string(i), "--country", "FR",
                                "--label", "sender-" + std::to_string(i)});
            ASSERT_EQ(r.exit_code, 0) << r.output;
        }
        control_ = std::make_unique<http_client>("127.0.0.1", sandbox_->control_port());
    }

    // A campaign of `leads` people of the sandbox's world (a CSV file, from person `offset` on),
    // scheduled in `zone`, applied.
    void apply(const std::string& name, int leads, const std::string& wait, std::int64_t budget = 1'000'000,
               const std::string& extra = "", int offset = 200, const std::string& zone = "UTC") {
        auto people = control_json("/control/people?offset=" + std::to_string(offset) + "&limit=" + std::to_string(leads));
        std::string csv = "profile_url,first_name\n";
        for (const auto& p : people["people"]) {
            csv += p["profile_url"].get<std::string>() + "," + p["first_name"].get<std::string>() + "\n";
        }
        std::ofstream(dir_ + "/" + name + ".csv") << csv;
        auto file = dir_ + "/" + name + ".yaml";
        std::string yaml = campaign_yaml(name, name + ".csv", wait, budget, extra);
        yaml.replace(yaml.find("time_zone: UTC"), 14, "time_zone: " + zone);
        std::ofstream(file) << yaml;
        auto r = env_->run({"campaign", "apply", file});
        ASSERT_EQ(r.exit_code, 0) << r.output;
        ASSERT_NE(r.output.find(std::to_string(leads) + " enrolled"), std::string::npos) << r.output;
    }

    // The sandbox's request log of this test's key, at or after `since_ms`, in time order.
    std::vector<request_entry> requests(std::int64_t since_ms) {
        auto j = control_json("/control/requests?since_ms=" + std::to_string(since_ms) + "&key=" + key_);
        std::vector<request_entry> out;
        for (const auto& r : j["requests"]) {
            out.push_back({r["at_ms"].get<std::int64_t>(), r["status"].get<int>(), r["action"].get<std::string>(),
                           r["account_id"].get<std::string>(), r["error_code"].get<std::string>(),
                           r["credits"].get<std::int64_t>()});
        }
        std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.at_ms < b.at_ms; });
        return out;
    }

    // Invitations actually sent, per sender account id (the sandbox's side-effect record).
    std::map<std::string, int> invitations_sent() {
        std::map<std::string, int> per_account;
        auto record = control_json("/control/side-effects");  // named: the loop must not outlive it
        for (const auto& inv : record["invitations"]) {
            per_account[inv["account_id"].get<std::string>()] += inv["sent"].get<int>();
        }
        return per_account;
    }

    json funnel(const std::string& name) {
        auto r = env_->run({"report", "funnel", name, "--format", "json"});
        EXPECT_EQ(r.exit_code, 0) << r.output;
        return json::parse(r.output, nullptr, false);
    }

    // A control-interface answer as JSON; throws with the answer when it is not 200 and JSON.
    json control_json(const std::string& target) {
        auto r = control_->get(target);
        auto j = r.body_json();
        if (r.status != 200 || j.is_discarded()) {
            throw std::runtime_error("GET " + target + ": " + std::to_string(r.status) + " " + r.body.substr(0, 500));
        }
        return j;
    }

    std::int64_t count(const std::string& sql) { return std::stoll(env_->scalar(sql)); }

    // What the sandbox charged this test's key so far.
    std::int64_t charged() {
        auto credits = control_json("/control/credits");
        for (const auto& k : credits["keys"]) {
            if (k["key"] == key_) {
                return k["charged_total"].get<std::int64_t>();
            }
        }
        return -1;
    }

    json budget_show(const std::string& name) {
        auto r = env_->run({"budget", "show", name, "--format", "json"});
        EXPECT_EQ(r.exit_code, 0) << r.output;
        return json::parse(r.output, nullptr, false);
    }

    // Leads whose first check found the person already connected or already invited (the
    // sandbox's world has some connections from the start): they never need an invitation.
    int needed_no_invitation() {
        return static_cast<int>(count(
            "SELECT count(*) FROM enrollments e "
            "WHERE NOT EXISTS (SELECT 1 FROM step_attempts a WHERE a.enrollment_id = e.enrollment_id AND a.call = 'invite') "
            "AND EXISTS (SELECT 1 FROM step_attempts a WHERE a.enrollment_id = e.enrollment_id "
            "AND a.step IN ('message', 'wait'))"));
    }

    // Polls `done` every 50 ms for at most `timeout`.
    static bool eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
        auto end = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < end) {
            if (done()) {
                return true;
            }
            std::this_thread::sleep_for(50ms);
        }
        return done();
    }

    std::vector<std::unique_ptr<background_process>> workers(int n, std::vector<std::string> args) {
        std::vector<std::unique_ptr<background_process>> out;
        args.insert(args.begin(), "worker");
        for (int i = 0; i < n; ++i) {
            auto a = args;
            a.push_back("--worker-id");
            a.push_back("w" + std::to_string(i));
            out.push_back(env_->spawn(a));
        }
        return out;
    }

    // A busy campaign and one whose `cap` (a line of its file) will be used up share a key of
    // 1 request/s and one worker: every lead of the capped one must wait with `code` within 10 s
    // of the cap being used up. Without the cycle plan's wait for standing caps, 9 of 40 were
    // parked after 10 s; without the held leads' wake-up, 8 still waited for the key's rate.
    void held_leads_meet_their_cap(const std::string& cap, const std::string& code) {
        start({"--accept-probability", "0"});
        env_->set("ORCH_PACING", "false");
        env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "60");
        env_->set("ORCH_KEY_BURST", "2");
        apply("busy", 150, "1s", 100'000, "", 300);
        apply("capped", 40, "1s", 1'000, cap, 200);
        const std::string of_capped = "FROM enrollments e JOIN campaigns c USING (campaign_id) WHERE c.name = 'capped' ";
        auto count_code = [&](const std::string& c) {
            return count("SELECT count(*) " + of_capped + "AND e.status IN ('ready', 'waiting') AND e.wait_code = '" + c + "'");
        };
        auto not_parked = [&] {
            return count("SELECT count(*) " + of_capped +
                         "AND e.status IN ('ready', 'calling', 'waiting') AND e.wait_code IS DISTINCT FROM '" + code + "'");
        };
        auto codes = [&] {
            return env_->scalar("SELECT string_agg(c, ', ') FROM (SELECT c.name || ' ' || e.status || ' ' || "
                                "COALESCE(e.wait_code, '-') || ': ' || count(*) AS c FROM enrollments e "
                                "JOIN campaigns c USING (campaign_id) GROUP BY c.name, e.status, e.wait_code) x");
        };
        auto used_up = [&] {
            auto b = budget_show("capped");
            if (b["reserved"] != 0 || count_code(code) == 0) {
                return false;
            }
            if (code == "day_budget") {
                return b["today"].is_object() && b["today"]["available"] == 0;
            }
            int senders = 0;
            for (const auto& a : b["accounts"]) {
                if (a["available"] != 0) {
                    return false;
                }
                ++senders;
            }
            return senders == 3;
        };
        auto ws = workers(1, {"--batch-size", "20"});
        const bool capped = eventually(used_up, 90s);
        const auto at_cap = std::chrono::steady_clock::now();
        ASSERT_TRUE(capped) << budget_show("capped").dump() << "\n" << codes();
        const std::string seen_at_cap = codes();
        // At 1 request/s shared with the busy campaign, fewer than 10 leads could reach the
        // ledger's own refusal within 10 s.
        const bool parked = eventually([&] { return not_parked() == 0; }, 10s);
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - at_cap);
        const std::string seen = codes();
        const auto busy_calls = count("SELECT count(*) FROM step_attempts a JOIN enrollments e USING (enrollment_id) "
                                      "JOIN campaigns c USING (campaign_id) WHERE c.name = 'busy'");
        std::string wake_ups;   // the worker's wake-ups of held leads, should they not be parked
        for (auto& w : ws) {
            EXPECT_EQ(w->stop(SIGTERM), 0) << w->log();
            std::istringstream lines(w->log());
            for (std::string line; std::getline(lines, line);) {
                if (line.find("held back by the limits gate") != std::string::npos) {
                    wake_ups += line + "\n";
                }
            }
        }
        EXPECT_TRUE(parked) << took.count() << " ms after the cap: " << seen << "\nat the cap: " << seen_at_cap
                            << "\nthe worker's wake-ups:\n" << wake_ups;
        EXPECT_GE(count_code(code), 30) << seen;
        EXPECT_GT(busy_calls, 0) << seen;
        EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status = 'failed'"), 0);
    }

    // Applies `name` with `leads` leads, opens a 1.5 s burst of the key's 429s with Retry-After
    // 2 s, and runs a worker to the end: the key gets no request inside the window (beyond the
    // in-flight grace), and the window is the key's, from Retry-After. Returns the worker's log.
    std::string a_key_burst_holds_the_key(const std::string& name, int leads) {
        apply(name, leads, "1s");
        auto since = now_ms();
        auto burst = control_->post("/control/rate-limit-burst",
                                    {{"key", key_}, {"duration_ms", 1500}, {"retry_after_s", 2}});
        EXPECT_EQ(burst.status, 200) << burst.body;
        auto worker = env_->spawn({"worker", "--exit-when-idle"});
        EXPECT_EQ(worker->wait(90'000), 0) << worker->log();
        auto log = requests(since);
        EXPECT_GT(std::count_if(log.begin(), log.end(), [](const auto& r) { return r.status == 429; }), 0)
            << "the burst was not seen";
        for (const auto& v : inside_cooldowns(log, 2000)) {
            ADD_FAILURE() << v;
        }
        EXPECT_NE(worker->log().find("API key cooldown 2000 ms"), std::string::npos) << worker->log();
        EXPECT_EQ(funnel(name)["live"], 0);
        EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status = 'failed'"), 0);
        return worker->log();
    }

    std::string dir_;
    std::string key_;
    std::unique_ptr<sandbox_process> sandbox_;
    std::unique_ptr<orchestrator_env> env_;
    std::unique_ptr<http_client> control_;
};

// Requests already on their way when the first 429 of a wave comes back (the rest of that
// batch, or the other lane's batch, whose gate was passed before the cooldown was written) are
// answered within this window of it; the cooldown holds every request after it.
constexpr std::int64_t in_flight_grace_ms = 250;

// Every request of the key that came back in (T + grace, T + hold_ms) after a 429 at T.
std::vector<std::string> inside_cooldowns(const std::vector<request_entry>& log, std::int64_t hold_ms) {
    std::vector<std::string> violations;
    for (const auto& hit : log) {
        if (hit.status != 429) {
            continue;
        }
        for (const auto& r : log) {
            if (r.at_ms > hit.at_ms + in_flight_grace_ms && r.at_ms < hit.at_ms + hold_ms) {
                violations.push_back("429 at " + std::to_string(hit.at_ms) + ", then " + r.action + " (" +
                                     std::to_string(r.status) + ") at +" + std::to_string(r.at_ms - hit.at_ms) +
                                     " ms");
            }
        }
    }
    return violations;
}

// A 429 burst with Retry-After: after the first 429 at T with Retry-After R, the key gets no
// request in (T, T + R) (beyond the in-flight grace); RATE_LIMITED spends no attempt, so the
// campaign completes with no lead failed.
TEST_F(LimitsTest, A429BurstWithRetryAfterHoldsTheKeyForRetryAfter) {
    start({"--accept-probability", "0"});
    // The cooldown is the key's (the answer names no account) and came from Retry-After.
    a_key_burst_holds_the_key("burst", 20);
    EXPECT_EQ(funnel("burst")["invited"].get<int>() + needed_no_invitation(), 20);
    EXPECT_LE(needed_no_invitation(), 2);
    int sent = 0;
    for (const auto& [account, n] : invitations_sent()) {
        sent += n;
    }
    EXPECT_EQ(sent, 20 - needed_no_invitation());
    // Leads that met a 429 were retried without spending an attempt.
    EXPECT_GT(count("SELECT count(*) FROM step_attempts WHERE error LIKE '%RATE_LIMITED%'"), 0);
}

// The same burst from an API whose every 429 says "rate limit exceeded for your account" (the
// customer's account: the sandbox's dialect_rate_limit_message your_account): the word "account"
// without the request's account named is read as the key's limit, so no account goes on inside
// the key's window.
TEST_F(LimitsTest, A429ThatSaysYourAccountWithoutNamingItHoldsTheWholeKey) {
    start({"--accept-probability", "0", "--dialect-rate-limit-message", "your_account"});
    const auto log = a_key_burst_holds_the_key("yours", 12);
    EXPECT_EQ(log.find("RATE_LIMITED: account="), std::string::npos) << log;
    EXPECT_GT(count("SELECT count(*) FROM step_attempts WHERE error LIKE '%for your account%'"), 0)
        << "the sandbox did not word its 429s so";
}

// A key set five times above the API's rate, whose 429s carry no Retry-After (the real service's,
// api-facts): the worker learns the rate from them. Each cooldown's end sent at the full rate
// again, and a third of the requests met a 429 for as long as the run lasted.
TEST_F(LimitsTest, AKeySetAboveTheApisRateLearnsItFromThe429s) {
    start({"--accept-probability", "0", "--key-rate-per-s", "2", "--key-burst", "2", "--retry-after", "false"});
    env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "600");
    env_->set("ORCH_KEY_BURST", "10");
    apply("learn", 150, "1h");
    const auto since = now_ms();
    auto worker = env_->spawn({"worker"});
    // While the key's rate is cut, the leads waiting for it say why (what `campaign watch` shows).
    std::int64_t said_slowed = 0;
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(45);
         std::chrono::steady_clock::now() < until;) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        said_slowed = std::max(said_slowed,
                               count("SELECT count(*) FROM enrollments WHERE wait_code = 'key_rate' AND reason LIKE "
                                     "'waiting for the API key''s request rate, slowed after the API answered "
                                     "RATE_LIMITED without Retry-After%'"));
    }
    worker->stop(SIGTERM);
    EXPECT_GT(said_slowed, 0) << worker->log();
    const auto log = requests(since);
    // After the first 15 s (the cuts), the 429s are a few of the requests, and the API's rate is
    // mostly used.
    const auto settled = since + 15'000;
    std::int64_t requests_after = 0, limited_after = 0, first = 0, last = 0;
    for (const auto& r : log) {
        if (r.at_ms < settled) {
            continue;
        }
        first = first == 0 ? r.at_ms : first;
        last = r.at_ms;
        ++requests_after;
        limited_after += r.status == 429 ? 1 : 0;
    }
    ASSERT_GT(requests_after, 20) << worker->log();
    const double seconds = static_cast<double>(last - first) / 1000.0;
    const double answered_per_s = static_cast<double>(requests_after - limited_after) / std::max(1.0, seconds);
    EXPECT_LT(limited_after * 100, requests_after * 12)
        << limited_after << " of " << requests_after << " requests met a 429\n" << worker->log();
    EXPECT_GE(answered_per_s, 1.3) << "of the API's 2 a second\n" << worker->log();
    EXPECT_NE(worker->log().find("the key's requests go out at "), std::string::npos) << worker->log();
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status = 'failed'"), 0);
}

// A worker restarted behind a busy key: the leads the shared queue gave turns come back at them,
// and the key's places go on being used. The new worker made every lead waiting for the key's
// rate due again at its start, and each took a new turn at the queue's end, behind the turns it
// held, which then passed without their leads: a trial's key sent 63 requests in 75 s where its
// rate allowed 135.
TEST_F(LimitsTest, ARestartedWorkerKeepsTheKeysQueueGoing) {
    start({"--accept-probability", "0"});
    env_->set("ORCH_PACING", "false");
    env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "240");  // 4 a second
    env_->set("ORCH_KEY_BURST", "2");
    apply("restart", 80, "1h", 1'000'000, "", 200);
    {
        auto first = workers(1, {"--batch-size", "20"});
        ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM enrollments WHERE wait_code = 'key_rate'") >= 40; },
                               20s))
            << first[0]->log();
        ASSERT_EQ(first[0]->stop(SIGTERM), 0) << first[0]->log();
    }
    const auto since = now_ms();
    auto second = workers(1, {"--batch-size", "20"});
    std::this_thread::sleep_for(10s);
    ASSERT_EQ(second[0]->stop(SIGTERM), 0) << second[0]->log();
    // 10 s at 4 a second, less the second worker's start: some 40 requests.
    const auto sent = requests(since).size();
    EXPECT_GE(sent, 30u) << second[0]->log();
    EXPECT_LE(sent, 44u) << second[0]->log();
}

// A follow-up of a stop_on_reply campaign reads the conversation and then sends: two requests,
// and so two places in the key's rate. The sandbox allows 4 requests/s (burst 2), the workers
// pace the key at 200 a minute (3.3/s): with one place a call, the follow-ups sent some 6.7
// requests/s, the send met the API's 429 after its read, and each retry paid the read again (a
// trial: 691 reads for 118 sends). With two, no request meets a 429 (one at most on a loaded
// machine) and every follow-up is read once.
TEST_F(LimitsTest, AFollowUpTakesAPlaceInTheKeysRateForEachOfItsTwoRequests) {
    // No received invitations, as in the dialect test: an invite refused because the person invited
    // its sender first fails its lead (README, Limitations), and the counts below are of every lead
    // (which sender gets which lead varies).
    start({"--accept-probability", "1", "--accept-delay-ms-min", "100", "--accept-delay-ms-max", "400",
           "--reply-probability", "0", "--key-rate-per-s", "4", "--key-burst", "2", "--retry-after-s", "1",
           "--received-invitations-per-account", "0"});
    env_->set("ORCH_PACING", "false");
    env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "200");
    env_->set("ORCH_KEY_BURST", "2");
    constexpr int leads = 12;
    auto people = control_json("/control/people?offset=400&limit=" + std::to_string(leads));
    std::string csv = "profile_url,first_name\n";
    for (const auto& p : people["people"]) {
        csv += p["profile_url"].get<std::string>() + "," + p["first_name"].get<std::string>() + "\n";
    }
    std::ofstream(dir_ + "/follow.csv") << csv;
    std::ofstream(dir_ + "/follow.yaml")
        << "name: follow\naccounts: [sender-1, sender-2, sender-3]\naudience:\n  file: follow.csv\n"
           "schedule:\n  time_zone: UTC\n  days: [mon, tue, wed, thu, fri, sat, sun]\n  hours: \"00:00-24:00\"\n"
           "budget_credits: 100000\nstop_on_reply: true\nsteps:\n"
           "  - id: invite\n    kind: invite\n"
           "  - id: wait\n    kind: wait_accepted\n    timeout: 10m\n    next: hello\n    on_timeout: end\n"
           "  - id: hello\n    kind: send\n    message_text: \"Hello {{first_name}}\"\n"
           "  - id: pause\n    kind: delay\n    duration: 1s\n    next: again\n"
           "  - id: again\n    kind: send\n    message_text: \"Following up, {{first_name}}\"\n";
    auto applied = env_->run({"campaign", "apply", dir_ + "/follow.yaml"});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    // serve takes the acceptances' events (pushed to its webhook: no polling in the key's rate).
    const auto port = free_port();
    auto serve = env_->spawn({"serve", "--webhook-listen", "127.0.0.1:" + std::to_string(port), "--webhook-public-url",
                              "http://127.0.0.1:" + std::to_string(port) + "/webhooks"});
    ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM accounts WHERE webhook_id IS NOT NULL") == 3; },
                           20s))
        << serve->log();
    std::this_thread::sleep_for(500ms);
    const auto since = now_ms();
    auto worker = env_->spawn({"worker", "--exit-when-idle"});
    ASSERT_EQ(worker->wait(120'000), 0) << worker->log() << serve->log();
    auto log = requests(since);
    std::map<std::string, int> by_action;
    int rate_limited = 0;
    for (const auto& r : log) {
        ++by_action[r.action];
        rate_limited += r.status == 429 ? 1 : 0;
    }
    auto f = funnel("follow");
    EXPECT_EQ(f["live"], 0) << f.dump();
    EXPECT_EQ(f["failed"], 0) << f.dump() << worker->log();
    EXPECT_EQ(f["messaged"], leads) << f.dump();
    // The takes are spaced in Redis; the requests leave a moment later, so on a loaded machine (a
    // full CTest run beside other work) a starved worker can send two of them closer than their
    // spacing, and that pair may meet the API's 429: seen once, twice in a run beside another
    // worker, sandbox and database, and six at the start of a full run's two jobs. With one place
    // a follow-up, 40 did: half the leads tells the two apart without timing the machine.
    EXPECT_LE(rate_limited, leads / 2) << "requests answered 429; the workers' log:\n" << worker->log();
    std::string actions;
    for (const auto& [a, n] : by_action) {
        actions += a + " " + std::to_string(n) + "; ";
    }
    EXPECT_EQ(by_action["send"], 2 * leads) << actions;
    // Each follow-up's conversation read once, but after that one 429 if it met a follow-up's send.
    EXPECT_GE(by_action["get_conversation"], leads) << actions;
    EXPECT_LE(by_action["get_conversation"], leads + rate_limited)
        << "a follow-up's conversation was read again: " << actions;
    EXPECT_LE(count("SELECT count(*) FROM step_attempts WHERE error LIKE '%RATE_LIMITED%'"), rate_limited);
    EXPECT_EQ(serve->stop(SIGTERM), 0) << serve->log();
}

// Without Retry-After the cooldown is the orchestrator's backoff (full jitter, at least
// backoff_min = 1 s): every cooldown the worker logged is >= 1 s, and after each 429 the key
// gets no request for 1 s (beyond the in-flight grace).
TEST_F(LimitsTest, A429BurstWithoutRetryAfterBacksOffAtLeastTheMinimum) {
    start({"--accept-probability", "0"});
    apply("backoff", 20, "1s");
    auto since = now_ms();
    auto burst = control_->post("/control/rate-limit-burst", {{"key", key_}, {"duration_ms", 2500}});
    ASSERT_EQ(burst.status, 200) << burst.body;
    auto worker = env_->spawn({"worker", "--exit-when-idle"});
    ASSERT_EQ(worker->wait(90'000), 0) << worker->log();

    auto log = requests(since);
    ASSERT_GT(std::count_if(log.begin(), log.end(), [](const auto& r) { return r.status == 429; }), 0);
    for (const auto& v : inside_cooldowns(log, 1000)) {
        ADD_FAILURE() << v;
    }
    auto text = worker->log();
    // Each cooldown as first drawn (the first line of each streak value; later hits of the same
    // wave report what is left of it) is at least backoff_min, and one burst of 2.5 s does not
    // escalate the streak per call in flight (it did: 20 hits of one batch, a 9-minute backoff).
    std::regex cooldown(R"(API key cooldown (\d+) ms \(streak (\d+)\))");
    std::map<int, std::int64_t> first_per_streak;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), cooldown); it != std::sregex_iterator(); ++it) {
        first_per_streak.emplace(std::stoi((*it)[2].str()), std::stoll((*it)[1].str()));
    }
    ASSERT_FALSE(first_per_streak.empty()) << text;
    for (const auto& [streak, ms] : first_per_streak) {
        EXPECT_GE(ms, 1000) << "streak " << streak;
        EXPECT_LE(ms, 2000LL << (streak - 1)) << "streak " << streak;
    }
    EXPECT_LE(first_per_streak.rbegin()->first, 4) << text;
    EXPECT_EQ(text.find("from Retry-After"), std::string::npos);
    auto f = funnel("backoff");
    EXPECT_EQ(f["live"], 0);
    EXPECT_EQ(f["failed"], 0);
    EXPECT_LE(needed_no_invitation(), 2);
    EXPECT_EQ(f["invited"].get<int>() + needed_no_invitation(), 20) << env_->scalar(
        "SELECT string_agg(a.enrollment_id || ' ' || a.step || ' ' || a.outcome || ' ' || a.error, E'\\n' "
        "ORDER BY a.attempt_id) FROM step_attempts a") << text;
}

// 4 worker processes race on 40 leads over 3 senders with 5 invitations per account and day
// (pacing off): exactly 15 invitations go out, 5 per account; the other leads wait with a reason
// naming the quota; nothing fails. `accounts list --format json` then shows the same counts.
TEST_F(LimitsTest, PerAccountQuotasHoldWithFourWorkersRacing) {
    start({"--accept-probability", "0"});
    env_->set("ORCH_INVITE_PER_DAY", "5");
    env_->set("ORCH_PACING", "false");
    apply("quota", 40, "1s");
    auto ws = workers(4, {"--batch-size", "10"});
    // Steady state: the 15 invited leads ended (their wait timed out), the 25 others wait.
    auto steady = [&] {
        // (a lead the world already connected needs no invitation: it is done, not waiting)
        const int k = needed_no_invitation();
        return count("SELECT count(*) FROM enrollments WHERE status = 'done'") == 15 + k &&
               count("SELECT count(*) FROM enrollments WHERE reason LIKE '%invite day quota%'") == 25 - k;
    };
    bool reached = eventually(steady, 60s);
    for (auto& w : ws) {
        EXPECT_EQ(w->stop(SIGTERM), 0) << w->log();
    }
    ASSERT_TRUE(reached) << env_->scalar("SELECT string_agg(status || ': ' || reason, E'\\n') FROM enrollments");

    auto sent = invitations_sent();
    int total = 0;
    for (const auto& [account, n] : sent) {
        EXPECT_LE(n, 5) << account;
        total += n;
    }
    EXPECT_EQ(total, 15);
    EXPECT_EQ(sent.size(), 3u);
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status = 'failed'"), 0);
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE step = 'invite' AND reason LIKE '%invite day quota%'"),
              25 - needed_no_invitation());  // a lead the world already connected needs none
    // No invite was even tried beyond the quota (the sandbox has no cap of its own here).
    auto log = requests(0);
    EXPECT_EQ(std::count_if(log.begin(), log.end(), [](const auto& r) { return r.action == "invite"; }), 15);

    // accounts list shows each account's use of today's invite quota.
    auto r = env_->run({"accounts", "list", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    ASSERT_EQ(j["accounts"].size(), 3u) << r.output;
    for (const auto& a : j["accounts"]) {
        const auto& invite = action_use(a, "invite");
        EXPECT_EQ(invite["used_today"], sent[a["account_id"].get<std::string>()]) << a.dump();
        EXPECT_EQ(invite["limit_today"], 5) << a.dump();
        EXPECT_EQ(invite["left_today"], 0) << a.dump();
        EXPECT_EQ(invite["used_week"], 5) << a.dump();
    }
    auto table = env_->run({"accounts", "list"});
    ASSERT_EQ(table.exit_code, 0) << table.output;
    EXPECT_NE(table.output.find("invite"), std::string::npos) << table.output;
    EXPECT_NE(table.output.find("5/5"), std::string::npos) << table.output;
}

// One account, one quota day: two campaigns on the same 3 senders, scheduled a calendar day
// apart (UTC-11 and UTC+14, whose dates always differ), with 2 invitations per account and day.
// Exactly 2 invitations per account go out in all, through the claim's account time zone and the
// gate; every other lead waits for the account's day quota. (Counted by each campaign's own day,
// each account sent 2 in each campaign.)
TEST_F(LimitsTest, CampaignsInTwoTimeZonesShareEachAccountsDayQuota) {
    // The accounts' quota day is Pago Pago's (UTC-11): its midnight is 11:00 UTC.
    orch::test::wait_out_utc_boundary(std::chrono::seconds(120), 11);
    start({"--accept-probability", "0"});
    env_->set("ORCH_INVITE_PER_DAY", "2");
    env_->set("ORCH_PACING", "false");
    apply("west", 12, "1s", 1'000'000, "", 200, "Pacific/Pago_Pago");
    apply("east", 12, "1s", 1'000'000, "", 300, "Pacific/Kiritimati");
    EXPECT_EQ(env_->scalar("SELECT string_agg(DISTINCT time_zone, ',') FROM accounts"), "Pacific/Pago_Pago")
        << "the first campaign applied gave its senders its zone";
    auto ws = workers(1, {"--batch-size", "10"});
    // Steady state: every live lead waits for its account's day quota.
    auto steady = [&] {
        return count("SELECT count(*) FROM enrollments WHERE status IN ('ready', 'calling', 'waiting') "
                     "AND reason NOT LIKE '%invite day quota%'") == 0;
    };
    bool reached = eventually(steady, 60s);
    for (auto& w : ws) {
        EXPECT_EQ(w->stop(SIGTERM), 0) << w->log();
    }
    ASSERT_TRUE(reached) << env_->scalar("SELECT string_agg(status || ': ' || reason, E'\n') FROM enrollments");
    EXPECT_GE(count("SELECT count(*) FROM enrollments WHERE reason LIKE '%invite day quota%'"), 12)
        << "at most 6 of the 24 leads were invited (some need no invitation)";
    // The sandbox's request log: invite requests per account, whatever the sandbox made of them.
    std::map<std::string, int> invites;
    for (const auto& r : requests(0)) {
        invites[r.account_id] += r.action == "invite" ? 1 : 0;
    }
    ASSERT_EQ(invites.size(), 3u);
    for (const auto& [account, n] : invites) {
        EXPECT_EQ(n, 2) << account << ": one day quota, whichever campaign's day it is";
    }
}

// The worker's own settings change with a restart: leads the gate parked under the old ones are
// looked at again at once. With pacing on and 6 invitations a day over a 24-hour window, one
// invitation per account goes out and the rest wait hours for the pacing; a worker started with
// pacing off sends the other 5 per account at once; one started with a quota of 8 sends 2 more.
TEST_F(LimitsTest, WaitingLeadsAreLookedAtAgainUnderARestartedWorkersSettings) {
    start({"--accept-probability", "0"});
    env_->set("ORCH_INVITE_PER_DAY", "6");
    env_->set("ORCH_PACING", "true");
    apply("restart", 36, "1s");
    auto total = [&] {
        int n = 0;
        for (const auto& [account, k] : invitations_sent()) {
            n += k;
        }
        return n;
    };
    auto waiting = [&](const std::string& code) {
        return count("SELECT count(*) FROM enrollments WHERE status = 'ready' AND wait_code = '" + code + "'");
    };
    auto states = [&] {
        return env_->scalar("SELECT string_agg(status || ' ' || coalesce(wait_code, '-') || ': ' || reason, E'\\n') "
                            "FROM enrollments");
    };
    {
        auto ws = workers(1, {"--batch-size", "10"});
        const bool paced = eventually([&] { return total() == 3 && waiting("pacing") == 36 - 3 - needed_no_invitation(); }, 60s);
        EXPECT_EQ(ws[0]->stop(SIGTERM), 0) << ws[0]->log();
        ASSERT_TRUE(paced) << states() << ws[0]->log();
    }
    env_->set("ORCH_PACING", "false");
    {
        auto ws = workers(1, {"--batch-size", "10"});
        const bool freed = eventually([&] { return total() == 18 && waiting("day_quota") == 36 - 18 - needed_no_invitation(); }, 60s);
        EXPECT_EQ(ws[0]->stop(SIGTERM), 0) << ws[0]->log();
        ASSERT_TRUE(freed) << states() << ws[0]->log();
    }
    env_->set("ORCH_INVITE_PER_DAY", "8");
    {
        auto ws = workers(1, {"--batch-size", "10"});
        const bool raised = eventually([&] { return total() == 24 && waiting("day_quota") == 36 - 24 - needed_no_invitation(); }, 60s);
        EXPECT_EQ(ws[0]->stop(SIGTERM), 0) << ws[0]->log();
        ASSERT_TRUE(raised) << states() << ws[0]->log();
    }
    for (const auto& [account, n] : invitations_sent()) {
        EXPECT_EQ(n, 8) << account;
    }
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status = 'failed'"), 0);
}

// Per-account overrides (accounts limits): sender-1 may send 3 invitations a day, the others
// keep the default of 6. Two workers on 36 leads (12 per sender): the sandbox's record shows
// exactly 3 invitations from sender-1 and 6 from each other sender; `accounts list` shows
// sender-1's own quota. Raising sender-1's override to 5 while the workers run takes effect at
// once (its waiting leads are woken, the next claim reads the new quota): exactly 2 more from
// sender-1, none from the others.
TEST_F(LimitsTest, AnAccountsOwnQuotaHoldsAndAChangeTakesEffectWithoutARestart) {
    start({"--accept-probability", "0"});
    env_->set("ORCH_INVITE_PER_DAY", "6");
    env_->set("ORCH_PACING", "false");
    auto id = [&](const std::string& label) {
        return env_->scalar("SELECT account_id FROM accounts WHERE label = '" + label + "'");
    };
    const std::string a = id("sender-1"), b = id("sender-2"), c = id("sender-3");
    auto set = env_->run({"accounts", "limits", "sender-1", "--invite-per-day", "3"});
    ASSERT_EQ(set.exit_code, 0) << set.output;
    apply("own", 36, "1s");
    for (const auto& acct : {a, b, c}) {
        ASSERT_GE(count("SELECT count(*) FROM enrollments WHERE account_id = '" + acct + "'"), 9) << acct;
    }
    auto ws = workers(2, {"--batch-size", "10"});
    auto steady = [&](int invited) {
        return [&, invited] {
            const int k = needed_no_invitation();
            return count("SELECT count(*) FROM enrollments WHERE status = 'done'") == invited + k &&
                   count("SELECT count(*) FROM enrollments WHERE reason LIKE '%invite day quota%'") == 36 - invited - k;
        };
    };
    auto states = [&] {
        return env_->scalar("SELECT string_agg(account_id || ' ' || status || ': ' || reason, E'\\n') FROM enrollments");
    };
    bool reached = eventually(steady(15), 60s);
    if (!reached) {
        for (auto& w : ws) {
            w->stop(SIGTERM);
        }
        FAIL() << states();
    }
    auto sent = invitations_sent();
    EXPECT_EQ(sent[a], 3);
    EXPECT_EQ(sent[b], 6);
    EXPECT_EQ(sent[c], 6);
    auto log = requests(0);
    EXPECT_EQ(std::count_if(log.begin(), log.end(),
                            [&](const auto& r) { return r.action == "invite" && r.account_id == a; }),
              3);
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE account_id = '" + a +
                    "' AND reason LIKE '%invite day quota of account " + a + "%'"),
              count("SELECT count(*) FROM enrollments WHERE account_id = '" + a + "'") - 3 -
                  count("SELECT count(*) FROM enrollments e WHERE account_id = '" + a +
                        "' AND status = 'done' AND NOT EXISTS (SELECT 1 FROM step_attempts s "
                        "WHERE s.enrollment_id = e.enrollment_id AND s.call = 'invite')"));
    // The leads waiting for the quota carry the code the raise below wakes them by (migration 0018).
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE wait_code = 'day_quota'"),
              count("SELECT count(*) FROM enrollments WHERE reason LIKE '%invite day quota%'"));
    EXPECT_GT(count("SELECT count(*) FROM enrollments WHERE wait_code = 'day_quota'"), 0);

    auto r = env_->run({"accounts", "list", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    for (const auto& acct : j["accounts"]) {
        const auto& invite = action_use(acct, "invite");
        const bool own = acct["account_id"] == a;
        EXPECT_EQ(invite["limit_today"], own ? 3 : 6) << acct.dump();
        EXPECT_EQ(invite["left_today"], 0) << acct.dump();
        EXPECT_EQ(acct["effective_quotas"]["invite"]["per_day_source"], own ? "override" : "default") << acct.dump();
    }

    // Raised while the workers run: the waiting leads of sender-1 are due again and the next
    // claim reads the new quota.
    auto raise = env_->run({"accounts", "limits", a, "--invite-per-day", "5"});
    ASSERT_EQ(raise.exit_code, 0) << raise.output;
    reached = eventually(steady(17), 60s);
    for (auto& w : ws) {
        EXPECT_EQ(w->stop(SIGTERM), 0) << w->log();
    }
    ASSERT_TRUE(reached) << states();
    sent = invitations_sent();
    EXPECT_EQ(sent[a], 5);
    EXPECT_EQ(sent[b], 6);
    EXPECT_EQ(sent[c], 6);
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status = 'failed'"), 0);
}

// A budget of 25 credits, 40 leads, 4 workers racing: the sandbox never charges the key more
// than the budget, the campaign is paused for its budget, and the ledger's posted total equals
// what the sandbox charged. The audience is a CSV file: no search is charged outside the ledger,
// and `accounts connect` costs nothing (checked below), so the key's whole charge is the campaign's.
TEST_F(LimitsTest, ABudgetHoldsWithFourWorkersRacing) {
    start({"--accept-probability", "0"});
    auto before = control_json("/control/credits");
    apply("budget", 40, "1s", 25);
    auto ws = workers(4, {"--exit-when-idle", "--batch-size", "10"});
    std::string logs;
    for (auto& w : ws) {
        EXPECT_EQ(w->wait(90'000), 0) << w->log();
        logs += w->log();
    }
    std::int64_t charged = -1;
    json by_action;
    auto credits = control_json("/control/credits");
    for (const auto& k : credits["keys"]) {
        if (k["key"] == key_) {
            charged = k["charged_total"].get<std::int64_t>();
            by_action = k["charged_by_action"];
        }
    }
    for (const auto& k : before["keys"]) {
        if (k["key"] == key_) {
            EXPECT_EQ(k["charged_total"], 0) << "accounts connect was charged: " << k.dump();
        }
    }
    EXPECT_LE(charged, 25) << by_action.dump();
    EXPECT_GT(charged, 15) << by_action.dump();  // the budget was used, not refused early
    EXPECT_EQ(env_->scalar("SELECT state FROM campaigns WHERE name = 'budget'"), "paused");
    EXPECT_NE(env_->scalar("SELECT pause_reason FROM campaigns WHERE name = 'budget'").find("budget"),
              std::string::npos);
    auto r = env_->run({"budget", "show", "budget", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto b = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(b.is_discarded()) << r.output;
    EXPECT_EQ(b["spent"], charged) << r.output;
    EXPECT_EQ(b["reserved"], 0) << r.output << logs;
    EXPECT_EQ(b["overrun"], 0) << r.output;
    // The request log agrees with the counters: the sum of the credits of every request.
    std::int64_t logged = 0;
    for (const auto& e : requests(0)) {
        logged += e.credits;
    }
    EXPECT_EQ(logged, charged);
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status = 'failed'"), 0);

    // Raising the budget (the same file applied with a larger budget_credits) resumes the
    // campaign and wakes its parked leads: one worker finishes them, and the ledger still agrees
    // with the sandbox to the credit.
    auto file = dir_ + "/budget.yaml";
    std::ofstream(file) << campaign_yaml("budget", "budget.csv", "1s", 1'000'000);
    auto raised = env_->run({"campaign", "apply", file});
    ASSERT_EQ(raised.exit_code, 0) << raised.output;
    EXPECT_EQ(env_->scalar("SELECT state FROM campaigns WHERE name = 'budget'"), "active");
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE due_at = 'infinity'"), 0);
    auto again = env_->spawn({"worker", "--exit-when-idle"});
    ASSERT_EQ(again->wait(90'000), 0) << again->log();
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status IN ('ready', 'calling', 'waiting')"), 0);
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status = 'failed'"), 0);
    std::int64_t charged_after = -1;
    auto credits_after = control_json("/control/credits");
    for (const auto& k : credits_after["keys"]) {
        if (k["key"] == key_) {
            charged_after = k["charged_total"].get<std::int64_t>();
        }
    }
    EXPECT_GT(charged_after, charged);
    auto after = json::parse(env_->run({"budget", "show", "budget", "--format", "json"}).output, nullptr, false);
    EXPECT_EQ(after["spent"], charged_after) << after.dump();
    EXPECT_EQ(after["reserved"], 0) << after.dump();
}

// A daily cap of 10 credits in a 1,000-credit budget, 20 leads (check 1 + invite 1 each), 2
// workers racing: exactly 10 credits are spent today (the sandbox's charge), the campaign stays
// active (a day cap is not exhaustion), and the other leads wait with the reason naming the daily
// budget. `budget show` shows today's use; `budget set --per-day 16` wakes them at once and 6 more
// credits go out; `--per-day none` lets the run finish. (A run that crosses UTC midnight would see
// a fresh day cap: not a concern for a run of seconds.)
TEST_F(LimitsTest, ADailyCapSpendsExactlyUpToItAndTheLeadsWaitForTheNextDay) {
    start({"--accept-probability", "0"});
    env_->set("ORCH_PACING", "false");
    apply("daily", 20, "1s", 1'000, "budget_per_day_credits: 10\n");
    auto waiting = [&] {
        return count("SELECT count(*) FROM enrollments WHERE reason LIKE 'waiting for the campaign''s daily budget%'");
    };
    auto settled_at = [&](std::int64_t credits) {
        return [&, credits] {
            return charged() == credits && waiting() > 0 &&
                   count("SELECT count(*) FROM enrollments WHERE status = 'calling'") == 0 &&
                   count("SELECT count(*) FROM ledger_transfers WHERE state = 'pending'") == 0;
        };
    };
    auto ws = workers(2, {"--batch-size", "5"});
    bool reached = eventually(settled_at(10), 60s);
    std::this_thread::sleep_for(1s);  // nothing more goes out while the cap holds
    bool still = charged() == 10;
    auto all_reasons = [&] { return env_->scalar("SELECT string_agg(status || ': ' || reason, E'\\n') FROM enrollments"); };
    ASSERT_TRUE(reached) << "charged " << charged() << "\n" << all_reasons();
    EXPECT_TRUE(still) << charged();
    // Each of them carries the code the wake-up below matches (migration 0018).
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE wait_code = 'day_budget'"), waiting());
    EXPECT_EQ(env_->scalar("SELECT state FROM campaigns WHERE name = 'daily'"), "active");
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status = 'failed'"), 0);
    // The lead's timeline in the admin API reads this reason; the next run is the next UTC midnight.
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE reason LIKE 'waiting for the campaign''s daily budget%' "
                    "AND next_run_at <> date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 day'"),
              0);
    auto b = budget_show("daily");
    EXPECT_EQ(b["per_day"], 10) << b.dump();
    EXPECT_EQ(b["spent"], 10) << b.dump();
    EXPECT_EQ(b["today"]["spent"], 10) << b.dump();
    EXPECT_EQ(b["today"]["available"], 0) << b.dump();
    EXPECT_EQ(b["available"], 990) << b.dump();

    // A raised day cap wakes the waiting leads now (not tomorrow): 6 more credits, then they wait again.
    auto raised = env_->run({"budget", "set", "daily", "--per-day", "16"});
    ASSERT_EQ(raised.exit_code, 0) << raised.output;
    EXPECT_NE(raised.output.find("per day 16"), std::string::npos) << raised.output;
    EXPECT_NE(raised.output.find("due again"), std::string::npos) << raised.output;
    reached = eventually(settled_at(16), 60s);
    ASSERT_TRUE(reached) << "charged " << charged() << "\n" << all_reasons();
    EXPECT_EQ(budget_show("daily")["today"]["spent"], 16);

    // No day cap: the run finishes (each lead: check, invite, a 1 s wait that times out).
    auto removed = env_->run({"budget", "set", "daily", "--per-day", "none"});
    ASSERT_EQ(removed.exit_code, 0) << removed.output;
    reached = eventually([&] { return count("SELECT count(*) FROM enrollments WHERE status IN ('ready', 'calling', 'waiting')") == 0; }, 60s);
    for (auto& w : ws) {
        EXPECT_EQ(w->stop(SIGTERM), 0) << w->log();
    }
    ASSERT_TRUE(reached) << all_reasons();
    auto after = budget_show("daily");
    EXPECT_TRUE(after["per_day"].is_null()) << after.dump();
    EXPECT_TRUE(after["today"].is_null()) << after.dump();
    EXPECT_EQ(after["spent"], charged()) << after.dump();
    EXPECT_EQ(after["reserved"], 0) << after.dump();
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status = 'failed'"), 0);
}

// The API's own day cap, tighter than the orchestrator's quota: its 429 asks for the wait until the
// next UTC midnight (a Retry-After of hours), which holds that account's invites until then. The
// client believed a Retry-After of an hour at most and read a longer one as none: the invites went
// on inside the window a backoff apart (a trial counted 13 to 19 such requests at the sandbox).
TEST_F(LimitsTest, AnApiDayCapsRetryAfterOfHoursHoldsTheAccountsInvitesUntilMidnight) {
    using namespace std::chrono;
    // The window ends at midnight UTC: a run across it would see the cap's day turn.
    const auto to_midnight = ceil<days>(system_clock::now()) - system_clock::now();
    if (to_midnight < 3min) {
        std::this_thread::sleep_for(to_midnight + 2s);
    }
    start({"--accept-probability", "0", "--account-daily-cap", "invite=2", "--dialect-rate-limit-message",
           "names_account"});
    env_->set("ORCH_PACING", "false");
    apply("daycap", 9, "1h");  // 3 leads a sender: the third invite of each meets the API's cap
    auto ws = workers(1, {});
    auto total_invited = [&] {
        int sent = 0;
        for (const auto& [account, n] : invitations_sent()) {
            sent += n;
        }
        return sent;
    };
    const auto held = [&] {
        // Each capped account's third lead: retried when the window ends, not before.
        return count("SELECT count(*) FROM enrollments WHERE reason LIKE '%RATE_LIMITED%' AND next_run_at >= "
                     "date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 day' - "
                     "interval '5 seconds'");
    };
    const bool reached = eventually([&] { return total_invited() == 6 && held() == 3; }, 60s);
    ASSERT_TRUE(reached) << "invited " << total_invited() << ", held " << held() << "\n"
                         << env_->scalar("SELECT string_agg(account_id || ' ' || status || ' ' || "
                                         "COALESCE(wait_code, '-') || ' ' || next_run_at::text || ': ' || reason, "
                                         "E'\\n') FROM enrollments")
                         << "\n" << ws[0]->log();
    // Longer than the backoff a 429 without Retry-After gets (1 to 3 s at first): nothing more
    // goes to the capped accounts.
    std::this_thread::sleep_for(5s);
    EXPECT_EQ(total_invited(), 6);
    const auto stats = control_json("/control/stats");
    EXPECT_EQ(stats["retry_after_violations"]["total"], 0) << stats.dump();
    EXPECT_EQ(held(), 3);
    const auto log = ws[0]->log();
    EXPECT_EQ(log.find("without Retry-After"), std::string::npos) << log;
    EXPECT_EQ(ws[0]->stop(SIGTERM), 0) << ws[0]->log();
}

// The limits are kept per API key: `accounts list` run with another key than the workers' read
// every quota unused, and said nothing (a trial). It now warns that Redis keeps the accounts'
// counts under another key; with the workers' key it shows them, and does not warn.
TEST_F(LimitsTest, AccountsListUnderAnotherKeySaysTheCountsAreAnotherKeys) {
    start({"--accept-probability", "0"});
    env_->set("ORCH_PACING", "false");
    apply("keyed", 2, "1h");
    {
        auto ws = workers(1, {});
        ASSERT_TRUE(eventually(
            [&] { return count("SELECT count(*) FROM step_attempts WHERE call = 'invite' AND outcome = 'ok'") == 2; },
            60s))
            << ws[0]->log();
        EXPECT_EQ(ws[0]->stop(SIGTERM), 0) << ws[0]->log();
    }
    auto listed = [&] {
        auto r = env_->run({"accounts", "list", "--format", "json"});
        EXPECT_EQ(r.exit_code, 0) << r.output;
        const auto brace = r.output.find('{');
        return json::parse(r.output.substr(brace == std::string::npos ? 0 : brace), nullptr, false);
    };
    const json own = listed();
    ASSERT_FALSE(own.is_discarded());
    EXPECT_TRUE(own["limits_warning"].is_null()) << own.dump();
    std::int64_t invites = 0;
    for (const auto& a : own["accounts"]) {
        if (a["limits"].is_object()) {
            invites += action_use(a, "invite")["used_today"].get<std::int64_t>();
        }
    }
    EXPECT_EQ(invites, 2) << own.dump();

    env_->set("OUTREACH_API_KEY", "another-key-" + key_);
    const json other = listed();
    ASSERT_FALSE(other.is_discarded());
    ASSERT_TRUE(other["limits_warning"].is_string()) << other.dump();
    EXPECT_NE(other["limits_warning"].get<std::string>().find(
                  "under another API key than this command's (OUTREACH_API_KEY): the quotas shown are this key's"),
              std::string::npos)
        << other.dump();
    auto text = env_->run({"accounts", "list"});
    EXPECT_EQ(text.exit_code, 0) << text.output;
    EXPECT_NE(text.output.find("warning: Redis keeps quota counts of acc_"), std::string::npos) << text.output;
    env_->set("OUTREACH_API_KEY", key_);
}

// A call whose worker died before writing its outcome (an invite, its lease over) is found by the
// next worker while the campaign's daily cap is used up: its check waits for the cap as a call to
// check (`call` to_check, the cap's code), and removing the cap wakes it at once: the check finds
// no invitation and the invite goes out once. Before, the lead read "calling the API", kept its
// wait until midnight UTC whatever the cap became, and only a pause and resume freed it (a trial's
// three follow-ups).
TEST_F(LimitsTest, ALostCallsCheckWaitingForTheDailyCapIsWokenWhenTheCapIsRemoved) {
    // No connection or received invitation to find: the lost invite's check must find none (a
    // searched person who was a connection of the sender went on to the message, once in a run).
    start({"--accept-probability", "0", "--connections-per-account", "0", "--received-invitations-per-account", "0"});
    env_->set("ORCH_PACING", "false");
    apply("lost", 2, "1s", 1'000, "budget_per_day_credits: 1\n");
    // One lead's check uses the cap up; the other's waits for it.
    auto capped = [&] {
        return charged() == 1 && count("SELECT count(*) FROM enrollments WHERE wait_code = 'day_budget'") == 2 &&
               count("SELECT count(*) FROM enrollments WHERE status = 'calling'") == 0;
    };
    {
        auto ws = workers(1, {});
        ASSERT_TRUE(eventually(capped, 60s))
            << env_->scalar("SELECT string_agg(status || ' ' || step || ': ' || reason, E'\\n') FROM enrollments");
        EXPECT_EQ(ws[0]->stop(SIGTERM), 0) << ws[0]->log();
    }
    // One of them as a worker leaves it when killed mid-invite: calling, the intent in flight,
    // the lease over (long enough ago for the reconcile delay).
    const auto enrollment = env_->scalar("SELECT min(enrollment_id) FROM enrollments");
    const auto person = env_->scalar("SELECT l.profile_url FROM enrollments e JOIN leads l USING (lead_id) "
                                     "WHERE e.enrollment_id = " + enrollment);
    env_->scalar("WITH u AS (UPDATE enrollments SET step = 'invite', status = 'calling', reconcile = false, "
                 "lease_owner = 'w-gone', lease_expires_at = now() - interval '5 minutes', "
                 "next_run_at = now() - interval '6 minutes', due_at = now() WHERE enrollment_id = " + enrollment +
                 ") INSERT INTO step_attempts (enrollment_id, step, call, attempt, worker) VALUES (" + enrollment +
                 ", 'invite', 'invite', 1, 'w-gone') RETURNING attempt_id");
    auto ws = workers(1, {});
    auto to_check = [&] {
        return count("SELECT count(*) FROM enrollments WHERE enrollment_id = " + enrollment +
                     " AND status = 'calling' AND reconcile AND lease_owner IS NULL AND wait_code = 'day_budget' "
                     "AND next_run_at > now() + interval '1 minute'") == 1;
    };
    ASSERT_TRUE(eventually(to_check, 30s))
        << env_->scalar("SELECT string_agg(status || ' ' || step || ' ' || reconcile || ': ' || reason, E'\\n') "
                        "FROM enrollments")
        << ws[0]->log();
    auto listed = env_->run({"leads", "list", "lost", "--format", "json"});
    ASSERT_EQ(listed.exit_code, 0) << listed.output;
    bool shown = false;
    const auto leads = json::parse(listed.output);  // named: the loop must not outlive it
    for (const auto& l : leads["leads"]) {
        if (std::to_string(l["enrollment_id"].get<std::int64_t>()) == enrollment) {
            shown = true;
            EXPECT_EQ(l["call"], "to_check") << l.dump();
            EXPECT_NE(l["waiting"].get<std::string>().find("waiting to check whether an uncertain call took effect "
                                                           "(step invite: waiting for the campaign's daily budget"),
                      std::string::npos)
                << l.dump();
        }
    }
    EXPECT_TRUE(shown) << listed.output;
    // An operator's change is refused as one waiting for its check, not as a call in flight.
    const auto lead = env_->scalar("SELECT lead_id FROM enrollments WHERE enrollment_id = " + enrollment);
    auto stop = env_->run({"leads", "stop", "lost", lead});
    EXPECT_EQ(stop.exit_code, 2) << stop.output;
    EXPECT_NE(stop.output.find("it waits to check whether a call whose outcome was lost took effect"),
              std::string::npos)
        << stop.output;

    auto removed = env_->run({"budget", "set", "lost", "--per-day", "none"});
    ASSERT_EQ(removed.exit_code, 0) << removed.output;
    EXPECT_NE(removed.output.find("2 leads waiting for a daily or per-account cap are due again"), std::string::npos)
        << removed.output;
    auto checked = [&] {
        return count("SELECT count(*) FROM step_attempts WHERE reconcile AND enrollment_id = " + enrollment) == 1 &&
               count("SELECT count(*) FROM enrollments WHERE status IN ('ready', 'calling', 'waiting')") == 0;
    };
    const bool done = eventually(checked, 60s);
    EXPECT_EQ(ws[0]->stop(SIGTERM), 0) << ws[0]->log();
    ASSERT_TRUE(done) << env_->scalar("SELECT string_agg(status || ' ' || step || ': ' || reason, E'\\n') FROM enrollments");
    // The check found no invitation (the lost invite never left); the invite then went out once.
    int sent = 0;
    auto record = control_json("/control/side-effects");
    for (const auto& inv : record["invitations"]) {
        if (inv["profile_url"] == person) {
            sent += inv["sent"].get<int>();
        }
    }
    EXPECT_EQ(sent, 1) << record.dump();
}

// A campaign whose daily cap is used up, on an API key of 1 request/s that another campaign keeps
// busy: all its leads wait for the cap within seconds, also those the key's rate had held back
// before the cap ran out. Before, a lead met the ledger's refusal only once it had won a place in
// the key's rate, one lead a second, saying "waiting for the API key's request rate" meanwhile
// (engine/cycle_plan.cpp: wait_for_standing_caps, wait_with_refused_calls;
// engine/wake_held_of_capped.sql).
TEST_F(LimitsTest, LeadsOfACampaignAtItsDailyCapWaitForItAtOnceBehindABusyKey) {
    // A cap of 2: a check (1 credit) leaves 1, which refuses an invite (it reserves 2) but not the
    // next check; the held leads are woken again once that check has used the cap up.
    held_leads_meet_their_cap("budget_per_day_credits: 2\n", "day_budget");
    EXPECT_EQ(budget_show("capped")["today"]["spent"], 2);
    // Each waits until the next UTC midnight, like a lead the ledger refused itself.
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE wait_code = 'day_budget' "
                    "AND next_run_at <> date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 day'"),
              0);
}

// The same with a cap on each sender: the leads of each sender wait for its cap within seconds.
TEST_F(LimitsTest, LeadsOfACampaignAtItsSendersCapsWaitForThemAtOnceBehindABusyKey) {
    held_leads_meet_their_cap("budget_per_account_credits: 2\n", "account_budget");
    for (const auto& a : budget_show("capped")["accounts"]) {
        EXPECT_EQ(a["spent"], 2) << a.dump();
    }
}

// Behind a busy key, a lead the key's rate holds back comes back at its turn, about once per
// call: not at the instant the next place frees, together with every lead held back before it.
// 60 leads due at once on a key of 3 requests/s (a burst of 2), each lead's check then its invite:
// a call costs a claim and a settle, and a lead is decided once more each time it is held back.
// The per-batch spread this replaced: 586 transitions for 46 calls; the key's queue: 196.
// The same with two worker processes, whose leads take their turns from one queue in Redis, and
// with wake-ups (`serve` sends one on each event, an apply on each change) making every idle lane
// of both claim at once. (These runs make 196 transitions for 46 calls with or without Redis
// keeping a queued lead's place from the other process's first arrivals;
// LimitsGateRedis.AQueuedLeadsPlaceIsKeptFromFirstArrivalsOfEveryWorker tells that apart.) The
// next-run times each (lead, step) was given while it waited for the key are printed.
struct busy_key_run {
    int processes = 1;
    bool woken = false;
};
class BusyKey : public LimitsTest, public ::testing::WithParamInterface<busy_key_run> {};

TEST_P(BusyKey, LeadsBehindABusyKeyAreDecidedAboutOncePerCall) {
    start({"--accept-probability", "0"});
    env_->set("ORCH_PACING", "false");
    env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "180");
    env_->set("ORCH_KEY_BURST", "2");
    apply("queued", 60, "1h", 100'000, "", 200);
    auto ws = workers(GetParam().processes, {"--batch-size", "20"});
    // Every next-run time a (lead, step) was given while it waited for the key, polled every 50 ms.
    std::map<std::pair<std::string, std::string>, std::set<std::string>> next_runs;
    std::atomic<bool> done{false};
    std::thread watch([&] {
        pqxx::connection c(env_->database_url());
        int tick = 0;
        while (!done) {
            pqxx::nontransaction tx(c);
            if (GetParam().woken && ++tick % 6 == 0) {
                tx.exec("SELECT pg_notify('orch_wake', '')");
            }
            for (const auto& r : tx.exec("SELECT enrollment_id::text, step, next_run_at::text FROM enrollments "
                                         "WHERE wait_code = 'key_rate'")) {
                next_runs[{r[0].as<std::string>(), r[1].as<std::string>()}].insert(r[2].as<std::string>());
            }
            std::this_thread::sleep_for(50ms);
        }
    });
    std::this_thread::sleep_for(15s);
    done = true;
    watch.join();
    std::size_t most = 0, five_or_more = 0;
    for (const auto& [pair, times] : next_runs) {
        most = std::max(most, times.size());
        five_or_more += times.size() >= 5 ? 1 : 0;
    }
    std::int64_t transitions = 0, calls = 0;
    std::string log;
    for (auto& w : ws) {
        ASSERT_EQ(w->stop(SIGTERM), 0) << w->log();
        log += w->log();
        std::smatch m;
        const std::string one = w->log();
        ASSERT_TRUE(std::regex_search(one, m, std::regex(R"(stopped after (\d+) transitions, (\d+) calls)"))) << one;
        transitions += std::stoll(m[1]);
        calls += std::stoll(m[2]);
    }
    std::cout << GetParam().processes << " worker(s)" << (GetParam().woken ? ", woken" : "") << ": " << transitions
              << " transitions, " << calls << " calls; " << next_runs.size() << " (lead, step) pairs waited for the key, "
              << five_or_more << " given 5 next-run times or more, at most " << most << "\n";
    EXPECT_EQ(calls, count("SELECT count(*) FROM step_attempts"));
    // About 46 calls in 15 s (47 places: the burst, then 3 a second): the queue leaves none unused.
    EXPECT_GE(calls, 38) << log;
    // Every lead is claimed at least once (60), every call comes due and is settled (2 each), and
    // a lead is held back again about once per call, when the call before it was late.
    EXPECT_LE(transitions, 60 + 4 * calls) << calls << " calls";
    // The key's rate held: no 6 of the leads' requests within a second (its burst of 2, and 3 more
    // places in a second).
    auto log_of_key = requests(0);
    std::erase_if(log_of_key, [](const auto& r) { return r.action != "check_invitation" && r.action != "invite"; });
    for (std::size_t i = 0; i + 5 < log_of_key.size(); ++i) {
        EXPECT_GE(log_of_key[i + 5].at_ms - log_of_key[i].at_ms, 1000) << "6 requests within a second at " << i;
    }
}
INSTANTIATE_TEST_SUITE_P(Workers, BusyKey,
                         ::testing::Values(busy_key_run{1, false}, busy_key_run{2, false}, busy_key_run{2, true}),
                         [](const ::testing::TestParamInfo<busy_key_run>& p) {
                             return std::to_string(p.param.processes) + "_processes" + (p.param.woken ? "_woken" : "");
                         });

// A per-account cap of 4 credits, 3 senders, 30 leads: each sender's calls cost exactly 4
// credits (the sandbox's request log per account), the leads of each sender then wait with the
// reason naming its account, and `budget show` lists each sender's use of the cap.
TEST_F(LimitsTest, APerAccountCapHoldsForEachSender) {
    start({"--accept-probability", "0"});
    env_->set("ORCH_PACING", "false");
    apply("per-account", 30, "1s", 1'000, "budget_per_account_credits: 4\n");
    auto ws = workers(2, {"--batch-size", "5"});
    auto steady = [&] {
        return charged() == 12 &&
               count("SELECT count(*) FROM enrollments WHERE reason LIKE 'the campaign''s budget for account % is spent'") > 0 &&
               count("SELECT count(*) FROM enrollments WHERE status = 'calling'") == 0 &&
               count("SELECT count(*) FROM ledger_transfers WHERE state = 'pending'") == 0;
    };
    bool reached = eventually(steady, 60s);
    std::this_thread::sleep_for(1s);
    std::int64_t total = charged();
    for (auto& w : ws) {
        EXPECT_EQ(w->stop(SIGTERM), 0) << w->log();
    }
    ASSERT_TRUE(reached) << "charged " << charged() << "\n"
                         << env_->scalar("SELECT string_agg(status || ': ' || reason, E'\\n') FROM enrollments");
    EXPECT_EQ(total, 12);
    std::map<std::string, std::int64_t> per_account;
    for (const auto& r : requests(0)) {
        per_account[r.account_id] += r.credits;
    }
    std::int64_t senders = 0;
    for (const auto& [account, credits] : per_account) {
        if (credits > 0) {
            EXPECT_EQ(credits, 4) << account;
            ++senders;
        }
    }
    EXPECT_EQ(senders, 3);
    auto b = budget_show("per-account");
    ASSERT_EQ(b["accounts"].size(), 3u) << b.dump();
    for (const auto& a : b["accounts"]) {
        EXPECT_EQ(a["per_account"], 4) << a.dump();
        EXPECT_EQ(a["spent"], 4) << a.dump();
        EXPECT_EQ(a["available"], 0) << a.dump();
        EXPECT_EQ(per_account[a["account"].get<std::string>()], 4) << a.dump();
    }
    // The wait says the cap is the campaign's whole life's, not a day's.
    auto listed = env_->run({"leads", "list", "per-account", "--format", "json"});
    ASSERT_EQ(listed.exit_code, 0) << listed.output;
    EXPECT_NE(listed.output.find("is spent (the cap covers the campaign's whole life; raising it wakes the lead; "
                                 "looked at again "),
              std::string::npos)
        << listed.output;
    EXPECT_EQ(env_->scalar("SELECT state FROM campaigns WHERE name = 'per-account'"), "active");
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status = 'failed'"), 0);
}

// The campaign of campaign_yaml with a search audience (`total_results` people titled Engineer)
// instead of a file.
std::string search_campaign_yaml(const std::string& name, int total_results, std::int64_t budget_credits) {
    auto yaml = campaign_yaml(name, "unused.csv", "1s", budget_credits);
    const std::string file_line = "  file: unused.csv\n";
    yaml.replace(yaml.find(file_line), file_line.size(),
                 "  search:\n    title: Engineer\n  total_results: " + std::to_string(total_results) + "\n");
    return yaml;
}

// An audience search is held to the campaign's day cap: it asks for no more people than the cap
// pays for, and so uses the cap up. The apply says so (nothing would otherwise tell why no lead
// calls before the next UTC day), and `budget show`'s today counts the search.
TEST_F(LimitsTest, AnAudienceSearchThatUsesUpTheDayCapIsSaidAtApply) {
    start({"--accept-probability", "0"});
    auto file = dir_ + "/capsearch.yaml";
    std::ofstream(file) << search_campaign_yaml("capsearch", 25, 1'000) + "budget_per_day_credits: 2\n";
    auto r = env_->run({"campaign", "apply", file});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::int64_t search = charged();
    // 25 people cost 3 credits at the sandbox's 1 per 10 found: 20 are what the cap pays for.
    ASSERT_EQ(search, 2) << r.output;
    EXPECT_NE(r.output.find("20 leads, 20 enrolled"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("audience search held short: the search asked for no more people than today's day "
                            "cap of 2 credits (budget_per_day_credits) pays for (2 credits left before it)"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("warning: the audience search cost 2 credits, which uses up today's day cap of 2 "
                            "(budget_per_day_credits, UTC day)"),
              std::string::npos)
        << r.output;
    auto b = budget_show("capsearch");
    EXPECT_EQ(b["today"]["spent"], search) << b.dump();
    EXPECT_EQ(b["today"]["available"], 0) << b.dump();
    auto shown = env_->run({"campaign", "show", "capsearch", "--format", "json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.output;
    auto today = json::parse(shown.output, nullptr, false)["summary"]["budget"]["today"];
    EXPECT_EQ(today["spent"], search) << shown.output;
    EXPECT_EQ(today["available"], 0) << shown.output;
    shown = env_->run({"campaign", "show", "capsearch"});
    EXPECT_NE(shown.output.find(" 2 used, 0 left"), std::string::npos) << shown.output;
    EXPECT_EQ(shown.output.find("over the cap"), std::string::npos) << shown.output;

    // With room left after the search, nothing is said.
    auto roomy = dir_ + "/roomy.yaml";
    std::ofstream(roomy) << search_campaign_yaml("roomy", 25, 1'000) +
                                "budget_per_day_credits: 500\nbudget_per_account_credits: 500\n";
    r = env_->run({"campaign", "apply", roomy});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("day cap"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("per sender"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("uses up the campaign's budget"), std::string::npos) << r.output;

    // The per-account cap of the sender the search goes through holds it too, and its use is said.
    auto sender = dir_ + "/sendercap.yaml";
    std::ofstream(sender) << search_campaign_yaml("sendercap", 25, 1'000) + "budget_per_account_credits: 2\n";
    const std::int64_t before = charged();
    r = env_->run({"campaign", "apply", sender});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(charged() - before, 2) << r.output;
    EXPECT_NE(r.output.find("audience search held short: the search asked for no more people than the cap of 2 "
                            "credits per sender (budget_per_account_credits) pays for"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("warning: the audience search cost 2 credits, which uses up the cap of 2 credits per "
                            "sender on account 'sender-1' (acc_"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("), the first account, which the search goes through (budget_per_account_credits): the "
                            "leads this sender serves make no billed call unless the cap is raised (`budget set "
                            "sendercap --per-account N`)"),
              std::string::npos)
        << r.output;

    // A budget the search uses up exactly leaves the campaign active with nothing to spend: said.
    // (30 people, 3 credits at the sandbox's 1 per 10 found: 5 not yet another campaign's, so
    // that it has leads.)
    auto exact = dir_ + "/exact.yaml";
    std::ofstream(exact) << search_campaign_yaml("exact", 30, 3);
    const std::int64_t before_exact = charged();
    r = env_->run({"campaign", "apply", exact});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(charged() - before_exact, 3) << r.output;
    EXPECT_EQ(r.output.find("held short"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("stopped early"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("warning: the audience search cost 3 credits, which uses up the campaign's budget of 3 "
                            "credits (budget_credits): no lead makes a billed call unless the budget is raised "
                            "(`budget set exact --credits N`)"),
              std::string::npos)
        << r.output;
}

// An apply sends no audience search when the day's cap, or the budget, has nothing left: the
// search would bill past it. It refuses before anything is stored, and a cap raised lets the
// search go. The caps it holds the search to are those in force after the apply: the file's when
// it changes the budget its last version gave, else the live ones (`budget set`), which it keeps.
TEST_F(LimitsTest, AnApplySendsNoSearchPastAUsedUpDayCapOrBudget) {
    start({"--accept-probability", "0"});
    auto file = dir_ + "/spent.yaml";
    const auto write = [&](int people, std::int64_t budget, const std::string& caps) {
        std::ofstream(file) << search_campaign_yaml("spent", people, budget) + caps;
    };
    write(25, 1'000, "budget_per_day_credits: 2\n");
    auto r = env_->run({"campaign", "apply", file});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::int64_t first = charged();
    ASSERT_GE(first, 2) << r.output;
    const auto versions = count("SELECT count(*) FROM campaign_versions");

    r = env_->run({"campaign", "apply", file, "--search-again"});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("campaign 'spent': the audience search was not sent: today's day cap of 2 credits "
                            "(budget_per_day_credits; UTC day "),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find(") has nothing left (" + std::to_string(first) +
                            " spent or held today); raise it with `budget set spent --per-day N` (the admin API: PUT "
                            "/v1/campaigns/spent/budget; while the campaign is active, its waiting leads may spend the "
                            "raise before the next apply searches, so `campaign pause spent` first, raise, apply, then "
                            "`campaign resume spent`), or change the file's budget_per_day_credits, whose new budget "
                            "replaces the live one; or apply again after 00:00 UTC; nothing changed"),
              std::string::npos)
        << r.output;
    // `campaign validate` says so before any apply; of the unchanged file, whose apply sends no
    // search, it says nothing.
    r = env_->run({"campaign", "validate", file});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("warning:"), std::string::npos) << r.output;
    // With --search-again, as the apply above had it, it does.
    r = env_->run({"campaign", "validate", file, "--search-again"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("warning: campaign 'spent': an apply now would not send the audience search: today's "
                            "day cap of 2 credits"),
              std::string::npos)
        << r.output;
    // `campaign validate` with another DATABASE_URL, the test's restored after it.
    const auto validate_with_database = [&](const std::string& url, std::vector<std::string> args) {
        env_->set("DATABASE_URL", url);
        auto out = env_->run(std::move(args));
        env_->set("DATABASE_URL", env_->database_url());
        return out;
    };
    // Without a database the prediction cannot be made, and validate says so.
    r = validate_with_database("", {"campaign", "validate", file, "--search-again"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("accounts, and what an apply would warn of, not checked: no database configured"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("warning: whether an apply with --search-again would send the audience search (the budget "
                            "and caps it needs) is not checked: no database configured"),
              std::string::npos)
        << r.output;
    // A database that does not answer: the file is still validated, as `campaign estimate` does.
    r = validate_with_database("postgresql://orch@127.0.0.1:1/orch", {"campaign", "validate", file});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("accounts, and what an apply would warn of, not checked: the database did not answer ("), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("would send the audience search (the budget and caps it needs) is not checked: the "
                            "database did not answer ("),
              std::string::npos)
        << r.output;
    // A changed audience needs a search: refused the same way, with no flag.
    write(30, 1'000, "budget_per_day_credits: 2\n");
    r = env_->run({"campaign", "validate", file});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("warning: campaign 'spent': an apply now would not send the audience search: today's "
                            "day cap of 2 credits (budget_per_day_credits; UTC day "),
              std::string::npos)
        << r.output;
    r = env_->run({"campaign", "apply", file});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("today's day cap of 2 credits"), std::string::npos) << r.output;
    // A file that changes its budget (here the total) replaces the live one: the file's cap holds,
    // and only the file can raise it.
    write(30, 1'200, "budget_per_day_credits: 2\n");
    r = env_->run({"campaign", "apply", file});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("today's day cap of 2 credits (budget_per_day_credits; UTC day "), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("raise budget_per_day_credits in the file (its budget replaces the live one, so "
                            "`budget set` does not help here); or apply again after 00:00 UTC"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(charged(), first);
    EXPECT_EQ(count("SELECT count(*) FROM campaign_versions"), versions);

    // The cap raised live: the file's budget is its last version's, so the live cap holds, and
    // the search goes.
    ASSERT_EQ(env_->run({"budget", "set", "spent", "--per-day", "500"}).exit_code, 0);
    write(25, 1'000, "budget_per_day_credits: 2\n");
    r = env_->run({"campaign", "apply", file, "--search-again"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::int64_t second = charged();
    EXPECT_GT(second, first);
    // Lowered live to what the day spent: refused, naming the live cap.
    ASSERT_EQ(env_->run({"budget", "set", "spent", "--per-day", std::to_string(second)}).exit_code, 0);
    r = env_->run({"campaign", "apply", file, "--search-again"});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("today's day cap of " + std::to_string(second) +
                            " credits (the live cap, from `budget set`; this apply keeps the live budget, since the "
                            "file's is unchanged; UTC day "),
              std::string::npos)
        << r.output;
    EXPECT_EQ(charged(), second);

    // The cap raised in the file: the file's budget holds, and the search goes, booked.
    write(30, 1'000, "budget_per_day_credits: 500\n");
    r = env_->run({"campaign", "apply", file});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::int64_t third = charged();
    EXPECT_GT(third, second);
    EXPECT_EQ(budget_show("spent")["spent"], third);

    // A budget no larger than what the campaign spent: refused.
    write(35, third, "");
    r = env_->run({"campaign", "apply", file});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("the audience search was not sent: its budget of " + std::to_string(third) +
                            " credits (budget_credits) has nothing left (" + std::to_string(third) +
                            " spent or held by calls in flight); raise budget_credits in the file"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(charged(), third);

    // A per-account cap counts all the campaign spent through the sender, also before the cap was
    // set: every search went through the first account, with no per-account cap until this apply.
    write(25, 100'000, "budget_per_account_credits: 1000\n");
    r = env_->run({"campaign", "apply", file, "--search-again"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::int64_t fourth = charged();
    ASSERT_GT(fourth, third);
    auto senders = budget_show("spent")["accounts"];
    ASSERT_EQ(senders.size(), 1u) << senders.dump();
    EXPECT_EQ(senders[0]["spent"], fourth) << senders.dump();
    EXPECT_EQ(senders[0]["available"], 1000 - fourth) << senders.dump();
    // Lowered live to what the sender spent, with the file's budget unchanged: the live cap holds,
    // and the apply is refused, naming it.
    const std::string used = std::to_string(fourth);
    ASSERT_EQ(env_->run({"budget", "set", "spent", "--per-account", used}).exit_code, 0);
    write(35, 100'000, "budget_per_account_credits: 1000\n");
    r = env_->run({"campaign", "validate", file});
    EXPECT_NE(r.output.find("warning: campaign 'spent': an apply now would not send the audience search: the cap of " +
                            used + " credits per sender (the live cap, from `budget set`; this apply keeps the live "
                            "budget, since the file's is unchanged) has nothing left on account '"),
              std::string::npos)
        << r.output;
    // Paused, so that no waiting lead could spend a raise first: the refusal does not warn of it.
    ASSERT_EQ(env_->run({"campaign", "pause", "spent"}).exit_code, 0);
    r = env_->run({"campaign", "apply", file});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("', which the search goes through as the campaign's first account (" + used +
                            " spent or held by calls in flight); raise it with `budget set spent --per-account N` (the "
                            "admin API: PUT /v1/campaigns/spent/budget), or change the file's "
                            "budget_per_account_credits, whose new budget replaces the live one, or list another "
                            "account first"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("while the campaign is active"), std::string::npos) << r.output;
    EXPECT_EQ(charged(), fourth);
    // Raised live while paused: the search goes, and the campaign resumes.
    ASSERT_EQ(env_->run({"budget", "set", "spent", "--per-account", std::to_string(fourth + 1000)}).exit_code, 0);
    r = env_->run({"campaign", "apply", file});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_GT(charged(), fourth);
    EXPECT_EQ(env_->run({"campaign", "resume", "spent"}).exit_code, 0);
}

// The audience search of `campaign apply` is booked in the campaign's ledger (issue 6): after the
// apply, after an unchanged re-apply (the search is sent again) and after a worker ran the
// campaign, the ledger's posted total equals what the sandbox charged the key, `budget show`
// lists the search under search_people, and a balance read (what serve's credit poll records,
// store::record_credit_read) reports no drift. The funnel counts no step for the search.
TEST_F(LimitsTest, TheAudienceSearchIsBookedInTheLedgerAndLeavesNoDrift) {
    start({"--accept-probability", "0"});
    orch::engine::store db(env_->database_url());
    auto key_state = [&]() -> json {
        auto credits = control_json("/control/credits");  // named: the loop must not outlive it
        for (const auto& k : credits["keys"]) {
            if (k["key"] == key_) {
                return k;
            }
        }
        throw std::runtime_error("the sandbox does not know key " + key_);
    };
    auto balance = [&] { return key_state()["credits"].get<std::int64_t>(); };
    auto ledger_posted = [&] {
        return count("SELECT COALESCE(sum(posted), 0) FROM ledger_transfers WHERE state = 'posted'");
    };
    EXPECT_EQ(charged(), 0);  // accounts connect costs nothing
    EXPECT_EQ(db.record_credit_read(balance()).drift, 0);  // the first read: nothing to compare

    auto file = dir_ + "/searched.yaml";
    std::ofstream(file) << search_campaign_yaml("searched", 25, 1'000);
    auto r = env_->run({"campaign", "apply", file});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::int64_t search = charged();
    ASSERT_GT(search, 0);
    EXPECT_EQ(key_state()["charged_by_action"]["search_people"], search);
    EXPECT_NE(r.output.find("audience search: 25 people found of 25 asked"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(", " + std::to_string(search) + " credits, booked"), std::string::npos) << r.output;
    EXPECT_EQ(ledger_posted(), search);
    EXPECT_EQ(db.record_credit_read(balance()).drift, 0);
    auto b = budget_show("searched");
    EXPECT_EQ(b["spent"], search) << b.dump();
    EXPECT_EQ(b["available"], 1'000 - search) << b.dump();
    ASSERT_EQ(b["spend"]["by_action"].size(), 1u) << b.dump();
    EXPECT_EQ(b["spend"]["by_action"][0]["action"], "search_people");
    EXPECT_EQ(b["spend"]["by_action"][0]["posted"], search);
    EXPECT_EQ(b["spend"]["by_action"][0]["reserved_posted"], 0);
    EXPECT_EQ(b["spend"]["by_account"][0]["account"],
              env_->scalar("SELECT account_id FROM accounts WHERE label = 'sender-1'"));

    // Unchanged: no search goes out again, nothing is charged or booked.
    auto again = env_->run({"campaign", "apply", file});
    ASSERT_EQ(again.exit_code, 0) << again.output;
    EXPECT_NE(again.output.find("unchanged"), std::string::npos) << again.output;
    EXPECT_EQ(charged(), search);
    EXPECT_EQ(ledger_posted(), search);
    EXPECT_EQ(db.record_credit_read(balance()).drift, 0);

    // The campaign runs to its end: every credit the key was charged is in the ledger.
    auto worker = env_->spawn({"worker", "--exit-when-idle"});
    ASSERT_EQ(worker->wait(90'000), 0) << worker->log();
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status IN ('ready', 'calling', 'waiting')"), 0);
    EXPECT_GT(charged(), search);
    EXPECT_EQ(ledger_posted(), charged());
    EXPECT_EQ(db.record_credit_read(balance()).drift, 0);
    EXPECT_EQ(count("SELECT count(*) FROM ledger_check"), 0);
    // The funnel's credits are its steps' calls only; the searches are the ledger's rest.
    auto f = funnel("searched");
    EXPECT_EQ(f["credits"].get<std::int64_t>(), charged() - search) << f.dump();
    EXPECT_EQ(count("SELECT count(*) FROM step_attempts WHERE call = 'search_people'"), 0);
}

// A budget smaller than what the whole audience search would cost: the search asks for no more
// people than the budget pays for (10 for 1 credit, of 25), says so, and the API's charge is the
// budget, not beyond it (a trial's apply spent 20 credits of a budget of 5). What the search
// spends is booked as before: the ledger equals the sandbox, with nothing over the budget.
TEST_F(LimitsTest, AnAudienceSearchAsksForNoMorePeopleThanTheBudgetPaysFor) {
    start({"--accept-probability", "0"});
    auto file = dir_ + "/tight.yaml";
    std::ofstream(file) << search_campaign_yaml("tight", 25, 1);
    // Said beforehand: validate, with the database, predicts the hold.
    auto validated = env_->run({"campaign", "validate", file});
    ASSERT_EQ(validated.exit_code, 0) << validated.output;
    EXPECT_NE(validated.output.find("note: if applied now, the audience search would ask for no more people than the "
                                    "budget of 1 credit (budget_credits) pays for (1 credit left): at most about 10 of the 25 "
                                    "people asked for, where the whole search would cost about 3 credits"),
              std::string::npos)
        << validated.output;
    EXPECT_EQ(charged(), 0) << validated.output;
    // And the estimate, whose forecast is of the whole audience.
    auto estimated = env_->run({"campaign", "estimate", file});
    ASSERT_EQ(estimated.exit_code, 0) << estimated.output;
    EXPECT_NE(estimated.output.find("  search       the audience search would ask for no more people than the budget "
                                    "of 1 credit (budget_credits) pays for (1 credit left): at most about 10 of the 25"),
              std::string::npos)
        << estimated.output;
    EXPECT_NE(estimated.output.find(": the figures here are for all 25\n"), std::string::npos) << estimated.output;
    auto r = env_->run({"campaign", "apply", file});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(charged(), 1) << r.output;
    EXPECT_NE(r.output.find("10 leads, 10 enrolled"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("audience search: 10 people found of 25 asked"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("audience search held short: the search asked for no more people than the budget of "
                            "1 credit (budget_credits) pays for (1 credit left before it)"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("is paused"), std::string::npos) << r.output;
    auto b = budget_show("tight");
    EXPECT_EQ(b["spent"], 1) << b.dump();
    // The search reserves nothing, so its credits show as overrun; the table's legend says why.
    auto shown = env_->run({"budget", "show", "tight"});
    EXPECT_NE(shown.output.find("overrun: credits posted beyond what was reserved for them (the audience search"),
              std::string::npos)
        << shown.output;
    EXPECT_EQ(b["shortfall"], 0) << b.dump();
    EXPECT_EQ(b["available"], 0) << b.dump();
    EXPECT_EQ(count("SELECT COALESCE(sum(posted), 0) FROM ledger_transfers"), 1);
    EXPECT_EQ(count("SELECT count(*) FROM ledger_check"), 0);

    // The admin API's apply holds its search to the budget the same way.
    // (Another title: the people of the first search are this campaign's already.)
    const std::string admin_token = "limits-test-admin-token-0123456789";
    env_->set("ORCH_ADMIN_TOKEN", admin_token);
    const auto port = free_port();
    auto serve = env_->spawn({"serve", "--webhook-listen", "127.0.0.1:" + std::to_string(free_port()),
                              "--admin-listen", "127.0.0.1:" + std::to_string(port)});
    auto admin = orch::test::client_when_up(port);
    ASSERT_TRUE(admin) << serve->log();
    std::string yaml = search_campaign_yaml("tight-admin", 25, 2);
    const std::string title = "title: Engineer";
    yaml.replace(yaml.find(title), title.size(), "title: Designer");
    const std::int64_t before = charged();
    auto dry = admin->request("POST", "/v1/campaigns?dry_run=true", yaml,
                              {{"Authorization", "Bearer " + admin_token}, {"Content-Type", "application/yaml"}});
    ASSERT_EQ(dry.status, 200) << dry.body;
    const json dry_body = dry.body_json();
    ASSERT_TRUE(dry_body["search_held"].is_string()) << dry.body;
    EXPECT_NE(dry_body["search_held"].get<std::string>().find("at most about 20 of the 25 people asked for"), std::string::npos)
        << dry.body;
    auto created = admin->request("POST", "/v1/campaigns", yaml,
                                  {{"Authorization", "Bearer " + admin_token}, {"Content-Type", "application/yaml"}});
    ASSERT_EQ(created.status, 201) << created.body;
    EXPECT_EQ(charged() - before, 2) << created.body;
    // The search's row of credits in flight ends once the apply has booked them.
    EXPECT_TRUE(eventually([&] { return count("SELECT count(*) FROM searches_in_flight") == 0; }, 5s));
    const json body = created.body_json();
    EXPECT_EQ(body["audience_search"]["found"], 20) << created.body;
    EXPECT_EQ(body["audience_search"]["held"], true) << created.body;
    EXPECT_NE(body["audience_search"]["stopped"].get<std::string>().find(
                  "the search asked for no more people than the budget of 2 credits (budget_credits) pays for"),
              std::string::npos)
        << created.body;
}

// An apply's audience search answered 429 writes the cooldown where every process reads it, as a
// worker's call does, and its page waits for it in the search bucket, saying so. Before, the
// search waited out the Retry-After on its own and in silence, and the workers, which read the
// cooldowns in Redis, kept sending inside the window.
TEST_F(LimitsTest, AnAudienceSearchsRateLimitedPageCoolsTheKeyForEveryProcess) {
    start({"--accept-probability", "0"});
    auto file = dir_ + "/limited.yaml";
    std::ofstream(file) << search_campaign_yaml("limited", 25, 1'000);
    const auto since = now_ms();
    auto burst = control_->post("/control/rate-limit-burst", {{"key", key_}, {"duration_ms", 1500}, {"retry_after_s", 4}});
    ASSERT_EQ(burst.status, 200) << burst.body;
    auto apply = env_->spawn({"campaign", "apply", file});
    // While the apply waits, the key's cooldown is in Redis, where the workers read it.
    auto limiter = orch::test::env_limiter(key_);
    const bool cooling = eventually(
        [&] {
            const auto active = limiter->cooldowns();
            return active && std::any_of(active->begin(), active->end(), [](const auto& c) { return c.key_scope; });
        },
        10s);
    EXPECT_TRUE(cooling) << "no cooldown of the key in Redis\n" << apply->log();
    // The page about to be sent was held as credits in flight for serve's balance reads (25
    // people at 1 credit per 10 found, at most), until the apply booked the charge.
    EXPECT_EQ(count("SELECT COALESCE(sum(credits), 0) FROM searches_in_flight"), 3);
    ASSERT_EQ(apply->wait(60'000), 0) << apply->log();
    EXPECT_EQ(count("SELECT count(*) FROM searches_in_flight"), 0);
    const auto out = apply->log();
    EXPECT_NE(out.find("audience search, page 1: waiting 4 s for the API key's cooldown after a RATE_LIMITED answer"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("25 leads, 25 enrolled"), std::string::npos) << out;
    auto log = requests(since);
    // The key's burst answers before the request is read (no action in the log): one 429, then
    // the page asked again once, after the cooldown.
    std::string seen;
    for (const auto& r : log) {
        seen += r.action + " " + std::to_string(r.status) + "; ";
    }
    EXPECT_EQ(std::count_if(log.begin(), log.end(), [](const auto& r) { return r.status == 429; }), 1) << seen;
    EXPECT_EQ(std::count_if(log.begin(), log.end(),
                            [](const auto& r) { return r.action == "search_people" && r.status == 200; }),
              1)
        << seen;
    for (const auto& v : inside_cooldowns(log, 4000)) {
        ADD_FAILURE() << v;
    }
    EXPECT_EQ(charged(), 3) << out;  // the 429 billed nothing: 25 people at 1 credit per 10 found
}

// A redis-server of the test's own (not the shared one), with an append-only file so the day
// counters survive a restart (a Redis that restarts empty forgets today's counts: that is a
// deployment choice, and the orchestrator's docs say to persist it). Redis stops for a few
// seconds mid-run and comes back: the quota still holds (sandbox record), the run finishes, and
// the worker log says Redis went away and came back. While it is down, `accounts list` still
// lists the accounts, saying the quotas are unavailable.
class redis_server {
public:
    explicit redis_server(const std::string& dir) : dir_(dir), port_(free_port()) { start(); }
    ~redis_server() { stop(); }
    void start() {
        process_ = std::make_unique<background_process>(std::vector<std::string>{
            "/usr/bin/redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1", "--dir", dir_, "--save", "",
            "--appendonly", "yes", "--daemonize", "no"});
        for (int i = 0; i < 100; ++i) {
            auto r = orch::test::run_program({"/usr/bin/redis-cli", "-p", std::to_string(port_), "ping"}, {}, 5'000);
            if (r.output.find("PONG") != std::string::npos) {
                return;
            }
            std::this_thread::sleep_for(50ms);
        }
        throw std::runtime_error("redis-server did not start: " + process_->log());
    }
    void stop() {
        if (process_) {
            process_->stop(SIGTERM);  // a clean shutdown writes the append-only file
            process_.reset();
        }
    }
    std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_) + "/0"; }

private:
    std::string dir_;
    unsigned short port_;
    std::unique_ptr<background_process> process_;
};

TEST_F(LimitsTest, ARedisRestartMidRunKeepsTheQuotas) {
    start({"--accept-probability", "0"});
    std::filesystem::create_directories(dir_ + "/redis");
    redis_server redis(dir_ + "/redis");
    env_->set("REDIS_URL", redis.url());
    env_->set("ORCH_INVITE_PER_DAY", "6");
    env_->set("ORCH_PACING", "false");
    // 10 requests a second for the key: the run lasts several seconds, long enough to cut Redis.
    env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "600");
    env_->set("ORCH_KEY_BURST", "1");
    apply("restart", 30, "1s");
    auto worker = env_->spawn({"worker"});
    ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM step_attempts") >= 8; }, 30s)) << worker->log();
    redis.stop();
    auto cut_at = now_ms();
    auto listed = env_->run({"accounts", "list"});
    EXPECT_EQ(listed.exit_code, 0) << listed.output;
    EXPECT_NE(listed.output.find("quotas unavailable (Redis:"), std::string::npos) << listed.output;
    EXPECT_NE(listed.output.find("sender-2"), std::string::npos) << listed.output;
    auto listed_json = env_->run({"accounts", "list", "--format", "json"});
    EXPECT_EQ(listed_json.exit_code, 0) << listed_json.output;
    // stderr carries the limiter's own log line about the outage; the document is on stdout.
    auto brace = listed_json.output.find('{');
    auto lj = json::parse(listed_json.output.substr(brace == std::string::npos ? 0 : brace), nullptr, false);
    ASSERT_FALSE(lj.is_discarded()) << listed_json.output;
    EXPECT_EQ(lj["accounts"].size(), 3u);
    EXPECT_TRUE(lj["limits_error"].is_string()) << listed_json.output;
    std::this_thread::sleep_for(3s);
    auto down_requests = requests(cut_at + 1'000);  // nothing went out while Redis was down
    EXPECT_TRUE(down_requests.empty()) << down_requests.size() << " requests while Redis was down";
    redis.start();

    auto steady = [&] {
        const int k = needed_no_invitation();
        return count("SELECT count(*) FROM enrollments WHERE status = 'done'") == 18 + k &&
               count("SELECT count(*) FROM enrollments WHERE reason LIKE '%invite day quota%'") == 12 - k;
    };
    bool reached = eventually(steady, 60s);
    EXPECT_EQ(worker->stop(SIGTERM), 0);
    auto text = worker->log();
    ASSERT_TRUE(reached) << env_->scalar("SELECT string_agg(status || ': ' || reason, E'\\n') FROM enrollments")
                         << text;
    auto sent = invitations_sent();
    int total = 0;
    for (const auto& [account, n] : sent) {
        EXPECT_LE(n, 6) << account;
        total += n;
    }
    EXPECT_EQ(total, 18);
    EXPECT_EQ(count("SELECT count(*) FROM enrollments WHERE status = 'failed'"), 0);
    EXPECT_NE(text.find("Redis unavailable"), std::string::npos) << text;
    EXPECT_NE(text.find("Redis available again"), std::string::npos) << text;
    // Restarted with its append-only file, Redis kept the limits' state: nothing lost is said.
    EXPECT_EQ(text.find("Redis lost the rate-limit state"), std::string::npos) << text;

    auto r = env_->run({"accounts", "list", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    EXPECT_TRUE(j["limits_error"].is_null()) << r.output;
    for (const auto& a : j["accounts"]) {
        EXPECT_EQ(action_use(a, "invite")["used_today"], sent[a["account_id"].get<std::string>()])
            << a.dump();
    }
}

// A Redis that loses the limits' state (flushed here; restarted without persistence alike) counts
// every quota from zero again: the workers cannot see it in the counts, and said nothing (a
// trial's accounts went to 36 and 29 invitations on a day of 20). A worker now says so.
TEST_F(LimitsTest, ARedisThatLostTheLimitsStateIsSaid) {
    start({"--accept-probability", "0"});
    std::filesystem::create_directories(dir_ + "/redis");
    redis_server redis(dir_ + "/redis");
    env_->set("REDIS_URL", redis.url());
    apply("flushed", 2, "1s");
    auto worker = env_->spawn({"worker"});
    const std::string first = "Redis held no rate-limit state of this API key (a first start";
    ASSERT_TRUE(eventually([&] { return worker->log().find(first) != std::string::npos; }, 10s)) << worker->log();
    auto second = env_->spawn({"worker"});
    const std::string lost = "limits: Redis lost the rate-limit state (restarted without persistence, or flushed)";
    std::this_thread::sleep_for(2500ms);  // more looks than one each, all finding the marker
    EXPECT_EQ(worker->log().find(lost), std::string::npos) << worker->log();
    EXPECT_EQ(second->log().find(lost), std::string::npos) << second->log();
    EXPECT_EQ(second->log().find(first), std::string::npos) << second->log();  // the first one's marker
    auto flushed = orch::test::run_program({"/usr/bin/redis-cli", "-u", redis.url(), "FLUSHALL"}, {}, 5'000);
    ASSERT_NE(flushed.output.find("OK"), std::string::npos) << flushed.output;
    // Each says it, not only the first to look after the flush (its look sets the marker again).
    EXPECT_TRUE(eventually([&] { return worker->log().find(lost) != std::string::npos; }, 10s)) << worker->log();
    EXPECT_TRUE(eventually([&] { return second->log().find(lost) != std::string::npos; }, 10s)) << second->log();
    worker->stop(SIGTERM);
    second->stop(SIGTERM);
}

// A Redis that loses the limits' state mid-run gets the quota counts back from the calls the
// database records before any call counts again (without it, a flush let each sender invite up
// to its whole day quota a second time: a trial saw 36 and 29 invitations on a day of 20). The
// flush comes after some invitations went out, while the workers still have leads to invite.
TEST_F(LimitsTest, AFlushedRedisGetsTheQuotaCountsBackFromTheDatabase) {
    start({"--accept-probability", "0"});
    std::filesystem::create_directories(dir_ + "/redis");
    redis_server redis(dir_ + "/redis");
    env_->set("REDIS_URL", redis.url());
    env_->set("ORCH_INVITE_PER_DAY", "6");
    env_->set("ORCH_PACING", "false");
    // 5 requests a second for the key: the run lasts long enough to flush Redis in its middle.
    env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "300");
    env_->set("ORCH_KEY_BURST", "1");
    apply("flushed", 30, "1s");
    auto worker = env_->spawn({"worker"});
    auto second = env_->spawn({"worker"});
    ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM step_attempts WHERE call = 'invite'") >= 6; }, 30s))
        << worker->log();
    auto flushed = orch::test::run_program({"/usr/bin/redis-cli", "-u", redis.url(), "FLUSHALL"}, {}, 5'000);
    ASSERT_NE(flushed.output.find("OK"), std::string::npos) << flushed.output;
    const auto invited_before = count("SELECT count(*) FROM step_attempts WHERE call = 'invite'");

    auto steady = [&] {
        const int k = needed_no_invitation();
        return count("SELECT count(*) FROM enrollments WHERE status = 'done'") == 18 + k &&
               count("SELECT count(*) FROM enrollments WHERE reason LIKE '%invite day quota%'") == 12 - k;
    };
    const bool reached = eventually(steady, 60s);
    worker->stop(SIGTERM);
    second->stop(SIGTERM);
    const std::string logs = worker->log() + second->log();
    ASSERT_TRUE(reached) << env_->scalar("SELECT string_agg(status || ': ' || reason, E'\\n') FROM enrollments")
                         << logs;
    EXPECT_LT(invited_before, 18) << "the flush came after the run: it tested nothing";
    auto sent = invitations_sent();
    int total = 0;
    for (const auto& [account, n] : sent) {
        EXPECT_LE(n, 6) << account;
        total += n;
    }
    EXPECT_EQ(total, 18);
    EXPECT_NE(logs.find("Redis lost the rate-limit state (restarted without persistence, or flushed)"),
              std::string::npos)
        << logs;
    EXPECT_NE(logs.find("were written back from the calls the database records"), std::string::npos) << logs;

    // What Redis counts again is what went out: each sender's 6 of today.
    auto r = env_->run({"accounts", "list", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    for (const auto& a : j["accounts"]) {
        EXPECT_EQ(action_use(a, "invite")["used_today"], sent[a["account_id"].get<std::string>()]) << a.dump();
    }
}

// The API key's request rate is the API's, so the operator's commands count in it too:
// `accounts connect` and `accounts sync` take the key's places in Redis as the workers and serve
// do, and wait for them. On a key of 1 request/s with a burst of 1, four such commands in a row
// reach the API at least a second apart (without the gate they went out within 0.2 s, over the
// burst). With Redis not answering, a command sends nothing and says why.
TEST_F(LimitsTest, TheOperatorsAccountCommandsTakeTheKeysPlacesAsTheWorkersCalls) {
    start({});
    env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "60");
    env_->set("ORCH_KEY_BURST", "1");
    const auto since = now_ms();
    std::vector<std::vector<std::string>> commands = {
        {"accounts", "connect", "--login-token", "token-4", "--country", "FR", "--label", "sender-4"},
        {"accounts", "connect", "--login-token", "token-5", "--country", "FR", "--label", "sender-5"},
        {"accounts", "sync"},
        {"accounts", "connect", "--login-token", "token-6", "--country", "FR", "--label", "sender-6"},
    };
    for (const auto& c : commands) {
        auto r = env_->run(c);
        ASSERT_EQ(r.exit_code, 0) << r.output;
    }
    auto log = requests(since);
    ASSERT_EQ(log.size(), commands.size());
    for (std::size_t i = 1; i < log.size(); ++i) {
        // One place per second. The sandbox stamps each arrival, after its take by the time a
        // connection takes to open, which a loaded machine stretches: 200 ms of slack (without
        // the gate, the commands came 40-50 ms apart).
        EXPECT_GE(log[i].at_ms - log[i - 1].at_ms, 800) << log[i - 1].action << " then " << log[i].action;
    }

    env_->set("REDIS_URL", "redis://127.0.0.1:1");
    const auto before_down = now_ms();
    auto down = env_->run({"accounts", "connect", "--login-token", "token-7", "--country", "FR"});
    EXPECT_EQ(down.exit_code, 1) << down.output;
    // Waited out for a while (a restart would be), then given up.
    EXPECT_NE(down.output.find("Redis did not answer; trying again for up to 10 s"), std::string::npos) << down.output;
    EXPECT_GE(now_ms() - before_down, 10'000);
    EXPECT_NE(down.output.find("Redis did not answer, so this call could not take its place"), std::string::npos)
        << down.output;
    EXPECT_NE(down.output.find("this call was not sent"), std::string::npos) << down.output;
    EXPECT_TRUE(requests(before_down).empty());
}

// `accounts connect` waits out a 429 in the key's bucket, as the workers do: the 429 writes the
// key's cooldown from its Retry-After, and the retry leaves when it ends, not before.
TEST_F(LimitsTest, AccountsConnectWaitsOutA429InTheKeysCooldown) {
    start({});
    auto burst = control_->post("/control/rate-limit-burst",
                                {{"key", key_}, {"duration_ms", 1500}, {"retry_after_s", 2}});
    ASSERT_EQ(burst.status, 200) << burst.body;
    const auto since = now_ms();
    auto r = env_->run({"accounts", "connect", "--login-token", "token-4", "--country", "FR", "--label", "sender-4"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("rate limited (Retry-After 2 s): retrying the login when the API key's cooldown ends"),
              std::string::npos)
        << r.output;
    auto log = requests(since);
    ASSERT_EQ(log.size(), 2u);
    EXPECT_EQ(log[0].status, 429);
    EXPECT_EQ(log[1].status, 200);
    // The sandbox stamps arrivals after the connection opens: 100 ms of slack.
    EXPECT_GE(log[1].at_ms - log[0].at_ms, 1900);
}

// The checkpoint step waits out a 429 as the login does: the code typed once is sent again when
// the key's cooldown ends, instead of ending the command (the operator would have had to log in
// again and type a new code). The sandbox's own key rate (one request per 2 s) answers the
// checkpoint, sent right after the login, 429.
TEST_F(LimitsTest, AccountsConnectsCheckpointWaitsOutA429) {
    sandbox_ = std::make_unique<sandbox_process>(std::vector<std::string>{
        "--checkpoint-rate", "1", "--key-rate-per-s", "0.5", "--key-burst", "1", "--api-key", key_ + ":1000000"});
    env_ = std::make_unique<orchestrator_env>(sandbox_->port(), key_);
    control_ = std::make_unique<http_client>("127.0.0.1", sandbox_->control_port());
    const auto since = now_ms();
    auto r = env_->run({"accounts", "connect", "--email", "b@example.com", "--password", "pw-b", "--country", "FR",
                        "--label", "mail-b"},
                       60'000, std::string("123456\n"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(": retrying the checkpoint when the API key's cooldown ends"), std::string::npos)
        << r.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM accounts WHERE label = 'mail-b' AND connected"), "1");
    auto log = requests(since);
    ASSERT_EQ(log.size(), 3u);
    EXPECT_EQ(log[0].status, 200);
    EXPECT_EQ(log[1].status, 429);  // refused by the key's rate before it was routed: no action logged
    EXPECT_EQ(log[2].action, "checkpoint");
    EXPECT_EQ(log[2].status, 200);
    // Not before the sandbox's rate has a place again (its stamps: 100 ms of slack).
    EXPECT_GE(log[2].at_ms - log[0].at_ms, 1900);
}

// A 429 whose Retry-After is longer than a command waits ends the command with exit 1 (try again
// later), not 2 (the caller's mistake), and the key's cooldown it wrote holds the next command,
// which sends nothing.
TEST_F(LimitsTest, ARetryAfterLongerThanACommandWaitsEndsItWithExit1) {
    start({});
    auto burst = control_->post("/control/rate-limit-burst",
                                {{"key", key_}, {"duration_ms", 1000}, {"retry_after_s", 150}});
    ASSERT_EQ(burst.status, 200) << burst.body;
    const auto since = now_ms();
    auto connect = env_->run({"accounts", "connect", "--login-token", "token-4", "--country", "FR"});
    EXPECT_EQ(connect.exit_code, 1) << connect.output;
    EXPECT_NE(connect.output.find("login refused: "), std::string::npos) << connect.output;
    EXPECT_NE(connect.output.find("RATE_LIMITED"), std::string::npos) << connect.output;
    EXPECT_NE(connect.output.find("(try again later)"), std::string::npos) << connect.output;
    EXPECT_EQ(connect.output.find("retrying the login"), std::string::npos) << connect.output;

    auto sync = env_->run({"accounts", "sync"});
    EXPECT_EQ(sync.exit_code, 1) << sync.output;
    EXPECT_NE(sync.output.find("the API key's cooldown after a RATE_LIMITED answer ends in "), std::string::npos)
        << sync.output;
    EXPECT_NE(sync.output.find("this call was not sent (try again later)"), std::string::npos) << sync.output;
    EXPECT_EQ(requests(since).size(), 1u);  // the login that met the 429
}

// Commands waiting for the key at once stand in the operators' line, so they are served in the
// order they asked. Before, each slept until the next place freed and they raced for it: every
// waiter woke at the same instant (a trial saw a later connect go first and an earlier sync give
// up after 2 minutes).
TEST_F(LimitsTest, TheOperatorsCommandsWaitingForTheKeyAreServedInTheOrderTheyAsked) {
    start({});
    env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "20");
    env_->set("ORCH_KEY_BURST", "1");
    constexpr std::size_t n = 4;
    std::vector<std::unique_ptr<background_process>> syncs;
    std::vector<std::int64_t> exited_ms(n, 0);
    const auto look = [&] {
        for (std::size_t i = 0; i < syncs.size(); ++i) {
            if (exited_ms[i] == 0 && !syncs[i]->alive()) {
                exited_ms[i] = now_ms();
            }
        }
    };
    const auto since = now_ms();
    // 400 ms apart: each asks after the one before (a process starts in well under that), and all
    // before the first place frees, 3 s after the first took the burst.
    for (std::size_t i = 0; i < n; ++i) {
        syncs.push_back(env_->spawn({"accounts", "sync"}));
        for (int k = 0; k < 40; ++k) {
            look();
            std::this_thread::sleep_for(10ms);
        }
    }
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    while (std::count(exited_ms.begin(), exited_ms.end(), 0) > 0 && std::chrono::steady_clock::now() < give_up) {
        look();
        std::this_thread::sleep_for(10ms);
    }
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(syncs[i]->wait(0), 0) << "sync " << i << ":\n" << syncs[i]->log();
    }
    // In the order asked: each exits a place (3 s) after the one before, less what a loaded
    // machine adds between a call's answer and its process's exit. Before, the three waiting
    // woke at the same instant and went in any order.
    for (std::size_t i = 1; i < n; ++i) {
        EXPECT_GT(exited_ms[i], exited_ms[i - 1] + 1000) << "sync " << i << " against sync " << i - 1 << ":\n"
                                                         << syncs[i]->log();
    }
    // And one place each, 3 s apart, by the sandbox's arrival stamps.
    auto log = requests(since);
    ASSERT_EQ(log.size(), n);
    for (std::size_t i = 1; i < n; ++i) {
        EXPECT_GE(log[i].at_ms - log[i - 1].at_ms, 2800) << log[i].action;
    }
}

// An apply's audience search stands in the same line: a sync that asked before it goes first, and
// a sync that asked after it goes after. Before, the search took the first place that freed, ahead
// of every command waiting (a trial saw an apply served ahead of 13 waiting syncs).
TEST_F(LimitsTest, AnApplysAudienceSearchTakesItsPlaceInTheOperatorsLine) {
    start({});
    env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "20");
    env_->set("ORCH_KEY_BURST", "1");
    auto file = dir_ + "/inline.yaml";
    std::ofstream(file) << search_campaign_yaml("inline", 25, 1'000);
    const auto since = now_ms();
    // The first sync takes the burst; the others ask 400 ms apart, all before the next place frees
    // 3 s later: a sync, the apply, a sync.
    std::vector<std::unique_ptr<background_process>> commands;
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"accounts", "sync"}, {"accounts", "sync"}, {"campaign", "apply", file}, {"accounts", "sync"}}) {
        commands.push_back(env_->spawn(args));
        std::this_thread::sleep_for(400ms);
    }
    for (std::size_t i = 0; i < commands.size(); ++i) {
        ASSERT_EQ(commands[i]->wait(60'000), 0) << "command " << i << ":\n" << commands[i]->log();
    }
    auto log = requests(since);
    ASSERT_EQ(log.size(), commands.size());
    std::vector<std::string> order;
    for (const auto& r : log) {
        order.push_back(r.action);
    }
    EXPECT_EQ(order[2], "search_people") << ::testing::PrintToString(order);
    EXPECT_NE(order[3], "search_people") << ::testing::PrintToString(order);
    // The apply says what its search waits for, as the syncs do: the sync ahead, then the rate.
    const auto said = commands[2]->log();
    EXPECT_NE(said.find("audience search, page 1: waiting for 1 operator command(s)"), std::string::npos) << said;
    EXPECT_NE(said.find(" s for the API key's request rate"), std::string::npos) << said;
    for (std::size_t i = 1; i < log.size(); ++i) {
        EXPECT_GE(log[i].at_ms - log[i - 1].at_ms, 2800) << log[i].action;
    }
}

// A command interrupted (SIGINT; SIGHUP, a closed terminal) while it waits in the operators' line
// leaves the line before it dies: the command behind it goes at the next place. Before, the
// interrupted command's ticket stayed in line for the 15 s it lives without word, and held the one
// behind that long.
bool says(background_process& p, const std::string& text) {
    for (int i = 0; i < 1'000 && p.log().find(text) == std::string::npos; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    return p.log().find(text) != std::string::npos;
}

TEST_F(LimitsTest, ACommandInterruptedWhileItWaitsLeavesTheOperatorsLine) {
    start({});
    env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "12");
    env_->set("ORCH_KEY_BURST", "1");
    for (const int sig : {SIGINT, SIGHUP}) {
        SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGHUP");
        const auto since = now_ms();
        auto first = env_->spawn({"accounts", "sync"});  // takes the next place
        ASSERT_EQ(first->wait(30'000), 0) << first->log();
        // The next place frees 5 s after the first's: the second waits for it at the head of the
        // line, the third behind the second.
        auto second = env_->spawn({"accounts", "sync"});
        ASSERT_TRUE(says(*second, "for the API key's request rate")) << second->log();
        auto third = env_->spawn({"accounts", "sync"});
        ASSERT_TRUE(says(*third, "waiting for 1 operator command(s)")) << third->log();
        EXPECT_EQ(second->stop(sig, 10'000), -1) << "it dies by the signal, as before:\n" << second->log();
        ASSERT_EQ(third->wait(30'000), 0) << third->log();
        auto log = requests(since);
        ASSERT_EQ(log.size(), 2u);  // the interrupted command sent nothing
        // At the next place after the first's (5 s), not after the second's ticket expired (15 s
        // after it last spoke).
        EXPECT_LT(log[1].at_ms - log[0].at_ms, 11'000);
    }
}

// A signal the caller ignores stays ignored (nohup; a background job of a script ignores SIGINT):
// the command waits on and sends at its place.
TEST_F(LimitsTest, ASignalTheCallerIgnoresStaysIgnoredWhileACommandWaits) {
    start({});
    env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "12");
    env_->set("ORCH_KEY_BURST", "1");
    const auto since = now_ms();
    auto first = env_->spawn({"accounts", "sync"});
    ASSERT_EQ(first->wait(30'000), 0) << first->log();
    background_process second({"/bin/sh", "-c", "trap '' INT; exec \"$0\" accounts sync", orch::test::orchestrator_binary()},
                              env_->env());
    ASSERT_TRUE(says(second, "for the API key's request rate")) << second.log();
    ASSERT_EQ(::kill(second.pid(), SIGINT), 0);
    EXPECT_EQ(second.wait(30'000), 0) << second.log();
    EXPECT_EQ(requests(since).size(), 2u);
}

// An apply interrupted while a later page of its audience search waits says what the search had
// sent (the API bills it), and stores nothing. Before, it died without a word.
TEST_F(LimitsTest, AnApplyInterruptedBetweenSearchPagesSaysWhatItHadSent) {
    start({"--dialect-search-page-cap", "50"});
    env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "12");
    env_->set("ORCH_KEY_BURST", "1");
    auto file = dir_ + "/paged.yaml";
    std::ofstream(file) << search_campaign_yaml("paged", 100, 1'000'000);
    const auto since = now_ms();
    auto apply = env_->spawn({"campaign", "apply", file});
    ASSERT_TRUE(says(*apply, "audience search, page 2: waiting ")) << apply->log();
    EXPECT_EQ(apply->stop(SIGINT, 10'000), -1) << apply->log();
    EXPECT_NE(apply->log().find("interrupted: the audience search had sent 1 page, which the API bills; nothing "
                                "was stored"),
              std::string::npos)
        << apply->log();
    auto log = requests(since);
    ASSERT_EQ(log.size(), 1u);
    EXPECT_EQ(log[0].action, "search_people");
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM campaigns"), "0");

    // Interrupted while its first page waits (the key's rate is still spent): it says that no page
    // was sent, so nothing was billed. Before, it said nothing.
    auto again = env_->spawn({"campaign", "apply", file});
    ASSERT_TRUE(says(*again, "audience search, page 1: waiting ")) << again->log();
    EXPECT_EQ(again->stop(SIGINT, 10'000), -1) << again->log();
    EXPECT_NE(again->log().find("interrupted: the audience search had sent no page yet; nothing was stored or billed"),
              std::string::npos)
        << again->log();
    EXPECT_EQ(requests(since).size(), 1u);
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM searches_in_flight"), "0");
}
}  // namespace
