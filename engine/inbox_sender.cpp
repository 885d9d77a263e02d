#include "engine/inbox_sender.hpp"

#include "engine/lru_map.hpp"

#include "api/text.hpp"
#include "campaigns/campaigns.hpp"
#include "engine/codes.hpp"
#include "engine/executor.hpp"
#include "engine/ledger.hpp"
#include "engine/limits_gate.hpp"
#include "engine/outreach/client.hpp"
#include "engine/pg_lane_store.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include <random>
#include <thread>

namespace orch::engine {

namespace asio = boost::asio;
namespace cs = orch::campaigns;
using json = nlohmann::json;

namespace {

std::string q(std::string_view name) { return std::string(schema::query(name)); }

// One claimed reply (the columns of inbox/claim).
struct claimed_reply {
    std::int64_t id = 0;
    std::string state;
    std::int64_t attempt_id = 0;
    int tries = 0;
    std::string body;
    std::string created_at;
    std::string account;
    std::int64_t campaign_id = 0;
    std::int64_t enrollment_id = 0;
    std::string profile_url;
    int version = 0;
    std::string campaign_state;
    bool connected = false;
    std::string quotas;
    std::string time_zone;  // the account's quota day (migration 0032), "" for none
    bool dnc = false;
    std::string api_status;
};

double seconds_until(cs::time_point t) {
    auto d = std::chrono::duration<double>(t - std::chrono::system_clock::now()).count();
    return std::max(0.0, d);
}

}  // namespace

struct inbox_sender::impl {
    settings cfg;
    std::string owner;
    asio::io_context io{1};
    std::thread thread;
    std::atomic<bool> stopping{false};
    std::unique_ptr<store> db;
    std::optional<outreach::client> api;
    std::unique_ptr<limits_gate> gate;
    // (id, version): the versions manual replies were sent under lately (engine/lru_map.hpp).
    lru_map<std::pair<std::int64_t, int>, std::shared_ptr<const cs::campaign>> campaigns{64};
    seeded_random rng;
    backoff_settings backoff;
    std::shared_ptr<outage_log> database_outage;
    bool limits_differ_told = false;  // the warning of other rate-limit settings, once
    static constexpr int outage_caller = 1;  // the leader check is 0 (engine/intake.cpp)

    impl(settings s, std::string o, std::shared_ptr<outage_log> outage)
        : cfg(std::move(s)), owner(std::move(o)), database_outage(std::move(outage)) {
        backoff.base_ms = cfg.retry_base_ms;
        backoff.cap_ms = cfg.retry_cap_ms;
        backoff.reconcile_delay_ms = cfg.reconcile_delay_ms;
    }

    asio::awaitable<void> sleep_ms(std::int64_t ms) {
        asio::steady_timer t(io, std::chrono::milliseconds(ms));
        co_await t.async_wait(asio::use_awaitable);
    }

    // A failure of the sender's round: a lost database is told once per outage, with the rest of
    // `serve` (it wrote an error every few seconds while PostgreSQL was down); anything else here.
    void told(const std::exception& e) {
        if (const error err = error_of_current_exception(); err.category == error_category::unavailable) {
            database_outage->failed(outage_caller, "the inbox sender: " + err.message);
        } else {
            spdlog::error("serve: inbox sender: {}", e.what());
        }
    }

    // Builds what the sender needs; false (logged) when something is not there yet.
    bool setup() {
        try {
            if (!db || !db->connection().is_open()) {
                db = std::make_unique<store>(cfg.database_url);
                // It gates an operator's reply by its own quotas, in the workers' buckets.
                if (const auto others = name_serve_session(db->connection(), limits_fingerprint(cfg), owner);
                    others > 0 && !limits_differ_told) {
                    limits_differ_told = true;
                    spdlog::warn("{}", limits_differ_warning("serve: inbox sender", others));
                }
            }
            if (!api) {
                auto made = outreach::client::make(io.get_executor(), api_client_settings(cfg, 4));
                if (!made) {
                    spdlog::error("serve: inbox sender: bad API settings: {}", outreach::describe(made.error()));
                    return false;
                }
                api.emplace(std::move(*made));
            }
            if (!gate) {
                gate = std::make_unique<limits_gate>(limiter_settings(cfg), false);
            }
            return true;
        } catch (const std::exception& e) {
            told(e);
            db.reset();
            return false;
        }
    }

