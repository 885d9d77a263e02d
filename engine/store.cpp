#include "engine/store.hpp"
#include "engine/sql_array.hpp"

#include "engine/secret_box.hpp"

#include "api/text.hpp"
#include "campaigns/machine.hpp"
#include "campaigns/model.hpp"
#include "engine/dnc.hpp"
#include "engine/ledger.hpp"
#include "schema/schema.hpp"

#include <openssl/evp.h>
#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <random>
#include <thread>

namespace orch::engine {

namespace {

std::string q(std::string_view name) { return std::string(schema::query(name)); }

// The campaign named `name` (campaigns/find: id, state, current version, its digest), its row
// locked until `tx` ends; empty when there is none. The lock is taken first, on its own
// (campaigns/lock_row says why).
pqxx::result find_campaign(pqxx::work& tx, const std::string& name) {
    if (tx.exec_params(q("campaigns/lock_row"), name).empty()) {
        return {};
    }
    return tx.exec_params(q("campaigns/find"), name);
}

std::int64_t epoch_ms(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

void detail::again_after_deadlock(std::string_view what, const std::function<void()>& once) {
    thread_local std::mt19937 rng(std::random_device{}());
    for (int attempt = 1;; ++attempt) {
        try {
            once();
            return;
        } catch (const store_error& e) {
            if (e.sqlstate != "40P01" || attempt == 3) {
                throw;
            }
            // Expected now and then, and handled: a line, not a warning on an operator's terminal.
            spdlog::info("{}: Postgres broke a deadlock with another transaction (a worker's); trying again, {} of 3",
                         what, attempt + 1);
            spdlog::debug("{}: {}", what, orch::text::escaped(e.what()));
            std::this_thread::sleep_for(std::chrono::milliseconds(
                attempt * std::uniform_int_distribution<int>(50, 150)(rng)));
        }
    }
}

void rethrow_as_store_error(std::string_view what) {
    try {
        throw;
    } catch (const pqxx::sql_error& e) {
        throw store_error(std::string(what) + ": " + e.what(), e.sqlstate());
    } catch (const pqxx::broken_connection& e) {
        throw store_error(std::string(what) + ": connection lost: " + e.what(), "08006");
    } catch (const pqxx::deadlock_detected& e) {
        // pqxx 6 derives its transaction-rollback errors from failure, not sql_error: the SQLSTATE
        // that store_error's category (contended) and the deadlock retries test is restored from the type.
        throw store_error(std::string(what) + ": " + e.what(), "40P01");
    } catch (const pqxx::serialization_failure& e) {
        throw store_error(std::string(what) + ": " + e.what(), "40001");
    } catch (const pqxx::statement_completion_unknown& e) {
        throw store_error(std::string(what) + ": " + e.what(), "40003");
    } catch (const pqxx::transaction_rollback& e) {
        throw store_error(std::string(what) + ": " + e.what(), "40000");
    } catch (const pqxx::failure& e) {
        throw store_error(std::string(what) + ": " + e.what());
    }
}

error error_of_current_exception() {
    try {
        try {
            throw;
        } catch (const failure& f) {
            return f.as_error();
        } catch (const pqxx::failure&) {
            // libpqxx's types as store_error's SQLSTATE (pqxx 6 derives its transaction-rollback
            // errors from failure, not sql_error: their state comes from the type).
            rethrow_as_store_error("database");
        }
    } catch (const store_error& e) {
        return e.as_error();
    } catch (const std::exception& e) {
        return {error_category::internal, e.what()};
    } catch (...) {
        return {error_category::internal, "an exception of an unknown type"};
    }
    return {error_category::internal, "an exception of an unknown type"};
}

store::store(const std::string& database_url) {
    guarded("connect", [&] {
        try {
            conn_ = std::make_unique<pqxx::connection>(database_url);
        } catch (const pqxx::broken_connection& e) {
            // No connection was made, so none was lost: the setting is named (not its value,
            // which may hold a password).
            throw store_error(std::string("cannot connect to the database of the database_url setting: ") + e.what(),
                              "08006");
        }
        return 0;
    });
}

store::~store() = default;

int store::current_version() {
    return guarded("migrate/current", [&] {
        pqxx::nontransaction tx(*conn_);
        try {
            auto r = tx.exec(q("migrate/current"));
            return r.empty() ? 0 : r[0][0].as<int>();
        } catch (const pqxx::undefined_table&) {
            // An empty database: Postgres resolves the query's table before its WHERE, so the
            // query cannot say 0 itself. Version 0 makes require_current say to run migrate.
            return 0;
        }
    });
}

std::vector<int> store::migrate() {
    return guarded("migrate", [&] {
        std::vector<int> applied_now;
        {
            pqxx::work tx(*conn_);
            tx.exec(q("migrate/lock"));
            tx.exec(q("migrate/ensure_table"));
            tx.commit();
        }
        for (const auto& m : schema::migrations()) {
            pqxx::work tx(*conn_);
            tx.exec(q("migrate/lock"));
            bool done = false;
            for (const auto& row : tx.exec(q("migrate/applied"))) {
                done = done || row[0].as<int>() == m.version;
            }
            if (done) {
                continue;
            }
            tx.exec(std::string(m.sql));
            tx.exec_params(q("migrate/record"), m.version, std::string(m.name));
            tx.commit();
            applied_now.push_back(m.version);
        }
        return applied_now;
    });
}

void store::require_current() {
    int have = current_version();
    int want = schema::latest_version();
    if (have < want) {
        throw store_error("the database schema is at version " + std::to_string(have) + ", this binary needs " +
                          std::to_string(want) + ": run `orchestrator migrate` first");
    }
    if (have > want) {
        throw store_error("the database schema is at version " + std::to_string(have) +
                          ", newer than this binary knows (" + std::to_string(want) + "): upgrade the orchestrator");
    }
}

namespace {

// account_unavailable once the account is marked: parks its live enrollments and moves those of
// `reassign` campaigns.
std::int64_t move_off_unavailable(pqxx::work& tx, const std::string& account_id, const std::string& api_status) {
    tx.exec_params(q("engine/park_account"), account_id);
    // Greedy least-loaded choice among each lead's candidates, counting the moves made so far.
    std::map<std::string, std::int64_t> load;
    json moves = json::array();
    for (const auto& r : tx.exec_params(q("engine/reassignable"), account_id)) {
        auto candidates = json::parse(r[1].as<std::string>());
        if (candidates.empty()) {
            continue;  // no other connected sender: the lead waits for this one
        }
        for (const auto& c : candidates) {
            if (!load.contains(c.get<std::string>())) {
                auto n = tx.exec_params(q("campaigns/account_load"), json::array({c}).dump());
                load[c.get<std::string>()] = n[0][1].as<std::int64_t>();
            }
        }
        std::string best;
        for (const auto& c : candidates) {
            const auto& id = c.get_ref<const std::string&>();
            if (best.empty() || load[id] < load[best]) {
                best = id;
            }
        }
        ++load[best];
        moves.push_back({{"enrollment_id", r[0].as<std::int64_t>()}, {"account_id", best}});
    }
    if (moves.empty()) {
        return 0;
    }
    tx.exec_params(q("engine/reassign"), moves.dump());
    tx.exec(q("engine/notify_wake"));
    spdlog::info("account {} unavailable ({}): {} leads moved to other senders", orch::text::escaped(account_id),
                 orch::text::escaped(api_status), moves.size());
    return static_cast<std::int64_t>(moves.size());
}

}  // namespace

std::int64_t account_unavailable(pqxx::work& tx, const std::string& account_id, const std::string& api_status) {
    tx.exec_params(q("accounts/set_connected"), account_id, false, api_status);
    return move_off_unavailable(tx, account_id, api_status);
}

std::optional<unavailable_marking> account_unavailable_if_login(pqxx::work& tx, const std::string& account_id,
                                                                const std::string& api_status,
                                                                const std::set<std::int64_t>& logins) {
    const auto marked =
        tx.exec_params(q("accounts/set_unavailable_if_login"), account_id, api_status, sql_array::of(logins));
    if (marked.empty()) {
        return std::nullopt;
    }
    // Parked again even when it already was: this call's rows were `calling` when it was.
    return unavailable_marking{marked[0][0].as<bool>(), move_off_unavailable(tx, account_id, api_status)};
}

void account_available(pqxx::work& tx, const std::string& account_id, const std::string& api_status) {
    tx.exec_params(q("accounts/set_connected"), account_id, true, api_status);
    tx.exec_params(q("engine/unpark"), 0, account_id);
    tx.exec(q("engine/notify_wake"));
}

bool pause_campaign(pqxx::work& tx, std::int64_t campaign_id, const std::string& reason) {
    if (tx.exec_params(q("engine/pause_campaign"), campaign_id, reason).affected_rows() == 0) {
        return false;
    }
    tx.exec_params(q("engine/park_campaign"), campaign_id);
    return true;
}

std::int64_t pause_for_credits(pqxx::work& tx, const std::string& why) {
    std::int64_t n = 0;
    for (const auto& r : tx.exec_params(q("credits/pause_all"), "credits: " + why)) {
        tx.exec_params(q("engine/park_campaign"), r[0].as<std::int64_t>());
        ++n;
    }
    return n;
}

store::audience_skips store::estimate_skips(const std::string& name,
                                           const std::vector<std::map<std::string, std::string>>& leads,
                                           const campaigns::campaign::exclusions& exclude) {
    std::set<std::string> urls, companies;
    for (const auto& u : exclude.profile_urls) {
        urls.insert(canonical_profile_url(u));
    }
    for (const auto& c : exclude.companies) {
        companies.insert(dnc::company_key(c));
    }
    audience_skips out;
    json rows = json::array();
    for (const auto& l : leads) {
        const auto url = canonical_profile_url(l.at("profile_url"));
        const auto company = l.contains("company") ? dnc::company_key(l.at("company")) : std::string();
        if (urls.contains(url) || (!company.empty() && companies.contains(company))) {
            ++out.excluded;
            continue;
        }
        rows.push_back({{"url", url}, {"company", company}});
    }
    return guarded("campaigns/estimate_skips", [&] {
        pqxx::read_transaction tx(*conn_);
        const auto r = tx.exec_params1(q("campaigns/estimate_skips"), name, rows.dump());
        out.do_not_contact = r[0].as<std::int64_t>();
        out.elsewhere = r[1].as<std::int64_t>();
        out.already = r[2].as<std::int64_t>();
        return out;
    });
}

std::vector<std::string> store::pause_ended_campaigns() {
    return guarded("campaigns/pause_ended", [&] {
        pqxx::work tx(*conn_);
        std::vector<std::string> names;
        for (const auto& r : tx.exec(q("campaigns/pause_ended"))) {
            tx.exec_params(q("engine/park_campaign"), r[0].as<std::int64_t>());
            names.push_back(r[1].as<std::string>());
        }
        tx.commit();
        return names;
    });
}

std::int64_t store::campaigns_paused_for_credits() {
    return guarded("credits/paused_count", [&] {
        pqxx::read_transaction tx(*conn_);
        return tx.exec(q("credits/paused_count"))[0][0].as<std::int64_t>();
    });
}

store::credit_read store::record_credit_read(std::int64_t balance, std::int64_t monitoring_credits_per_day) {
    return guarded("credits/record_read", [&] {
        pqxx::work tx(*conn_);
        credit_read out;
        auto read = tx.exec_params1(q("credits/record_read"), balance, monitoring_credits_per_day);
        out.drift = read[0].as<std::int64_t>();
        out.monitoring = read[1].as<std::int64_t>();
        out.unexplained = read[2].as<std::int64_t>();
        out.added = read[3].as<std::int64_t>();
        if (balance > 0) {
            for (const auto& r : tx.exec(q("credits/resume"))) {
                tx.exec_params(q("engine/unpark"), r[0].as<std::int64_t>(), std::string());
                ++out.resumed;
            }
            if (out.resumed > 0) {
                tx.exec(q("engine/notify_wake"));
            }
        }
        // The campaign lifecycle's safety net (migration 0017): active campaigns with nothing live.
        out.completed = tx.exec(q("campaigns/complete_idle"))[0][0].as<std::int64_t>();
        tx.commit();
        return out;
    });
}

void store::record_monitoring_day(const std::vector<std::string>& account_ids) {
    guarded("credits/monitoring_day", [&] {
        pqxx::work tx(*conn_);
        tx.exec_params(q("credits/monitoring_day"), json(account_ids).dump());
        tx.commit();
    });
}

std::int64_t store::begin_search_in_flight() {
    return guarded("credits/search_begin", [&] {
        pqxx::work tx(*conn_);
        const auto id = tx.exec(q("credits/search_begin"))[0][0].as<std::int64_t>();
        tx.commit();
        return id;
    });
}

void store::hold_search_in_flight(std::int64_t search_id, std::int64_t credits) {
    guarded("credits/search_hold", [&] {
        pqxx::work tx(*conn_);
        tx.exec_params(q("credits/search_hold"), search_id, credits);
        tx.commit();
    });
}

void store::end_search_in_flight(std::int64_t search_id) {
    guarded("credits/search_end", [&] {
        pqxx::work tx(*conn_);
        tx.exec_params(q("credits/search_end"), search_id);
        tx.commit();
    });
}

void store::upsert_account(const account_row& a) {
    guarded("accounts/upsert", [&] {
        pqxx::work tx(*conn_);
        tx.exec_params(q("accounts/upsert"), a.account_id, a.platform, a.api_status, a.connected, a.display_name,
                       a.label);
        if (a.connected) {
            account_available(tx, a.account_id, a.api_status);
        } else {
            account_unavailable(tx, a.account_id, a.api_status);
        }
        tx.commit();
        return 0;
    });
}

std::vector<account_row> store::accounts() {
    return guarded("accounts/list", [&] {
        pqxx::nontransaction tx(*conn_);
        std::vector<account_row> out;
        for (const auto& r : tx.exec(q("accounts/list"))) {
            out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<bool>(),
                           r[4].as<std::string>(), r[5].as<std::string>(), r[6].as<std::string>(),
                           r[7].as<std::string>(), r[8].as<std::string>(), {}, r[10].as<std::string>()});
            std::string error;
            if (auto quotas = parse_overrides(r[9].as<std::string>(), error); quotas) {
                out.back().quotas = *quotas;
            } else {
                // The CHECK of migration 0007 keeps this out; never fail a listing over it.
                spdlog::error("store: account={} quotas ignored: {}", orch::text::escaped(out.back().account_id),
                              orch::text::escaped(error));
            }
        }
        return out;
    });
}

store::quota_change store::change_account_quotas(const std::string& id_or_label, const quota_change_fn& change,
                                                 const std::optional<std::string>& time_zone) {
    return guarded("accounts/set_quotas", [&] {
        quota_change out;
        pqxx::work tx(*conn_);
        auto r = tx.exec_params(q("accounts/lock_quotas"), id_or_label);
        if (r.empty()) {
            return out;
        }
        out.found = true;
        out.account_id = r[0][0].as<std::string>();
        auto current = parse_overrides(r[0][1].as<std::string>(), out.error);
        if (!current) {
            out.error = "the stored quotas of account " + out.account_id + " are unreadable: " + out.error;
            return out;
        }
        out.quotas = *current;
        out.time_zone = out.previous_time_zone = r[0][2].as<std::string>();
        auto next = change(*current, out.error);
        if (!next) {
            return out;  // refused: the transaction rolls back
        }
        const bool quotas_changed = *next != *current;
        const bool zone_changed = time_zone && *time_zone != out.time_zone;
        out.changed = quotas_changed || zone_changed;
        out.quotas = *next;
        if (out.changed) {
            if (quotas_changed) {
                const std::string text = no_overrides(*next) ? std::string() : to_json(*next).dump();
                tx.exec_params(q("accounts/set_quotas"), out.account_id, text);
            }
            if (zone_changed) {
                tx.exec_params(q("accounts/set_time_zone"), out.account_id, *time_zone);
                out.time_zone = *time_zone;
            }
            std::vector<std::int64_t> woken;
            for (const auto& r : tx.exec_params(q("accounts/wake_quota_waiters"), out.account_id)) {
                woken.push_back(r[0].as<std::int64_t>());
            }
            // An operator's replies held by the old numbers are asked again too (they waited for
            // the quota day's end, a trial).
            tx.exec_params(q("inbox/wake_account"), out.account_id);
            if (!woken.empty()) {
                tx.exec(q("engine/notify_wake"));
            }
            tx.commit();
            wake_after_lanes("accounts/wake_quota_waiters", out.account_id, woken);
            out.woken = static_cast<std::int64_t>(woken.size());
        }
        return out;
    });
}

std::optional<store::resolved_account> store::resolve_account(const std::string& id_or_label) {
    return resolve_account(*conn_, id_or_label);
}

std::optional<store::resolved_account> store::resolve_account(pqxx::connection& conn, const std::string& id_or_label) {
    return guarded("accounts/resolve", [&]() -> std::optional<resolved_account> {
        pqxx::nontransaction tx(conn);
        auto r = tx.exec_params(q("accounts/resolve"), id_or_label);
        if (r.empty()) {
            return std::nullopt;
        }
        return resolved_account{r[0][0].as<std::string>(), r[0][1].as<bool>()};
    });
}

void store::set_account_connected(const std::string& account_id, bool connected, const std::string& api_status) {
    guarded("accounts/set_connected", [&] {
        pqxx::work tx(*conn_);
        if (connected) {
            account_available(tx, account_id, api_status);
        } else {
            account_unavailable(tx, account_id, api_status);
        }
        tx.commit();
        return 0;
    });
}

bool store::account_disconnected(const std::string& account_id, const std::string& api_status,
                                 std::optional<std::chrono::system_clock::time_point> at) {
    return guarded("accounts/disconnected", [&] {
        pqxx::work tx(*conn_);
        if (at) {
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at->time_since_epoch()).count();
            auto r = tx.exec_params(q("accounts/connected_after"), account_id, ms);
            if (!r.empty() && !r[0][0].is_null() && r[0][0].as<bool>()) {
                return false;  // it logged in again after the event
            }
        }
        account_unavailable(tx, account_id, api_status);
        tx.commit();
        return true;
    });
}

