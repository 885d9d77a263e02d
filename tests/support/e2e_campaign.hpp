// Shared pieces of the end-to-end campaign tests: the canonical campaign file, a search audience,
// and the truth of what was sent, read from the sandbox's side-effect record.
#pragma once

#include "tests/support/http_client.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace orch::test {

inline std::string campaign_yaml(const std::string& name, const std::string& audience, const std::string& wait,
                          const std::vector<std::string>& accounts) {
    std::string acc;
    for (const auto& a : accounts) {
        acc += (acc.empty() ? "" : ", ") + a;
    }
    return "name: " + name + "\naccounts: [" + acc + "]\naudience:\n" + audience +
           "schedule:\n  time_zone: UTC\n  days: [mon, tue, wed, thu, fri, sat, sun]\n  hours: \"00:00-24:00\"\n"
           "budget_credits: 1000000\nstop_on_reply: true\nsteps:\n"
           "  - id: check\n    kind: check_invitation\n    on_accepted: message\n    on_pending: wait\n"
           "    on_no_invitation: invite\n"
           "  - id: invite\n    kind: invite\n    note: \"Hi {{first_name}}, let's connect.\"\n"
           "  - id: wait\n    kind: wait_accepted\n    timeout: " + wait + "\n    next: message\n    on_timeout: end\n"
           "  - id: message\n    kind: send\n    variants:\n"
           "      - name: A\n        message_text: \"Thanks {{first_name}}, open to a chat?\"\n"
           "      - name: B\n        message_text: \"Great to connect, {{first_name}}. A short call?\"\n";
}

inline std::string search_audience(int n) {
    return "  search:\n    title: Engineer\n  total_results: " + std::to_string(n) + "\n";
}

struct side_effects {
    int invited_people = 0;       // invitations actually sent
    int duplicate_invites = 0;    // sent more than once to the same person by the same account
    // invite requests beyond the first for the same (account, person), whether the sandbox took
    // them or refused them as already pending: a second request is a second attempt to contact
    int duplicate_invite_requests = 0;
    int accepted = 0;
    // invite requests refused because the account and the person are connected already (the
    // sandbox seeds each new account with connections): the orchestrator finds them accepted
    int already_connected = 0;
    int messages = 0;
    int duplicate_messages = 0;   // same account, same person, same text twice
    std::map<std::string, int> invites_per_person;  // across accounts
};

inline side_effects read_side_effects(unsigned short control_port) {
    http_client c("127.0.0.1", control_port);
    auto j = c.get("/control/side-effects").body_json();
    side_effects s;
    for (const auto& inv : j["invitations"]) {
        if (inv["sent"].get<int>() > 0) {
            ++s.invited_people;
            s.invites_per_person[inv["profile_url"].get<std::string>()] += inv["sent"].get<int>();
        }
        s.duplicate_invites += inv["sent"].get<int>() > 1 ? 1 : 0;
        s.duplicate_invite_requests += std::max(0, inv["requests"].get<int>() - 1);
        s.accepted += inv["outcome"] == "accepted" ? 1 : 0;
        s.already_connected += inv["outcome"] == "refused: already connected" ? 1 : 0;
    }
    std::set<std::string> seen;
    for (const auto& m : j["messages"]) {
        if (m.value("kind", "") != "" && m.value("kind", "") != "network") {
            continue;
        }
        ++s.messages;
        auto key = m["account_id"].get<std::string>() + "|" + m["profile_url"].get<std::string>() + "|" +
                   m["text"].get<std::string>();
        s.duplicate_messages += seen.insert(key).second ? 0 : 1;
    }
    return s;
}

// A test with a temporary folder, a sandbox, an orchestrator database of its own and three
// connected sender accounts labelled sender-1..3 (after start()).
class campaign_fixture : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        char tmpl[] = "/tmp/orch-e2e-XXXXXX";
        dir_ = ::mkdtemp(tmpl);
    }
    void TearDown() override {
        if (!dir_.empty()) {
            std::filesystem::remove_all(dir_);
        }
    }

    void start(std::vector<std::string> sandbox_flags) {
        sandbox_ = std::make_unique<sandbox_process>(std::move(sandbox_flags));
        env_ = std::make_unique<orchestrator_env>(sandbox_->port());
        for (int i = 1; i <= 3; ++i) {
            auto r = env_->run({"accounts", "connect", "--login-token", "token-" + std::to_string(i), "--country", "FR",
                                "--label", "sender-" + std::to_string(i)});
            ASSERT_EQ(r.exit_code, 0) << r.output;
        }
    }

    std::string write(const std::string& name, const std::string& text) {
        auto path = dir_ + "/" + name;
        std::ofstream(path) << text;
        return path;
    }

    std::string dir_;
    std::unique_ptr<sandbox_process> sandbox_;
    std::unique_ptr<orchestrator_env> env_;
};

}  // namespace orch::test