    std::shared_ptr<const cs::campaign> campaign_of(pqxx::transaction_base& tx, std::int64_t id, int version) {
        auto key = std::make_pair(id, version);
        if (auto* hit = campaigns.find(key)) {
            return *hit;
        }
        auto r = tx.exec_params(q("engine/campaign_definition"), id, version);
        if (r.empty()) {
            return nullptr;
        }
        auto c = std::make_shared<const cs::campaign>(cs::campaign_from_json(json::parse(r[0][0].as<std::string>())));
        campaigns.put(key, c);
        return c;
    }

    void set_state(pqxx::work& tx, std::int64_t id, const std::string& state, const std::string& reason,
                   double after_seconds = 0) {
        tx.exec_params(q("inbox/set_state"), id, state, reason, after_seconds);
    }

    // One due reply: claims it, makes its call and records the outcome. False: none was due.
    asio::awaitable<bool> once() {
        claimed_reply r;
        cs::api_call call;
        call_target target;
        std::shared_ptr<const cs::campaign> campaign;
        std::int64_t attempt_id = 0;
        std::int64_t reserved = 0;
        const auto now = std::chrono::system_clock::now();
        {
            pqxx::work tx(db->connection());
            auto rows = tx.exec(q("inbox/claim"));
            if (rows.empty()) {
                co_return false;
            }
            const auto& row = rows[0];
            r.id = row[0].as<std::int64_t>();
            r.state = row[1].as<std::string>();
            r.attempt_id = row[2].as<std::int64_t>();
            r.tries = row[3].as<int>();
            r.body = row[4].as<std::string>();
            r.created_at = row[5].as<std::string>();
            r.account = row[6].as<std::string>();
            r.campaign_id = row[7].as<std::int64_t>();
            r.enrollment_id = row[8].as<std::int64_t>();
            r.profile_url = row[9].as<std::string>();
            r.version = row[10].as<int>();
            r.campaign_state = row[11].as<std::string>();
            r.connected = row[12].as<bool>();
            r.quotas = row[13].as<std::string>();
            r.dnc = row[14].as<bool>();
            r.api_status = row[15].as<std::string>();
            r.time_zone = row[16].as<std::string>();
            if (r.state == "in_flight") {
                // Its sender stopped during the call: whether it was sent is unknown. The call may
                // have been charged (its reservation is posted in full); the conversation decides.
                tx.exec_params(q("inbox/lose_attempt"), r.attempt_id);
                cs::api_call lost;
                lost.kind = cs::call_kind::send;
                ledger::post(tx, {ledger::post_request(r.attempt_id, credits_upper_bound(lost))}, now);
                set_state(tx, r.id, "reconcile",
                          "the sender stopped during the call: the conversation is read before any resend");
                tx.commit();
                spdlog::warn("serve: manual reply={} was in flight when its sender stopped: reconciling", r.id);
                co_return true;
            }
            if (r.dnc) {
                set_state(tx, r.id, "refused", "the person is on the do-not-contact list");
                tx.commit();
                co_return true;
            }
            if (r.campaign_state == "cancelled") {
                set_state(tx, r.id, "refused", "the campaign is cancelled");
                tx.commit();
                co_return true;
            }
            if (!r.connected) {
                set_state(tx, r.id, "refused", "account " + r.account + " is unavailable (status " + r.api_status + ")");
                tx.commit();
                co_return true;
            }
            campaign = campaign_of(tx, r.campaign_id, r.version);
            if (!campaign) {
                set_state(tx, r.id, "failed", "the campaign's version is missing");
                tx.commit();
                co_return true;
            }
            call.kind = r.state == "reconcile" ? cs::call_kind::get_conversation : cs::call_kind::send;
            call.reconcile = r.state == "reconcile";
            call.text = r.body;
            target = {r.account, r.profile_url, r.campaign_id, r.enrollment_id, r.quotas};
            target.account_time_zone = r.time_zone;
            auto d = gate->before(target, *campaign, call, now);
            if (!d.allowed) {
                set_state(tx, r.id, r.state, d.reason.rfind("waiting", 0) == 0 ? d.reason : "waiting: " + d.reason,
                          seconds_until(d.until));
                tx.commit();
                co_return true;
            }
            target.gate_take = d.take;
            // From here to the commit, a failure (the transaction rolls back) gives the take back:
            // no call goes out for it.
            bool given_back = false;
            try {
                attempt_id = tx.exec_params(q("engine/next_attempt_ids"), 1)[0][0].as<std::int64_t>();
                reserved = credits_upper_bound(call);
                // The intent row first: the ledger's transfer refers to it.
                tx.exec_params(q("inbox/start_call"), r.id, attempt_id, owner, lease_seconds, r.enrollment_id,
                               call.reconcile, r.body);
                ledger::reserve_request rr{attempt_id, r.campaign_id, r.account, call.reconcile ? "get_conversation" : "send",
                                           reserved};
                auto res = ledger::reserve(tx, {rr}, now);
                if (!res.front().reserved) {
                    // Not called, not billed: the intent goes (as the worker drops a refused one).
                    gate->released(target, *campaign, call);
                    given_back = true;
                    tx.exec_params("UPDATE manual_replies SET attempt_id = NULL, tries = tries - 1 WHERE reply_id = $1", r.id);
                    tx.exec_params(q("engine/drop_intents"), "[" + std::to_string(attempt_id) + "]");
                    const auto why = std::string(ledger::to_string(res.front().why));
                    if (res.front().why == ledger::refusal::day_budget) {
                        set_state(tx, r.id, r.state, "waiting for the campaign's daily budget (tomorrow, UTC)",
                                  seconds_until(res.front().retry_at));
                    } else if (res.front().why == ledger::refusal::in_flight) {
                        set_state(tx, r.id, r.state, "waiting for the campaign's calls in flight to settle",
                                  seconds_until(res.front().retry_at));
                    } else {
                        set_state(tx, r.id, "refused", "the campaign's budget cannot cover it (" + why + ")");
                    }
                    tx.commit();
                    co_return true;
                }
                tx.commit();
            } catch (...) {
                if (!given_back) {
                    gate->released(target, *campaign, call);
                }
                throw;
            }
        }
        // The call (the intent is committed).
        call_outcome o;
        bool held = false;
        if (auto until = gate->hold(target, call, std::chrono::system_clock::now())) {
            held = true;
            o.event.kind = cs::result_kind::throttled;
            o.event.retry_at = *until;
            o.attempt_outcome = attempt_outcome::transient;
            o.error = "not sent: " + gate->hold_reason(target, call, std::chrono::system_clock::now());
        } else {
            try {
                if (call.reconcile) {
                    co_await find_ours(target, r, o);
                } else {
                    client_port port(*api);
                    o = co_await execute(port, target, call, backoff, r.tries, system_clock(), rng);
                    gate->answered(target, *campaign, call, o);
                }
            } catch (...) {
                // The request may have left: its take is kept as spent, and the gate forgets it.
                call_outcome unknown;
                unknown.attempt_outcome = attempt_outcome::uncertain;
                gate->after(target, *campaign, call, unknown);
                throw;
            }
        }
        auto not_before = gate->after(target, *campaign, call, o);
        settle(r, call, o, attempt_id, reserved, held, not_before);
        co_return true;
    }