void store::set_account_webhook(const std::string& account_id, const std::string& webhook_id) {
    guarded("accounts/set_webhook", [&] {
        pqxx::work tx(*conn_);
        tx.exec_params(q("accounts/set_webhook"), account_id, webhook_id);
        tx.commit();
        return 0;
    });
}

void store::set_account_last_event(const std::string& account_id, const std::string& event_id) {
    guarded("accounts/set_last_event", [&] {
        pqxx::work tx(*conn_);
        tx.exec_params(q("accounts/set_last_event"), account_id, event_id);
        tx.commit();
        return 0;
    });
}

namespace {

// Least-loaded assignment: each new lead goes to the sender with the fewest live enrollments
// (across campaigns), ties broken by the campaign file's order; to a connected sender while the
// campaign has one (a disconnected one's leads would only wait for it).
std::vector<std::string> assign_senders(pqxx::work& tx, const std::vector<std::string>& accounts_given, std::size_t n) {
    std::map<std::string, std::int64_t> load;
    std::set<std::string> connected;
    for (const auto& r : tx.exec_params(q("campaigns/account_load"), json(accounts_given).dump())) {
        load[r[0].as<std::string>()] = r[1].as<std::int64_t>();
        if (r[2].as<bool>()) {
            connected.insert(r[0].as<std::string>());
        }
    }
    std::vector<std::string> accounts;
    for (const auto& a : accounts_given) {
        if (connected.contains(a)) {
            accounts.push_back(a);
        }
    }
    if (accounts.empty()) {
        accounts = accounts_given;
    }
    std::vector<std::string> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string* best = &accounts.front();
        for (const auto& a : accounts) {
            if (load[a] < load[*best]) {
                best = &a;
            }
        }
        out.push_back(*best);
        ++load[*best];
    }
    return out;
}

