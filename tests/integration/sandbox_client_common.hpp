// Shared by the sandbox_client_*_test programs: an io_context with an outreach::client pointed
// at a sandbox process, a way to run one call to completion, and control-interface helpers.
#pragma once

#include "engine/outreach/client.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/sandbox_process.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace orch::test {

namespace outreach = orch::outreach;

struct client_fixture {
    explicit client_fixture(std::vector<std::string> args = {},
                            std::function<void(outreach::client_settings&)> tweak = {})
        : sandbox(std::move(args)), control("127.0.0.1", sandbox.control_port()) {
        outreach::client_settings s;
        s.base_url = "http://127.0.0.1:" + std::to_string(sandbox.port());
        s.api_key = "test-key";
        s.pool_size = 4;
        s.connect_timeout_ms = 2'000;
        s.read_timeout_ms = 5'000;
        s.total_timeout_ms = 8'000;
        if (tweak) {
            tweak(s);
        }
        auto made = outreach::client::make(io.get_executor(), s);
        if (!made) {
            throw std::runtime_error(outreach::describe(made.error()));
        }
        api.emplace(std::move(made).value());
    }

    // Runs one call to completion on the fixture's io_context.
    template <typename T>
    T run(boost::asio::awaitable<T> aw) {
        std::optional<T> out;
        boost::asio::co_spawn(io, std::move(aw), [&](std::exception_ptr e, T v) {
            if (e) {
                std::rethrow_exception(e);
            }
            out.emplace(std::move(v));
        });
        io.restart();
        while (!out && io.run_one() > 0) {
        }
        return std::move(*out);
    }

    std::string login(const std::string& token) {
        outreach::login_params p;
        p.country = "FR";
        p.login_token = token;
        auto r = run(api->login(p));
        if (!r) {
            throw std::runtime_error(outreach::describe(r.error()));
        }
        return r->account_id;
    }

    // Profile URLs of the world's people (offset..offset+n).
    std::vector<std::string> people(int offset, int n) {
        auto j = control.get("/control/people?offset=" + std::to_string(offset) + "&limit=" + std::to_string(n))
                     .body_json();
        std::vector<std::string> out;
        for (const auto& p : j["people"]) {
            out.push_back(p["profile_url"].get<std::string>());
        }
        return out;
    }

    json settings(const json& changes) {
        auto r = control.post("/control/settings", changes);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.body_json();
    }

    // The sandbox's request log for (account, action): what actually reached the API.
    json requests_of(const std::string& account, const std::string& action) {
        return control.get("/control/requests?account_id=" + account + "&action=" + action).body_json()["requests"];
    }

    boost::asio::io_context io;
    sandbox_process sandbox;
    http_client control;
    std::optional<outreach::client> api;
};

} // namespace orch::test