    // The reconciliation read: our text in the conversation, sent since the reply was asked for.
    asio::awaitable<void> find_ours(const call_target& target, const claimed_reply& r, call_outcome& o) {
        outreach::get_conversation_params p;
        p.profile_url = target.profile_url;
        p.count = 100;
        auto res = co_await api->get_conversation(target.account_id, p);
        o.event.call = cs::call_kind::get_conversation;
        o.event.reconcile = true;
        if (!res) {
            if (res.error().what_to_do == outreach::disposition::give_up) {
                o.event.kind = cs::result_kind::ok;  // no conversation: nothing was sent
                o.event.message_found = false;
                o.attempt_outcome = attempt_outcome::reconciled_absent;
                co_return;
            }
            o.event.kind = cs::result_kind::transient;
            o.attempt_outcome = attempt_outcome::transient;
            o.error = outreach::describe(res.error());
            o.error_code = res.error().code;
            co_return;
        }
        o.credits = res->meta.credits_consumed.value_or(0);
        o.event.kind = cs::result_kind::ok;
        // A message of ours with this text, not older than the request (with a minute of
        // clock skew): an identical earlier message is not this reply.
        auto asked = std::chrono::system_clock::now();
        {
            pqxx::nontransaction tx(db->connection());
            auto t = tx.exec_params("SELECT extract(epoch FROM created_at)::float8 FROM manual_replies WHERE reply_id = $1",
                                    r.id);
            if (!t.empty()) {
                asked = std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
                    std::chrono::duration<double>(t[0][0].as<double>())));
            }
        }
        const auto since = asked - std::chrono::minutes(1);
        o.event.message_found = std::any_of(res->messages.begin(), res->messages.end(), [&](const auto& m) {
            return m.text == r.body && m.from_me.value_or(true) && (!m.at || *m.at >= since);
        });
        o.attempt_outcome = o.event.message_found ? attempt_outcome::reconciled_present : attempt_outcome::reconciled_absent;
    }

    void settle(const claimed_reply& r, const cs::api_call& call, const call_outcome& o, std::int64_t attempt_id,
                std::int64_t reserved, bool held, std::optional<cs::time_point> not_before) {
        const auto now = std::chrono::system_clock::now();
        pqxx::work tx(db->connection());
        tx.exec_params(q("inbox/finish_attempt"), attempt_id, std::string(to_string(o.attempt_outcome)), o.error, o.credits);
        const bool ok = o.event.kind == cs::result_kind::ok;
        const bool uncertain = o.event.kind == cs::result_kind::uncertain;
        if (held || (!ok && !uncertain && o.credits == 0)) {
            ledger::void_reservations(tx, {attempt_id}, now);
        } else {
            // An uncertain call may have been charged: its whole reservation is posted.
            const auto charged = uncertain ? std::max<std::int64_t>(reserved, o.credits) : o.credits;
            ledger::post(tx, {ledger::post_request(attempt_id, charged, r.campaign_id, r.account, "send")}, now);
            tx.exec_params(q("inbox/add_credits"), r.id, charged);
        }
        auto retry = [&] {
            auto at = std::max(o.event.retry_at, not_before.value_or(cs::time_point{}));
            if (at <= now) {
                at = now + backoff_delay(backoff, r.tries, rng);
            }
            return seconds_until(at);
        };
        const std::string back = call.reconcile ? "reconcile" : "queued";
        if (ok && call.reconcile) {
            if (o.event.message_found) {
                set_state(tx, r.id, "sent", "confirmed by reading the conversation after an uncertain send");
            } else {
                set_state(tx, r.id, "queued", "not found in the conversation after an uncertain send: sending again");
            }
        } else if (ok) {
            set_state(tx, r.id, "sent", "");
        } else if (uncertain) {
            set_state(tx, r.id, "reconcile", "the outcome is unknown (" + o.error + "): the conversation is read first",
                      retry());
        } else if (o.event.kind == cs::result_kind::permanent) {
            set_state(tx, r.id, "failed", o.error);
        } else if (r.tries + 1 >= max_tries && !held && o.event.kind != cs::result_kind::throttled) {
            set_state(tx, r.id, "failed", "gave up after " + std::to_string(r.tries + 1) + " tries: " + o.error);
        } else {
            set_state(tx, r.id, back, "waiting: " + o.error, retry());
        }
        tx.commit();
        spdlog::info("serve: manual reply={} account={} {}: {}", r.id, orch::text::escaped(r.account),
                     call.reconcile ? "reconciliation" : "send", to_string(o.attempt_outcome));
    }

    asio::awaitable<void> loop() {
        while (!stopping) {
            if (!setup()) {
                co_await sleep_ms(3000);
                continue;
            }
            bool worked = false;
            bool failed = false;
            try {
                worked = co_await once();
                database_outage->succeeded(outage_caller);
            } catch (const std::exception& e) {
                told(e);
                if (db && !db->connection().is_open()) {
                    db.reset();
                }
                failed = true;
            }
            if (failed) {
                co_await sleep_ms(1000);
            } else if (!worked) {
                co_await sleep_ms(250);
            }
        }
    }
};

inbox_sender::inbox_sender(settings s, std::string owner, std::shared_ptr<outage_log> database_outage)
    : impl_(std::make_unique<impl>(std::move(s), std::move(owner), std::move(database_outage))) {}

inbox_sender::~inbox_sender() { stop(); }

void inbox_sender::start() {
    if (impl_->thread.joinable()) {
        return;
    }
    auto* m = impl_.get();
    asio::co_spawn(m->io, m->loop(), asio::detached);
    m->thread = std::thread([m] { m->io.run(); });
}

void inbox_sender::stop() {
    auto* m = impl_.get();
    m->stopping = true;
    m->io.stop();
    if (m->thread.joinable()) {
        m->thread.join();
    }
}

}  // namespace orch::engine