std::optional<std::int64_t> optional_field(const json& j, const char* key) {
    return j.contains(key) ? std::optional<std::int64_t>(j.at(key).get<std::int64_t>()) : std::nullopt;
}

std::string cap_text(const std::optional<std::int64_t>& cap) { return cap ? std::to_string(*cap) : "none"; }

// The budget a campaign definition gives (budget_credits and the optional caps).
ledger::budget file_budget(const json& canonical) {
    return {canonical.value("budget_credits", std::int64_t{0}), optional_field(canonical, "budget_per_account_credits"),
            optional_field(canonical, "budget_per_day_credits")};
}


}  // namespace

bool file_changes_budget(const std::optional<ledger::budget>& previous, const ledger::budget& wanted) {
    return !previous || *previous != wanted;
}

budget_set_outcome set_campaign_budget(pqxx::work& tx, std::int64_t campaign_id, std::int64_t total,
                                       std::optional<std::int64_t> per_day, std::optional<std::int64_t> per_account,
                                       std::chrono::system_clock::time_point now) {
    budget_set_outcome out;
    out.campaign_id = campaign_id;
    out.total = total;
    out.per_day = per_day;
    out.per_account = per_account;
    auto change = ledger::set_budget(tx, campaign_id, ledger::budget{total, per_account, per_day}, now);
    out.available = change.available;
    out.resumed = change.resumed;
    if (change.resumed) {
        // Paused for its budget and now covered again: its parked leads wake.
        tx.exec_params(q("engine/unpark"), campaign_id, std::string());
    }
    for (const auto& r : tx.exec_params(q("engine/wake_budget_waits"), campaign_id)) {
        out.woken_leads.push_back(r[0].as<std::int64_t>());
    }
    out.woken = static_cast<std::int64_t>(out.woken_leads.size());
    tx.exec_params(q("inbox/wake_campaign"), campaign_id);  // the operator's replies it held
    if (out.resumed || out.woken > 0) {
        tx.exec(q("engine/notify_wake"));
    }
    return out;
}

json cap_use_json(pqxx::transaction_base& tx, std::int64_t campaign_id, std::optional<std::int64_t> per_day,
                  std::optional<std::int64_t> per_account, std::chrono::system_clock::time_point now) {
    json today = nullptr;
    if (per_day) {
        today = {{"day", ledger::utc_day(now)}, {"per_day", *per_day}, {"reserved", 0}, {"spent", 0},
                 {"available", *per_day}};
    }
    json accounts = json::array();
    for (const auto& u : ledger::cap_use(tx, campaign_id, now)) {
        if (u.scope == "day" && per_day) {
            today["reserved"] = u.reserved;
            today["spent"] = u.spent;
            today["available"] = u.available;
        } else if (u.scope == "account" && per_account) {
            accounts.push_back({{"account", u.key}, {"per_account", *per_account}, {"reserved", u.reserved},
                                {"spent", u.spent}, {"available", u.available},
                                {"over", std::max<std::int64_t>(u.reserved + u.spent - *per_account, 0)}});
        }
    }
    if (per_day) {
        // How far the day went past its cap: an audience search's price is known only after it.
        today["over"] = std::max<std::int64_t>(today["reserved"].get<std::int64_t>() + today["spent"].get<std::int64_t>() - *per_day, 0);
    }
    return {{"today", std::move(today)}, {"accounts", std::move(accounts)}};
}

std::string day_cap_use_text(const json& today) {
    const std::int64_t used = today.value("reserved", std::int64_t{0}) + today.value("spent", std::int64_t{0});
    const std::int64_t cap = today.value("per_day", std::int64_t{0});
    std::string text = std::to_string(used) + " used, " + std::to_string(today.value("available", std::int64_t{0})) + " left";
    if (used > cap) {
        text += ", " + std::to_string(used - cap) + " over the cap";
    }
    return text;
}

json spend_json(pqxx::transaction_base& tx, std::int64_t campaign_id) {
    static const std::vector<std::pair<const char*, ledger::dimension>> dims = {
        {"action", ledger::dimension::action}, {"account", ledger::dimension::account}, {"day", ledger::dimension::day}};
    json spend = json::object();
    for (const auto& [dim, by] : dims) {
        json list = json::array();
        for (const auto& r : ledger::spend(tx, campaign_id, by)) {
            list.push_back({{dim, r.key}, {"calls", r.calls}, {"pending", r.pending}, {"posted_calls", r.posted_calls},
                            {"voided", r.voided}, {"reserved_pending", r.reserved_pending},
                            {"reserved_posted", r.reserved_posted}, {"posted", r.posted}});
        }
        spend[std::string("by_") + dim] = std::move(list);
    }
    return spend;
}

std::optional<budget_set_outcome> store::update_campaign_budget(const std::string& name, const budget_update& u,
                                                                std::chrono::system_clock::time_point now) {
    auto negative = [](const auto& v) { return v && *v && **v < 0; };
    if ((u.credits && *u.credits < 0) || negative(u.per_day) || negative(u.per_account)) {
        throw budget_update_error("budgets cannot be negative");
    }
    constexpr std::int64_t credits_max = budget_update::credits_max;
    auto above = [](const auto& v) { return v && *v && **v > credits_max; };
    if ((u.credits && *u.credits > credits_max) || above(u.per_day) || above(u.per_account)) {
        throw budget_update_error("a budget or cap cannot be above " + std::to_string(credits_max) + " credits");
    }
    return again_after_deadlock("budget set", [&] { return set_budget_once(name, u, now); });
}

std::optional<budget_set_outcome> store::set_budget_once(const std::string& name, const budget_update& u,
                                                         std::chrono::system_clock::time_point now) {
    return guarded("campaigns/set_budget", [&]() -> std::optional<budget_set_outcome> {
        pqxx::work tx(*conn_);
        // find locks the campaign's row (FOR NO KEY UPDATE), as apply does: a concurrent apply of its
        // file and this change are ordered, so neither undoes half of the other.
        auto found = find_campaign(tx, name);
        if (found.empty()) {
            return std::nullopt;
        }
        auto campaign_id = found[0][0].as<std::int64_t>();
        if (found[0][1].as<std::string>() == "cancelled") {
            // Nothing of it runs again (an apply of a cancelled campaign is refused): a budget set
            // here would change nothing, and its note that the next apply keeps it misled.
            throw budget_update_error("campaign '" + orch::text::escaped(name) +
                                      "' is cancelled: nothing of it runs again, so its budget cannot change");
        }
        ledger::budget b = ledger::get_budget(tx, campaign_id).value_or(ledger::budget{});
        if (u.credits) {
            b.total = *u.credits;
        }
        if (u.per_day) {
            b.per_day = *u.per_day;
        }
        if (u.per_account) {
            b.per_account = *u.per_account;
        }
        if ((b.per_day && *b.per_day > b.total) || (b.per_account && *b.per_account > b.total)) {
            throw budget_update_error("a cap cannot be above the budget (" + orch::text::counted(b.total, "credit", "credits") +
                                      "; per day " + cap_text(b.per_day) + ", per account " +
                                      cap_text(b.per_account) + ")");
        }
        auto out = set_campaign_budget(tx, campaign_id, b.total, b.per_day, b.per_account, now);
        for (const auto& row : ledger::campaign_budgets(tx, name)) {
            out.committed = row.spent + row.reserved;
        }
        if (b.per_day || b.per_account) {
            auto use = cap_use_json(tx, campaign_id, b.per_day, b.per_account, now);
            out.today = std::move(use["today"]);
            out.accounts = std::move(use["accounts"]);
        }
        tx.commit();
        wake_after_lanes("engine/wake_budget_waits", std::to_string(campaign_id), out.woken_leads);
        out.woken = static_cast<std::int64_t>(out.woken_leads.size());
        return out;
    });
}

// A lane transaction reads a campaign's budget caps and its leads' accounts' quotas, and writes the
// waits they cause (a lead refused by a day or per-account cap, or denied by a day or week quota,
// waits for the next day). One that read the old caps or quotas before a change committed may write
// such a wait after the change's own wake-up ran: that wake-up saw the lead's row still due, not
// waiting, and a lead held back by a cap or quota the operator had just raised or removed waited
// until its next midnight (a clean-clone run hit this once). After the change commits, this waits
// for every lane transaction that began before it (each holds engine/lane_enter's shared lock;
// engine/await_lanes takes it exclusively) and runs the wake-up `query` again for `id`. Lane
// transactions that begin later read the new numbers. The wait is bounded: past it (or on any
// database error here) the change stands and such a lead waits for its next day, as it would
// have, and a warning says so.
void store::wake_after_lanes(std::string_view query, const std::string& id, std::vector<std::int64_t>& woken) {
    try {
        pqxx::work tx(*conn_);
        tx.exec(q("engine/await_lanes"));
        const auto rows = tx.exec_params(q(query), id);
        if (!rows.empty()) {
            tx.exec(q("engine/notify_wake"));
        }
        tx.commit();
        const std::set<std::int64_t> before(woken.begin(), woken.end());
        for (const auto& r : rows) {
            if (const auto lead = r[0].as<std::int64_t>(); !before.contains(lead)) {
                woken.push_back(lead);
            }
        }
    } catch (const pqxx::failure& e) {
        // The change has committed: a failure here is no failure of it, only of its second look.
        if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e); sql != nullptr && sql->sqlstate() == "55P03") {
            spdlog::warn("{} {}: the workers' transactions did not end within 10 s; the change stands, and a "
                         "lead a worker held back under the old numbers just now waits for its next day",
                         query, id);
        } else {
            spdlog::warn("{} {}: the change stands, but its second wake-up failed ({}); a lead a worker held back "
                         "under the old numbers just now waits for its next day",
                         query, id, orch::text::escaped(e.what()));
        }
    }
}

namespace {

// Where a new lead starts, as the state machine enters the first step (campaigns::initial_state):
// its step and status, and how long after the lead's start it is due, an opening delay's
// duration (a lead at an opening delay was due at once, and the delay skipped). A definition
// without steps (the store's own tests), or whose first step ends the lead at once, starts at
// `first_step`, ready at once: the worker ends it as any lead, with its finish time.
struct entry_point {
    std::string step;
    std::string status = "ready";
    std::chrono::milliseconds delay{0};
};
entry_point entry_of(const json& canonical, const std::string& first_step) {
    if (!canonical.contains("steps")) {
        return {first_step};
    }
    const campaigns::time_point origin{};
    const auto init = campaigns::initial_state(campaigns::campaign_from_json(canonical), origin);
    if (init.st != campaigns::status::ready && init.st != campaigns::status::waiting) {
        return {first_step};
    }
    return {init.step, campaigns::to_string(init.st),
            std::chrono::duration_cast<std::chrono::milliseconds>(init.next_run_at - origin)};
}

// A new version whose start_at is earlier than the last one's, or gone: the leads the old
// start_at held (at it, or at it and the opening delay) are due at the new one, or at once.
void release_start(pqxx::work& tx, std::int64_t campaign_id, const json& previous, const std::string& first_step,
                   const std::string& start, const entry_point& entry, std::chrono::system_clock::time_point now) {
    const std::string old_text = previous.value("start_at", std::string());
    if (old_text.empty()) {
        return;
    }
    std::string error;
    const auto old_start = campaigns::parse_instant(old_text, error);
    const auto new_start = start.empty() ? std::nullopt : campaigns::parse_instant(start, error);
    if (!old_start || (new_start && *new_start >= *old_start)) {
        return;
    }
    const auto base = std::max(new_start.value_or(now), now);
    const auto old_entry = entry_of(previous, first_step);
    const auto released =
        tx.exec_params(q("campaigns/release_start"), campaign_id, epoch_ms(*old_start) / 1000.0,
                       epoch_ms(*old_start + old_entry.delay) / 1000.0, epoch_ms(base) / 1000.0, entry.step,
                       static_cast<std::int64_t>(entry.delay.count()));
    if (released.affected_rows() > 0) {
        tx.exec(q("engine/notify_wake"));
    }
}

}  // namespace

apply_outcome store::apply_campaign(const std::string& name, const json& canonical, const std::string& source,
                                    const std::string& first_step, const std::vector<lead_input>& leads,
                                    const std::vector<std::string>& accounts, std::chrono::system_clock::time_point now,
                                    const apply_progress& progress, const std::optional<apply_charge>& charge,
                                    bool move_running, bool rolled_back) {
    return again_after_deadlock("campaign apply", [&] {
        return apply_once(name, canonical, source, first_step, leads, accounts, now, progress, charge, move_running,
                          rolled_back);
    });
}

apply_outcome store::apply_once(const std::string& name, const json& canonical, const std::string& source,
                                const std::string& first_step, const std::vector<lead_input>& leads,
                                const std::vector<std::string>& accounts, std::chrono::system_clock::time_point now,
                                const apply_progress& progress, const std::optional<apply_charge>& charge,
                                bool move_running, bool rolled_back) {
    const entry_point entry = entry_of(canonical, first_step);
    return guarded("campaigns/apply", [&] {
        apply_outcome out;
        std::optional<ledger::budget> previous_file_budget, live_budget;
        std::optional<json> previous_definition;
        bool budget_changed = false;
        pqxx::work tx(*conn_);
        tx.exec(q("campaigns/lock"));
        tx.exec_params(q("campaigns/lifecycle_lock"), name);
        std::string digest = sha256_hex(canonical.dump());
        auto found = find_campaign(tx, name);
        if (found.empty()) {
            out.campaign_id = tx.exec_params(q("campaigns/insert"), name)[0][0].as<std::int64_t>();
            out.version = 1;
            out.created = out.changed = true;
            tx.exec_params(q("campaigns/insert_version"), out.campaign_id, out.version, canonical.dump(), source, digest);
        } else {
            out.campaign_id = found[0][0].as<std::int64_t>();
            out.version = found[0][2].as<int>();
            if (found[0][1].as<std::string>() == "cancelled") {
                throw campaign_conflict("campaign '" + name + "' was cancelled; apply it under a new name");
            }
            if (found[0][3].as<std::string>() != digest) {
                // The budget the current version's file gave, and the live one (`budget set` may
                // have changed it since): the new version sets its own only when it changed it.
                auto prev = tx.exec_params(q("engine/campaign_definition"), out.campaign_id, out.version);
                if (!prev.empty()) {
                    previous_definition = json::parse(prev[0][0].as<std::string>());
                    previous_file_budget = file_budget(*previous_definition);
                }
                live_budget = ledger::get_budget(tx, out.campaign_id);
                ++out.version;
                out.changed = true;
                tx.exec_params(q("campaigns/insert_version"), out.campaign_id, out.version, canonical.dump(), source,
                               digest);
                tx.exec_params(q("campaigns/set_current"), out.campaign_id, out.version);
            }
        }
        if (out.changed) {
            // The file's budget (budget_credits and the optional caps; an absent cap is removed)
            // when the campaign is new or the file changed it; a new version whose budget is the
            // last one's keeps the live budget, which `budget set` may have changed. Either way,
            // a live budget that differs from the file's is said (apply_outcome::live_budget). A
            // raise resumes a campaign the ledger paused. Re-applying an unchanged file changes
            // nothing.
            const ledger::budget wanted = file_budget(canonical);
            const bool file_changed_it = file_changes_budget(previous_file_budget, wanted);
            if (live_budget && previous_file_budget && *live_budget != wanted &&
                !(file_changed_it && *live_budget == *previous_file_budget)) {
                out.live_budget = live_budget;
                out.live_budget_kept = !file_changed_it;
            }
            if (file_changed_it) {
                set_campaign_budget(tx, out.campaign_id, wanted.total, wanted.per_day, wanted.per_account, now);
                budget_changed = !out.created;
            }
            // The version's dates (migration 0017): leads wait for start_at; a campaign stopped at
            // its end_at runs again when the new one is later.
            const std::string start = canonical.value("start_at", std::string());
            tx.exec_params(q("campaigns/set_dates"), out.campaign_id, start, canonical.value("end_at", std::string()));
            if (!start.empty()) {
                tx.exec_params(q("campaigns/hold_until_start"), out.campaign_id, start, entry.step,
                               static_cast<std::int64_t>(entry.delay.count()));
            }
            if (previous_definition) {
                release_start(tx, out.campaign_id, *previous_definition, first_step, start, entry, now);
            }
            if (!tx.exec_params(q("campaigns/resume_ended"), out.campaign_id).empty()) {
                out.resumed_ended = true;
                tx.exec_params(q("engine/unpark"), out.campaign_id, std::string());
                tx.exec(q("engine/notify_wake"));
            }
        }
        // New leads start at once, or at start_at when it is later.
        auto first_run = now;
        if (auto start = canonical.value("start_at", std::string()); !start.empty()) {
            std::string error;
            if (auto t = campaigns::parse_instant(start, error); t && *t > first_run) {
                first_run = *t;
            }
        }
        const auto start_at = first_run + entry.delay;
        // The file's `exclude:` (canonical URLs, lower-cased companies): those leads are skipped at
        // enrollment, and a new version stops the live ones it newly excludes here.
        std::set<std::string> excluded_urls, excluded_companies;
        if (auto ex = canonical.find("exclude"); ex != canonical.end()) {
            for (const auto& u : ex->value("profile_urls", json::array())) {
                excluded_urls.insert(canonical_profile_url(u.get<std::string>()));
            }
            for (const auto& c : ex->value("companies", json::array())) {
                excluded_companies.insert(dnc::company_key(c.get<std::string>()));
            }
            if (out.changed) {
                const auto stopped = tx.exec_params1(q("campaigns/cancel_excluded"), out.campaign_id,
                                                     json(excluded_urls).dump(), json(excluded_companies).dump());
                out.excluded_stopped = stopped[0].as<std::int64_t>();
                out.excluded_calling = stopped[1].as<std::int64_t>();
            }
        }
        if (out.changed) {
            // The workers' copies of the campaigns' exclusions (dnc::mirror) reload on commit: a
            // lead in a call that this version excludes stops when its outcome is recorded.
            tx.exec0(std::string("NOTIFY ") + dnc::changed_channel);
        }
        // One person however often, and however spelled, the audience lists them (a search's
        // pages may repeat someone; the loader drops a file's repeats): the first one counts, and
        // no upsert names one key twice.
        std::vector<std::string> keys;
        keys.reserve(leads.size());
        for (const auto& l : leads) {
            keys.push_back(canonical_profile_url(l.profile_url));
        }
        std::set<std::string> seen;
        // In chunks (one transaction still), so a large audience shows progress and no single
        // statement carries hundreds of thousands of rows.
        constexpr std::size_t chunk = 5'000;
        auto before_skipped = tx.exec_params(q("campaigns/skipped_count"), out.campaign_id)[0][0].as<std::int64_t>();
        for (std::size_t start = 0; start < leads.size(); start += chunk) {
            const std::size_t end = std::min(leads.size(), start + chunk);
            json rows = json::array();
            for (std::size_t k = start; k < end; ++k) {
                const auto& l = leads[k];
                if (!seen.insert(keys[k]).second) {
                    continue;
                }
                rows.push_back({{"canonical_url", keys[k]},
                                {"profile_url", l.profile_url},
                                {"fields", l.fields}});
            }
            std::set<std::string> excluded;  // canonical URLs of this chunk's excluded leads
            for (std::size_t k = start; k < end && !(excluded_urls.empty() && excluded_companies.empty()); ++k) {
                const auto& url = keys[k];
                auto company = leads[k].fields.find("company");
                if (excluded_urls.contains(url) ||
                    (company != leads[k].fields.end() && company->is_string() &&
                     excluded_companies.contains(dnc::company_key(company->get<std::string>())))) {
                    excluded.insert(url);
                }
            }
            std::map<std::string, std::int64_t> ids;
            for (const auto& r : tx.exec_params(q("campaigns/upsert_leads"), rows.dump(), out.campaign_id)) {
                ids[r[1].as<std::string>()] = r[0].as<std::int64_t>();
            }
            auto senders = assign_senders(tx, accounts, ids.size());
            json enroll = json::array();
            std::size_t i = 0;
            // In the audience's order (a file's rows, a search's results): enrollment ids, and so
            // listings and the first claims, follow it.
            for (const auto& row : rows) {
                const std::string& url = row["canonical_url"].get_ref<const std::string&>();
                enroll.push_back({{"lead_id", ids.at(url)}, {"account_id", senders[i++]}, {"step", entry.step},
                                  {"status", entry.status}, {"next_run_at_ms", epoch_ms(start_at)},
                                  {"excluded", excluded.contains(url)}});
            }
            out.enrolled += static_cast<std::int64_t>(
                tx.exec_params(q("campaigns/enroll"), out.campaign_id, out.version, enroll.dump()).size());
            if (progress) {
                progress(static_cast<std::int64_t>(end), static_cast<std::int64_t>(leads.size()));
            }
        }
        out.leads = static_cast<std::int64_t>(seen.size());
        out.skipped = tx.exec_params(q("campaigns/skipped_count"), out.campaign_id)[0][0].as<std::int64_t>() - before_skipped;
        if (!excluded_companies.empty()) {
            out.excluded_companies_unmatchable =
                tx.exec_params1(q("campaigns/live_without_company"), out.campaign_id)[0].as<std::int64_t>();
        }
        if (charge) {
            // Billed whether the definition changed or not (every search sent costs), against
            // the budget just set: a posted transfer with no step attempt.
            auto c = ledger::charge(tx, {out.campaign_id, charge->sender, charge->action, charge->credits}, now);
            out.charged = c.posted;
            out.shortfall = c.shortfall;
            if (c.shortfall > 0) {
                // The budget could not cover it: the ledger paused the campaign (an active one);
                // its leads, those just enrolled too, leave the claim index as for any pause.
                auto st = tx.exec_params(q("campaigns/pause_state"), out.campaign_id);
                if (!st.empty() && st[0][0].as<bool>()) {
                    out.paused = st[0][1].as<std::string>();
                    tx.exec_params(q("engine/park_campaign"), out.campaign_id);
                }
            }
        }
        if (out.charged > 0) {
            for (const auto& u : ledger::cap_use(tx, out.campaign_id, now)) {
                if (u.scope == "day" && u.cap) {
                    out.caps.day_cap = u.cap;
                    out.caps.day_cap_left = u.available;
                    out.caps.day_cap_used = u.reserved + u.spent;
                } else if (u.scope == "account" && u.cap && u.key == charge->sender) {
                    out.caps.sender_cap = u.cap;
                    out.caps.sender_cap_left = u.available;
                    out.caps.sender_cap_used = u.reserved + u.spent;
                    out.caps.sender = u.key;
                }
            }
            for (const auto& b : ledger::campaign_budgets(tx, name)) {
                if (b.limits) {
                    out.caps.budget_total = b.limits->total;
                    out.caps.budget_left = b.available;
                }
            }
        }
        if (move_running) {
            out.moved = tx.exec_params(q("campaigns/move_running"), out.campaign_id, out.version)[0][0].as<std::int64_t>();
            for (const auto& r : tx.exec_params(q("campaigns/kept_running"), out.campaign_id, out.version)) {
                out.kept.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::int64_t>()});
            }
        }
        if (out.enrolled > 0) {
            tx.exec(q("engine/notify_wake"));
        }
        if (out.changed && !out.created) {
            if (budget_changed) {
                for (const auto& b : ledger::campaign_budgets(tx, name)) {
                    if (b.limits && b.reserved + b.spent > 0 && b.limits->total <= b.reserved + b.spent) {
                        out.budget_below_committed = apply_outcome::budget_below{b.limits->total, b.reserved + b.spent};
                    }
                }
                // The caps this version set or changed, against what is used under them already.
                const ledger::budget wanted = file_budget(canonical);
                const bool day_changed = wanted.per_day && (!live_budget || live_budget->per_day != wanted.per_day);
                const bool account_changed =
                    wanted.per_account && (!live_budget || live_budget->per_account != wanted.per_account);
                for (const auto& u : ledger::cap_use(tx, out.campaign_id, now)) {
                    const bool changed_it = u.scope == "day" ? day_changed : account_changed;
                    if (changed_it && u.cap && u.reserved + u.spent > 0 && *u.cap <= u.reserved + u.spent) {
                        out.caps_below_used.push_back({u.scope, u.key, *u.cap, u.reserved + u.spent});
                    }
                }
            }
            if (first_run > now) {
                out.start_at = canonical.value("start_at", std::string());
                out.held_for_start = tx.exec_params(q("campaigns/live_count"), name)[0][0].as<std::int64_t>();
            }
            if (!accounts.empty()) {
                for (const auto& r : tx.exec_params(q("campaigns/off_senders"), out.campaign_id, json(accounts).dump())) {
                    out.off_senders.push_back(
                        {r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::int64_t>(), r[3].as<bool>()});
                }
            }
        }
        // Nothing live (an audience that matched nobody, or only leads others own): completed.
        // New leads enrolled into a completed campaign made it active again (migration 0017).
        tx.exec_params(q("campaigns/complete_if_idle"), out.campaign_id);
        auto st = tx.exec_params(q("campaigns/state"), out.campaign_id);
        out.state = st.empty() ? std::string() : st[0][0].as<std::string>();
        if (!accounts.empty()) {
            // The senders' quota day: one without a time zone takes this campaign's; one with
            // another zone is said (by primary key, a few rows).
            const std::string zone = canonical.contains("schedule") ? canonical["schedule"].value("time_zone", "UTC")
                                                                    : std::string("UTC");
            const std::string ids = json(accounts).dump();
            tx.exec_params(q("campaigns/adopt_time_zone"), zone, ids);
            for (const auto& r : tx.exec_params(q("campaigns/zone_conflicts"), zone, ids)) {
                out.zone_conflicts.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>()});
            }
            out.senders = accounts.size();
            for (const auto& r : tx.exec_params(q("campaigns/sender_quotas"), ids)) {
                std::string error;
                if (auto quotas = parse_overrides(r[1].as<std::string>(), error)) {
                    out.own_quotas.push_back({r[0].as<std::string>(), *quotas});
                } else {
                    // The CHECK of migration 0007 keeps this out; a warning is not worth failing for.
                    spdlog::error("store: account={} quotas ignored: {}", orch::text::escaped(r[0].as<std::string>()),
                                  orch::text::escaped(error));
                }
            }
        }
        if (rolled_back) {
            tx.abort();
            return out;
        }
        tx.commit();
        if (budget_changed) {
            std::vector<std::int64_t> woken;
            wake_after_lanes("engine/wake_budget_waits", std::to_string(out.campaign_id), woken);
        }
        return out;
    });
}

std::string definition_digest(const json& canonical) { return sha256_hex(canonical.dump()); }

std::optional<current_definition_row> store::current_definition(const std::string& name,
                                                                 const std::string& search_sender) {
    return guarded("campaigns/find", [&]() -> std::optional<current_definition_row> {
        // campaigns/find locks the row (apply's own use); this read lets it go at once.
        pqxx::work tx(*conn_);
        auto r = find_campaign(tx, name);
        if (r.empty()) {
            return std::nullopt;
        }
        current_definition_row out{r[0][0].as<std::int64_t>(), r[0][1].as<std::string>(), r[0][2].as<int>(),
                                   r[0][3].as<std::string>(), ""};
        if (auto b = tx.exec_params(q("campaigns/search_basis"), name); !b.empty()) {
            out.search_basis = b[0][0].as<std::string>();
        }
        const auto use = tx.exec_params(q("ledger/use_before_search"), out.campaign_id,
                                        ledger::utc_day(std::chrono::system_clock::now()));
        out.budget_used = use[0][0].as<std::int64_t>();
        out.today_used = use[0][1].as<std::int64_t>();
        if (!search_sender.empty()) {
            out.sender_used = tx.exec_params(q("ledger/sender_use"), out.campaign_id, search_sender)[0][0].as<std::int64_t>();
        }
        if (auto d = tx.exec_params(q("engine/campaign_definition"), out.campaign_id, out.version); !d.empty()) {
            out.file_budget = file_budget(json::parse(d[0][0].as<std::string>()));
        }
        out.live_budget = ledger::get_budget(tx, out.campaign_id);
        tx.abort();
        return out;
    });
}

std::vector<campaign_row> store::campaigns() {
    return guarded("campaigns/list", [&] {
        pqxx::nontransaction tx(*conn_);
        std::vector<campaign_row> out;
        for (const auto& r : tx.exec(q("campaigns/list"))) {
            out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<int>(),
                           r[4].as<std::int64_t>(), r[5].as<std::int64_t>()});
        }
        return out;
    });
}

bool set_campaign_state(pqxx::work& tx, const std::string& name, const std::string& state, const std::string& reason) {
    auto r = tx.exec_params(q("campaigns/set_state"), name, state, reason);
    if (r.empty()) {
        return false;
    }
    auto campaign_id = r[0][0].as<std::int64_t>();
    // The workers' copies of which campaigns are halted (dnc::mirror) reload on commit: a call
    // still queued for a cancelled or paused campaign is not sent, and one of a resumed one is.
    tx.exec0(std::string("NOTIFY ") + dnc::changed_channel);
    if (state == "cancelled") {
        tx.exec_params(q("campaigns/cancel_enrollments"), campaign_id);
    } else if (state == "paused") {
        tx.exec_params(q("engine/park_campaign"), campaign_id);
    } else if (state == "active") {
        tx.exec_params(q("engine/unpark"), campaign_id, std::string());
        tx.exec(q("engine/notify_wake"));
    }
    return true;
}

bool store::set_campaign_state(const std::string& name, const std::string& state, const std::string& reason) {
    return again_after_deadlock("campaign state", [&] {
        return guarded("campaigns/set_state", [&] {
            pqxx::work tx(*conn_);
            if (!engine::set_campaign_state(tx, name, state, reason)) {
                return false;
            }
            tx.commit();
            return true;
        });
    });
}

bool store::campaign_exists(const std::string& name) {
    return guarded("campaigns/exists", [&] {
        pqxx::nontransaction tx(*conn_);
        return tx.exec_params(q("campaigns/exists"), name)[0][0].as<bool>();
    });
}

std::int64_t store::live_enrollments(const std::string& name) {
    return guarded("campaigns/live_count", [&] {
        pqxx::nontransaction tx(*conn_);
        return tx.exec_params(q("campaigns/live_count"), name)[0][0].as<std::int64_t>();
    });
}

funnel_row store::funnel(const std::string& name) {
    return guarded("reports/funnel", [&] {
        pqxx::nontransaction tx(*conn_);
        auto r = tx.exec_params(q("reports/funnel"), name)[0];
        funnel_row f;
        f.found = r[0].as<std::int64_t>();
        f.skipped = r[1].as<std::int64_t>();
        f.checked = r[2].as<std::int64_t>();
        f.invited = r[3].as<std::int64_t>();
        f.accepted = r[4].as<std::int64_t>();
        f.messaged = r[5].as<std::int64_t>();
        f.replied = r[6].as<std::int64_t>();
        f.failed = r[7].as<std::int64_t>();
        f.live = r[8].as<std::int64_t>();
        f.credits = r[9].as<std::int64_t>();
        return f;
    });
}

std::optional<std::int64_t> store::insert_event(const std::string& source_id, const std::string& account_id,
                                                event_kind kind, const std::string& profile_url,
                                                const json& payload, const std::string& content_key,
                                                const stored_check& already) {
    return guarded("events/insert", [&]() -> std::optional<std::int64_t> {
        pqxx::work tx(*conn_);
        // "/in/<id>" (a person named by public identifier only) is matched by the URL's tail.
        auto canonical = profile_url.empty() || profile_url.rfind("/in/", 0) == 0 ? profile_url
                                                                                  : canonical_profile_url(profile_url);
        if (already && !canonical.empty()) {
            tx.exec_params(q("events/lock_person"), account_id, canonical);
            if (already(tx)) {
                return std::nullopt;  // rolled back: the lock ends with it
            }
        }
        auto r = tx.exec_params(q("events/insert"), source_id, account_id, std::string(to_string(kind)), canonical,
                                payload.dump(), content_key);
        if (r.empty()) {
            return std::nullopt;
        }
        auto event_id = r[0][0].as<std::int64_t>();
        auto lead_id = r[0][1].as<std::int64_t>();
        if (lead_id != 0) {
            const bool accepted = kind == event_kind::accepted_invitation;
            const bool replied = kind == event_kind::message;
            if (accepted || replied) {
                tx.exec_params(q("events/mark"), lead_id, account_id, accepted, replied);
            }
            tx.exec_params(q("events/wake"), lead_id, account_id);
            tx.exec(q("engine/notify_wake"));
        }
        tx.commit();
        return event_id;
    });
}

json store::quarantined_events(std::int64_t limit) {
    return guarded("intake/quarantine_list", [&] {
        pqxx::nontransaction tx(*conn_);
        json out = json::array();
        for (const auto& r : tx.exec_params(q("intake/quarantine_list"), limit)) {
            json item = {{"quarantine_id", r[0].as<std::int64_t>()}, {"source_id", r[1].as<std::string>()},
                         {"account_id", r[2].as<std::string>()},     {"channel", r[3].as<std::string>()},
                         {"reason", r[4].as<std::string>()},         {"received_at", r[5].as<std::string>()},
                         {"body_bytes", r[6].as<std::int64_t>()}};
            item["body_base64"] = r[7].as<std::string>();
            // The body as text when it is UTF-8 (a JSON body an operator reads), else null.
            const pqxx::binarystring raw(r[8]);
            const std::string_view body(raw.get(), raw.size());
            item["body_text"] = orch::text::check_text(body) ? json(nullptr) : json(std::string(body));
            out.push_back(std::move(item));
        }
        return out;
    });
}

}  // namespace orch::engine
