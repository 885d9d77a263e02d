#include "engine/ledger.hpp"
#include "engine/sql_array.hpp"

#include "api/text.hpp"
#include "engine/invariant.hpp"

#include "engine/batch_rows.hpp"
#include "engine/record_rows.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

// How a write goes: lock what it draws from (reserve_scopes, or pending_transfers then
// lock_available), decide here from the locked balances, then write transfers, entries and the
// balance changes in one statement (apply). The decision is C++; the guarantee is the database's:
// the rows stay locked until the transaction ends and the CHECK constraints refuse any overdraft.
// The worker's fast path (ledger.hpp, held_balances) reads instead of locking (balances and the
// transfers it settles; apply's UPDATE settles a transfer only while it is still pending), writes
// the same transfers and entries, and moves the balances last (apply_balances).

namespace orch::engine::ledger {

namespace {

using json = nlohmann::json;

std::string q(std::string_view name) { return std::string(schema::query(name)); }

// store_error naming `what`; a refused CHECK says it broke a ledger rule.
[[noreturn]] void rethrow_ledger_error(std::string_view what) {
    try {
        throw;
    } catch (const pqxx::check_violation& e) {
        throw store_error(std::string(what) + ": the database refused a write that breaks a ledger rule: " + e.what(),
                          e.sqlstate());
    } catch (const pqxx::failure&) {
        rethrow_as_store_error(what);
    }
}

// One named query; pqxx errors become store_error naming it. Planned at each run, so the plan
// follows the tables as they grow.
template <typename... Args>
pqxx::result run(pqxx::transaction_base& tx, std::string_view name, Args&&... args) {
    try {
        return tx.exec_params(q(name), std::forward<Args>(args)...);
    } catch (const pqxx::failure&) {
        rethrow_ledger_error(name);
    }
}

// The same as a prepared statement of the connection (pqxx prepares it on first use), for the
// statements run on every batch (apply, reserve_scopes, and the lookups and locks before them),
// whose parsing and planning cost as much as running them. Their plans are re-made when autovacuum's ANALYZE updates the statistics.
template <typename... Args>
pqxx::result run_prepared(pqxx::transaction_base& tx, std::string_view name, Args&&... args) {
    try {
        const std::string id(name);
        tx.conn().prepare(id, q(name));
        return tx.exec_prepared(id, std::forward<Args>(args)...);
    } catch (const pqxx::failure&) {
        rethrow_ledger_error(name);
    }
}

// A standalone call: one transaction of its own, committed.
template <typename F>
auto in_transaction(pqxx::connection& conn, std::string_view what, F&& fn) -> decltype(fn(std::declval<pqxx::work&>())) {
    try {
        pqxx::work tx(conn);
        auto out = fn(tx);
        tx.commit();
        return out;
    } catch (const pqxx::failure&) {
        rethrow_ledger_error(what);
    }
}

std::int64_t as_i64(const pqxx::field& f) { return f.is_null() ? 0 : f.as<std::int64_t>(); }

std::optional<std::int64_t> optional_cap(std::int64_t v) {
    return v < 0 ? std::nullopt : std::optional<std::int64_t>(v);
}

// ---- apply ----

struct entry {
    std::int64_t transfer_id = 0;   // 0: the new transfer of attempt_id, or none (budget change)
    std::int64_t attempt_id = 0;
    std::int64_t scope_id = 0;
    const char* kind = "";
    const char* debit = "";
    const char* credit = "";
    std::int64_t amount = 0;
};

struct write_set {
    record_rows new_transfers{batch_rows::transfer};
    record_rows settled{batch_rows::settled};
    std::vector<entry> entries;
};

// The locked path never loses a race to a read made without locks: a contended answer there is a
// bug.
template <typename T>
T locked(result<T> r) {
    ORCH_INVARIANT(r.has_value(), "the ledger's locked path answered: {}", r.error().message);
    return std::move(r).value();
}
void locked(result<void> r) {
    ORCH_INVARIANT(r.has_value(), "the ledger's locked path answered: {}", r.error().message);
}

std::optional<std::int64_t> id_or_null(std::int64_t id) {
    return id == 0 ? std::nullopt : std::optional<std::int64_t>(id);
}

// held: the fast path (ledger.hpp, held_balances): the balance changes are added there instead of
// written.
// On the fast path, a contended error when a transfer to settle was settled by another
// transaction since it was read (the locked path decides again).
result<void> apply(pqxx::work& tx, const write_set& w, held_balances* held = nullptr) {
    record_rows entries(batch_rows::entry);
    for (const auto& e : w.entries) {
        entries.row()
            .add_or_null("transfer_id", id_or_null(e.transfer_id))
            .add_or_null("attempt_id", id_or_null(e.attempt_id))
            .add("scope_id", e.scope_id)
            .add("kind", e.kind)
            .add("debit", e.debit)
            .add("credit", e.credit)
            .add("amount", e.amount);
    }
    if (held != nullptr) {
        for (const auto& e : w.entries) {
            held->delta[{e.scope_id, e.debit}] += e.amount;
            held->delta[{e.scope_id, e.credit}] -= e.amount;
        }
    }
    auto r = run_prepared(tx, "ledger/apply", w.new_transfers.text(), w.settled.text(), entries.text(),
                          held != nullptr)[0];
    // On the fast path the transfers to settle were read without a lock: one that another
    // transaction settled since is left as it is by the UPDATE, and the locked path decides again.
    if (held != nullptr && r[1].as<std::size_t>() < w.settled.size()) {
        return error{error_category::contended,
                     "ledger/apply: " + std::to_string(w.settled.size() - r[1].as<std::size_t>()) +
                         " transfer(s) settled by another transaction since they were read"};
    }
    // Pair assertions: every transfer decided under our locks was written (a transfer naming a step
    // attempt with no intent row is not), and every account the entries move was there to be
    // updated.
    if (r[0].as<std::size_t>() != w.new_transfers.size() || r[1].as<std::size_t>() != w.settled.size() ||
        r[2].as<std::int64_t>() != r[3].as<std::int64_t>()) {
        throw store_error("ledger/apply: wrote " + r[0].as<std::string>() + " of " +
                          std::to_string(w.new_transfers.size()) + " transfers, settled " + r[1].as<std::string>() +
                          " of " + std::to_string(w.settled.size()) + ", updated " + r[2].as<std::string>() + " of " +
                          r[3].as<std::string>() + " accounts (a transfer's step attempt is missing, or a bug: "
                          "the transaction must be rolled back)");
    }
    return {};
}

// A bigint[] literal, '{1,2,3}', for the `= ANY($1::bigint[])` lookups.
std::string id_array(const std::vector<std::int64_t>& ids) { return sql_array::of(ids); }

std::vector<std::int64_t> parse_id_array(const std::string& text) {
    std::vector<std::int64_t> out;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '-' || (text[i] >= '0' && text[i] <= '9')) {
            std::size_t used = 0;
            out.push_back(std::stoll(text.substr(i), &used));
            i += used;
        } else {
            ++i;
        }
    }
    return out;
}

void pause(pqxx::work& tx, std::int64_t campaign_id, const std::string& why) {
    run(tx, "ledger/pause_campaign", campaign_id, std::string(pause_prefix) + " " + why);
}

// ---- reserve ----

struct scope_ref {
    std::int64_t scope_id = 0;   // 0: does not exist yet
    refusal kind = refusal::campaign_budget;
};

refusal scope_refusal(const std::string& kind) {
    if (kind == "campaign") {
        return refusal::campaign_budget;
    }
    if (kind == "day") {
        return refusal::day_budget;
    }
    return refusal::account_budget;
}

using pair_key = std::pair<std::int64_t, std::string>;

struct locked_scopes {
    std::map<pair_key, std::vector<scope_ref>> by_pair;
    std::map<std::int64_t, std::int64_t> available;   // scope_id -> balance
    bool missing = false;                              // an account or day scope to create
};

std::vector<std::pair<std::int64_t, std::int64_t>> lock_available(pqxx::work& tx, const std::vector<std::int64_t>& ids);

// pairs: ledger_pair_row[] text (record_rows of batch_rows::pair). lock: lock the scopes'
// available accounts and take their balances from the lock (else as read, for the fast path).
locked_scopes lock_reserve_scopes(pqxx::work& tx, const std::string& pairs, const std::string& day, bool lock = true) {
    locked_scopes out;
    for (const auto& r : run_prepared(tx, "ledger/reserve_scopes", pairs, day)) {
        scope_ref s{as_i64(r[3]), scope_refusal(r[2].as<std::string>())};
        out.by_pair[{r[0].as<std::int64_t>(), r[1].as<std::string>()}].push_back(s);
        if (s.scope_id != 0) {
            out.available[s.scope_id] = as_i64(r[4]);
        } else if (s.kind != refusal::campaign_budget) {
            out.missing = true;
        }
    }
    if (lock && !out.available.empty()) {
        std::vector<std::int64_t> ids;
        for (const auto& [id, balance] : out.available) {
            ids.push_back(id);
        }
        for (const auto& [id, balance] : lock_available(tx, ids)) {
            out.available[id] = balance;
        }
    }
    return out;
}

// The available balances of those scopes, locked FOR UPDATE in scope_id order.
std::vector<std::pair<std::int64_t, std::int64_t>> lock_available(pqxx::work& tx, const std::vector<std::int64_t>& ids) {
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (const auto& r : run_prepared(tx, "ledger/lock_available", id_array(ids))) {
        out.emplace_back(r[0].as<std::int64_t>(), r[1].as<std::int64_t>());
    }
    return out;
}

// The credits a campaign's calls in flight hold (leases live), per sender: read from the
// database on the campaign's first question only (ledger/reserved_balance walks its live rows),
// plus what the caller adds (a batch's own reservations).
class in_flight_credits {
public:
    explicit in_flight_credits(pqxx::work& tx) : tx_(tx) {}
    // sender nullptr: all the campaign's senders.
    std::int64_t held(std::int64_t campaign_id, const std::string* sender) {
        if (read_.insert(campaign_id).second) {
            for (const auto& row : run(tx_, "ledger/reserved_balance", campaign_id)) {
                by_pair_[{campaign_id, row[0].as<std::string>()}] += as_i64(row[1]);
            }
        }
        std::int64_t sum = 0;
        for (auto it = by_pair_.lower_bound({campaign_id, std::string()});
             it != by_pair_.end() && it->first.first == campaign_id; ++it) {
            sum += sender == nullptr || it->first.second == *sender ? it->second : 0;
        }
        return sum;
    }
    void add(std::int64_t campaign_id, const std::string& sender, std::int64_t credits) {
        by_pair_[{campaign_id, sender}] += credits;
    }

private:
    pqxx::work& tx_;
    std::map<pair_key, std::int64_t> by_pair_;
    std::set<std::int64_t> read_;
};

void validate(const std::vector<reserve_request>& batch) {
    std::set<std::int64_t> seen;
    for (const auto& r : batch) {
        if (r.attempt_id <= 0 || r.campaign_id <= 0) {
            throw std::invalid_argument("ledger reserve: attempt " + std::to_string(r.attempt_id) + " of campaign " +
                                        std::to_string(r.campaign_id) + ": ids must be positive");
        }
        if (r.credits < 0) {
            throw std::invalid_argument("ledger reserve: attempt " + std::to_string(r.attempt_id) + ": credits " +
                                        std::to_string(r.credits) + " is negative");
        }
        if (!seen.insert(r.attempt_id).second) {
            throw std::invalid_argument("ledger reserve: attempt " + std::to_string(r.attempt_id) +
                                        " appears twice in one batch");
        }
    }
}

time_point next_utc_midnight(time_point t) {
    return std::chrono::floor<std::chrono::days>(t) + std::chrono::days(1);
}

}  // namespace

std::string utc_day(time_point t) {
    std::chrono::year_month_day ymd{std::chrono::floor<std::chrono::days>(t)};
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                  static_cast<unsigned>(ymd.day()));
    return buf;
}

std::string_view to_string(refusal r) {
    switch (r) {
    case refusal::none:
        return "none";
    case refusal::campaign_budget:
        return "campaign_budget";
    case refusal::day_budget:
        return "day_budget";
    case refusal::account_budget:
        return "account_budget";
    case refusal::no_budget:
        return "no_budget";
    case refusal::in_flight:
        return "in_flight";
    }
    return "?";
}

std::string_view to_string(settle_status s) {
    switch (s) {
    case settle_status::posted:
        return "posted";
    case settle_status::voided:
        return "voided";
    case settle_status::already_settled:
        return "already_settled";
    case settle_status::unknown:
        return "unknown";
    }
    return "?";
}

namespace {

result<std::vector<reservation>> reserve_batch(pqxx::work& tx, const std::vector<reserve_request>& batch, time_point now,
                                       held_balances* held) {
    validate(batch);
    std::vector<reservation> out(batch.size());
    if (batch.empty()) {
        return out;
    }
    const std::string day = utc_day(now);
    record_rows pair_rows(batch_rows::pair);
    std::vector<std::int64_t> attempt_ids;
    for (const auto& r : batch) {
        pair_rows.row().add("campaign_id", r.campaign_id).add("sender", r.sender);
        attempt_ids.push_back(r.attempt_id);
    }
    const std::string pairs = pair_rows.text();
    auto scopes = lock_reserve_scopes(tx, pairs, day, held == nullptr);
    if (scopes.missing) {
        if (held != nullptr) {
            return error{error_category::contended, "ledger reserve: a budget scope is still to be created"};
        }
        run(tx, "ledger/ensure_scopes", pairs, day);
        scopes = lock_reserve_scopes(tx, pairs, day);
    }
    std::map<std::int64_t, std::pair<std::string, std::int64_t>> earlier;   // attempt -> (state, reserved)
    for (const auto& r : run_prepared(tx, "ledger/find_transfers", id_array(attempt_ids))) {
        earlier[r[0].as<std::int64_t>()] = {r[1].as<std::string>(), r[2].as<std::int64_t>()};
    }

    write_set w;
    auto& left = scopes.available;
    std::map<std::int64_t, const reserve_request*> first_refusal;   // campaign -> request
    std::vector<std::int64_t> refusing_scope(batch.size(), 0);
    // What the campaigns' calls in flight hold, plus this batch's reservations.
    in_flight_credits in_flight(tx);
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const auto& r = batch[i];
        auto& res = out[i];
        res.attempt_id = r.attempt_id;
        if (auto it = earlier.find(r.attempt_id); it != earlier.end()) {
            res.duplicate = true;
            res.reserved = it->second.first == "pending";
            res.credits = it->second.second;
            continue;
        }
        const auto& refs = scopes.by_pair[{r.campaign_id, r.sender}];
        auto campaign = std::find_if(refs.begin(), refs.end(),
                                     [](const scope_ref& s) { return s.kind == refusal::campaign_budget; });
        if (campaign == refs.end() || campaign->scope_id == 0) {
            res.why = refusal::no_budget;
            continue;
        }
        // The campaign's own budget first (its refusal pauses the campaign), then the caps.
        for (auto kind : {refusal::campaign_budget, refusal::day_budget, refusal::account_budget}) {
            for (const auto& s : refs) {
                if (s.kind == kind && res.why == refusal::none && (s.scope_id == 0 || left[s.scope_id] < r.credits)) {
                    res.why = kind;
                    refusing_scope[i] = s.scope_id;
                }
            }
        }
        if (res.why != refusal::none && refusing_scope[i] != 0 && held == nullptr) {
            // Calls in flight may give credits back when they settle (each holds the cost model's
            // upper bound). While what they hold could cover this call, it waits for them rather
            // than pause the campaign with credits unspent, or wait a day for a cap with room;
            // once they have settled, a refusal stands. A sender's cap counts that sender's calls.
            const auto held_now =
                in_flight.held(r.campaign_id, res.why == refusal::account_budget ? &r.sender : nullptr);
            if (held_now > 0 && left[refusing_scope[i]] + held_now >= r.credits) {
                res.why = refusal::in_flight;
                // Spread, so that the campaign's waiting calls do not come back at one instant.
                res.retry_at = now + in_flight_retry_after(r.attempt_id);
            }
        }
        if (res.why != refusal::none) {
            if (res.why == refusal::campaign_budget) {
                first_refusal.emplace(r.campaign_id, &r);
            } else if (res.why == refusal::day_budget) {
                res.retry_at = next_utc_midnight(now);
            }
            continue;
        }
        res.reserved = true;
        res.credits = r.credits;
        std::vector<std::int64_t> scope_ids{campaign->scope_id};   // the campaign's first
        for (const auto& s : refs) {
            if (s.scope_id != campaign->scope_id) {
                scope_ids.push_back(s.scope_id);
            }
            left[s.scope_id] -= r.credits;
            if (s.scope_id == campaign->scope_id) {
                in_flight.add(r.campaign_id, r.sender, r.credits);
            }
            if (r.credits > 0) {
                w.entries.push_back({0, r.attempt_id, s.scope_id, "reserve", "reserved", "available", r.credits});
            }
        }
        w.new_transfers.row()
            .add("attempt_id", r.attempt_id)
            .add("campaign_id", r.campaign_id)
            .add("sender", r.sender)
            .add("action", r.action)
            .add("day", day)
            .add("reserved", r.credits)
            .add("scopes", scope_ids);
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (out[i].duplicate || out[i].why == refusal::no_budget) {
            continue;
        }
        std::int64_t scope = refusing_scope[i];
        if (scope == 0 && out[i].why == refusal::none) {
            for (const auto& s : scopes.by_pair[{batch[i].campaign_id, batch[i].sender}]) {
                scope = s.kind == refusal::campaign_budget ? s.scope_id : scope;
            }
        }
        out[i].available = scope == 0 ? 0 : left[scope];
    }
    if (held != nullptr) {
        for (const auto& r : out) {
            if (!r.reserved) {
                return error{error_category::contended, "ledger reserve: attempt " + std::to_string(r.attempt_id) +
                                                            " is refused or was settled before; decided under locks"};
            }
        }
    }
    if (!w.new_transfers.empty()) {
        if (auto applied = apply(tx, w, held); !applied) {
            return applied.error();
        }
    }
    for (const auto& [campaign_id, r] : first_refusal) {
        std::int64_t have = 0;
        for (const auto& s : scopes.by_pair[{campaign_id, r->sender}]) {
            have = s.kind == refusal::campaign_budget ? left[s.scope_id] : have;
        }
        pause(tx, campaign_id,
              orch::text::counted(have, "credit", "credits") + " left, a call (" + (r->action.empty() ? "unnamed" : r->action) +
                  ") needs up to " + std::to_string(r->credits));
    }
    return out;
}

}  // namespace

std::vector<reservation> reserve(pqxx::work& tx, const std::vector<reserve_request>& batch, time_point now) {
    return locked(reserve_batch(tx, batch, now, nullptr));
}

result<std::vector<reservation>> reserve(pqxx::work& tx, const std::vector<reserve_request>& batch, time_point now,
                                         held_balances& held) {
    return reserve_batch(tx, batch, now, &held);
}

std::vector<reservation> standing_refusals(pqxx::work& tx, const std::vector<reserve_request>& batch, time_point now) {
    std::vector<reservation> out(batch.size());
    if (batch.empty()) {
        return out;
    }
    const std::string day = utc_day(now);
    record_rows pair_rows(batch_rows::pair);
    for (const auto& r : batch) {
        pair_rows.row().add("campaign_id", r.campaign_id).add("sender", r.sender);
    }
    const auto scopes = lock_reserve_scopes(tx, pair_rows.text(), day, false);
    in_flight_credits in_flight(tx);
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const auto& r = batch[i];
        auto& res = out[i];
        res.attempt_id = r.attempt_id;
        const auto refs = scopes.by_pair.find({r.campaign_id, r.sender});
        if (r.credits <= 0 || refs == scopes.by_pair.end()) {
            continue;
        }
        for (auto kind : {refusal::day_budget, refusal::account_budget}) {
            for (const auto& s : refs->second) {
                // A scope still to be created is funded when it is (ensure_scopes): the reserve decides.
                if (s.kind != kind || s.scope_id == 0 || res.why != refusal::none) {
                    continue;
                }
                const std::int64_t left = scopes.available.at(s.scope_id);
                if (left >= r.credits) {
                    continue;
                }
                const auto held_now = in_flight.held(r.campaign_id, kind == refusal::account_budget ? &r.sender : nullptr);
                if (held_now == 0 || left + held_now < r.credits) {
                    res.why = kind;
                    res.available = left;
                    res.retry_at = kind == refusal::day_budget ? next_utc_midnight(now) : time_point{};
                }
            }
        }
    }
    return out;
}

result<void> apply_balances(pqxx::work& tx, const held_balances& held) {
    std::vector<std::int64_t> ids;
    sql_array scopes, kinds, deltas;  // one element per account to move
    for (const auto& [key, delta] : held.delta) {
        if (delta == 0) {
            continue;
        }
        if (ids.empty() || ids.back() != key.first) {
            ids.push_back(key.first);   // the map is ordered by scope_id
        }
        scopes.add(key.first);
        kinds.add_text(key.second);
        deltas.add(delta);
    }
    if (ids.empty()) {
        return {};
    }
    // The locks first, in scope_id order like every writer's, then the change.
    lock_available(tx, ids);
    std::size_t rows = 0;
    try {
        rows = run_prepared(tx, "ledger/apply_balances", scopes.str(), kinds.str(), deltas.str()).affected_rows();
    } catch (const store_error& e) {
        if (e.sqlstate == "23514") {   // check_violation: the fast path's read was stale
            return error{error_category::contended,
                         std::string("ledger/apply_balances: a balance would go below zero: ") + e.what()};
        }
        throw;
    }
    if (rows != scopes.size()) {
        throw store_error("ledger/apply_balances: updated " + std::to_string(rows) + " of " + std::to_string(scopes.size()) +
                          " accounts (a bug: the transaction must be rolled back)");
    }
    return {};
}

std::vector<reservation> reserve(pqxx::connection& conn, const std::vector<reserve_request>& batch, time_point now) {
    return in_transaction(conn, "ledger/reserve", [&](pqxx::work& tx) { return reserve(tx, batch, now); });
}

// ---- post and void ----

namespace {

using legs_t = std::vector<std::pair<std::int64_t, bool>>;   // scope_id, is the campaign's scope

struct pending_transfer {
    std::int64_t transfer_id = 0;
    std::int64_t campaign_id = 0;
    std::int64_t reserved = 0;
    legs_t legs;
};

// The pending transfers of those attempts, locked; or, on the fast path (`lock` false), read only:
// ledger/apply then settles each one only if it is still pending, and counts them.
std::map<std::int64_t, pending_transfer> pending_of(pqxx::work& tx, const std::vector<std::int64_t>& attempts,
                                                    bool lock) {
    std::map<std::int64_t, pending_transfer> out;
    for (const auto& r :
         run_prepared(tx, lock ? "ledger/pending_transfers" : "ledger/read_pending", id_array(attempts))) {
        auto& p = out[r[1].as<std::int64_t>()];
        p.transfer_id = r[0].as<std::int64_t>();
        p.campaign_id = r[2].as<std::int64_t>();
        p.reserved = r[3].as<std::int64_t>();
        for (auto scope : parse_id_array(r[4].as<std::string>())) {
            p.legs.emplace_back(scope, p.legs.empty());   // the campaign's scope comes first
        }
    }
    return out;
}

struct settle_request {
    std::int64_t attempt_id = 0;
    std::optional<std::int64_t> credits;   // nullopt: void
    const post_request* post = nullptr;    // for an unreserved charge
};

// The entries that settle one transfer in each scope it draws from: `actual` posted out of its
// reservation (post), the rest of the reservation released (release); a charge above the
// reservation is absorbed from the scope's available balance (`left`, updated) as far as it goes
// (absorb), the rest posted from funding (overrun). Returns the campaign scope's shortfall.
std::int64_t settle_legs(write_set& w, std::int64_t transfer_id, std::int64_t reserved, std::int64_t actual,
                         const legs_t& legs, std::map<std::int64_t, std::int64_t>& left) {
    const std::int64_t kept = std::min(actual, reserved);
    const std::int64_t excess = actual - kept;
    std::int64_t shortfall = 0;
    for (const auto& [scope, is_campaign] : legs) {
        if (kept > 0) {
            w.entries.push_back({transfer_id, 0, scope, "post", "spent", "reserved", kept});
        }
        if (reserved > kept) {
            w.entries.push_back({transfer_id, 0, scope, "release", "available", "reserved", reserved - kept});
        }
        std::int64_t absorbed = std::min(excess, left[scope]);
        left[scope] -= absorbed;
        if (absorbed > 0) {
            w.entries.push_back({transfer_id, 0, scope, "absorb", "spent", "available", absorbed});
        }
        if (excess > absorbed) {
            w.entries.push_back({transfer_id, 0, scope, "overrun", "spent", "funding", excess - absorbed});
            shortfall = is_campaign ? excess - absorbed : shortfall;
        }
    }
    return shortfall;
}

result<std::vector<settlement>> settle_batch(pqxx::work& tx, const std::vector<settle_request>& batch, time_point now,
                                     held_balances* held = nullptr) {
    std::vector<settlement> out(batch.size());
    std::set<std::int64_t> seen;
    std::vector<std::int64_t> attempts;
    for (const auto& s : batch) {
        if (s.attempt_id <= 0) {
            throw std::invalid_argument("ledger settle: attempt id " + std::to_string(s.attempt_id) + " must be positive");
        }
        if (s.credits && *s.credits < 0) {
            throw std::invalid_argument("ledger post: attempt " + std::to_string(s.attempt_id) + ": credits " +
                                        std::to_string(*s.credits) + " is negative");
        }
        if (!seen.insert(s.attempt_id).second) {
            throw std::invalid_argument("ledger settle: attempt " + std::to_string(s.attempt_id) +
                                        " appears twice in one batch");
        }
        attempts.push_back(s.attempt_id);
    }
    if (batch.empty()) {
        return out;
    }
    auto pending = pending_of(tx, attempts, held == nullptr);
    if (held != nullptr) {
        if (pending.size() < batch.size()) {
            return error{error_category::contended, "ledger settle: an attempt was settled before, or never reserved"};
        }
        for (const auto& s : batch) {
            if (s.credits.value_or(0) > pending[s.attempt_id].reserved) {
                return error{error_category::contended, "ledger settle: attempt " + std::to_string(s.attempt_id) +
                                                            " was charged above its reservation"};
            }
        }
    }
    if (pending.size() < batch.size()) {
        // Already settled, or never reserved: an unreserved charge is recorded under a
        // reservation of 0 made now, so no credit the API charged is dropped.
        std::vector<std::int64_t> rest;
        for (auto a : attempts) {
            if (!pending.count(a)) {
                rest.push_back(a);
            }
        }
        std::map<std::int64_t, std::pair<std::string, std::int64_t>> known;
        for (const auto& r : run_prepared(tx, "ledger/find_transfers", id_array(rest))) {
            known[r[0].as<std::int64_t>()] = {r[1].as<std::string>(), r[3].as<std::int64_t>()};
        }
        std::vector<reserve_request> unreserved;
        for (std::size_t i = 0; i < batch.size(); ++i) {
            const auto& s = batch[i];
            out[i].attempt_id = s.attempt_id;
            if (pending.count(s.attempt_id)) {
                continue;
            }
            if (auto it = known.find(s.attempt_id); it != known.end()) {
                out[i].status = settle_status::already_settled;
                out[i].posted = it->second.second;
            } else if (s.credits && s.post != nullptr && s.post->campaign_id > 0) {
                unreserved.push_back({s.attempt_id, s.post->campaign_id, s.post->sender, s.post->action, 0});
            }
        }
        if (!unreserved.empty()) {
            reserve(tx, unreserved, now);
            std::vector<std::int64_t> ids;
            for (const auto& u : unreserved) {
                ids.push_back(u.attempt_id);
            }
            for (auto& [a, p] : pending_of(tx, ids, true)) {
                pending.emplace(a, std::move(p));
            }
        }
    }
    std::set<std::int64_t> scope_set;
    for (const auto& [a, p] : pending) {
        for (const auto& [scope, is_campaign] : p.legs) {
            scope_set.insert(scope);
        }
    }
    std::map<std::int64_t, std::int64_t> left;
    if (held == nullptr) {
        // On the fast path no charge is above its reservation: the balances are not needed.
        for (const auto& [id, balance] : lock_available(tx, {scope_set.begin(), scope_set.end()})) {
            left[id] = balance;
        }
    }
    // Releases first: a charge above its reservation may use what others in the batch give back.
    for (const auto& s : batch) {
        auto it = pending.find(s.attempt_id);
        if (it != pending.end()) {
            std::int64_t back = it->second.reserved - std::min(it->second.reserved, s.credits.value_or(0));
            for (const auto& [scope, is_campaign] : it->second.legs) {
                left[scope] += back;
            }
        }
    }
    write_set w;
    std::map<std::int64_t, std::int64_t> shortfall_of;   // campaign -> credits charged beyond its budget
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const auto& s = batch[i];
        auto it = pending.find(s.attempt_id);
        if (it == pending.end()) {
            continue;
        }
        const auto& p = it->second;
        auto& res = out[i];
        res.attempt_id = s.attempt_id;
        res.reserved = p.reserved;
        std::int64_t actual = s.credits.value_or(0);
        res.shortfall = settle_legs(w, p.transfer_id, p.reserved, actual, p.legs, left);
        if (s.credits) {
            res.status = settle_status::posted;
            res.posted = actual;
            res.overrun = actual - std::min(actual, p.reserved);
        } else {
            res.status = settle_status::voided;
        }
        w.settled.row()
            .add("transfer_id", p.transfer_id)
            .add("state", s.credits ? "posted" : "voided")
            .add_or_null("posted", s.credits ? std::optional<std::int64_t>(actual) : std::nullopt)
            .add("overrun", res.overrun)
            .add("shortfall", res.shortfall);
        if (res.shortfall > 0) {
            shortfall_of[p.campaign_id] += res.shortfall;
        }
    }
    if (!w.settled.empty()) {
        if (auto applied = apply(tx, w, held); !applied) {
            return applied.error();
        }
    }
    for (const auto& [campaign_id, credits] : shortfall_of) {
        pause(tx, campaign_id, "the API charged " + orch::text::counted(credits, "credit", "credits") + " beyond the budget");
    }
    return out;
}

// Posts first, then voids (the order of settle()'s results).
std::vector<settle_request> settle_requests(const std::vector<post_request>& posts,
                                            const std::vector<std::int64_t>& voids) {
    std::vector<settle_request> s;
    s.reserve(posts.size() + voids.size());
    for (const auto& p : posts) {
        s.push_back({p.attempt_id, p.credits, &p});
    }
    for (auto a : voids) {
        s.push_back({a, std::nullopt, nullptr});
    }
    return s;
}

}  // namespace

std::vector<settlement> post(pqxx::work& tx, const std::vector<post_request>& batch, time_point now) {
    std::vector<settle_request> s;
    s.reserve(batch.size());
    for (const auto& p : batch) {
        s.push_back({p.attempt_id, p.credits, &p});
    }
    return locked(settle_batch(tx, s, now));
}

std::vector<settlement> settle(pqxx::work& tx, const std::vector<post_request>& posts,
                               const std::vector<std::int64_t>& voids, time_point now) {
    return locked(settle_batch(tx, settle_requests(posts, voids), now));
}

result<std::vector<settlement>> settle(pqxx::work& tx, const std::vector<post_request>& posts,
                                       const std::vector<std::int64_t>& voids, time_point now, held_balances& held) {
    return settle_batch(tx, settle_requests(posts, voids), now, &held);
}

std::vector<settlement> post(pqxx::connection& conn, const std::vector<post_request>& batch, time_point now) {
    return in_transaction(conn, "ledger/post", [&](pqxx::work& tx) { return post(tx, batch, now); });
}

std::vector<settlement> void_reservations(pqxx::work& tx, const std::vector<std::int64_t>& attempt_ids, time_point now) {
    std::vector<settle_request> s;
    s.reserve(attempt_ids.size());
    for (auto a : attempt_ids) {
        s.push_back({a, std::nullopt, nullptr});
    }
    return locked(settle_batch(tx, s, now));
}

std::vector<settlement> void_reservations(pqxx::connection& conn, const std::vector<std::int64_t>& attempt_ids,
                                          time_point now) {
    return in_transaction(conn, "ledger/void", [&](pqxx::work& tx) { return void_reservations(tx, attempt_ids, now); });
}

// ---- charges without a step attempt ----

settlement charge(pqxx::work& tx, const charge_request& c, time_point now) {
    if (c.campaign_id <= 0 || c.credits < 0 || c.action.empty()) {
        throw std::invalid_argument("ledger charge: campaign " + std::to_string(c.campaign_id) + ", credits " +
                                    std::to_string(c.credits) + ", action '" + c.action +
                                    "': the campaign id must be positive, credits not negative, the action named");
    }
    const std::string day = utc_day(now);
    record_rows pair_rows(batch_rows::pair);
    pair_rows.row().add("campaign_id", c.campaign_id).add("sender", c.sender);
    const std::string pairs = pair_rows.text();
    const pair_key key{c.campaign_id, c.sender};
    auto campaign_scope = [&key](locked_scopes& s) {
        std::int64_t id = 0;
        for (const auto& r : s.by_pair[key]) {
            id = r.kind == refusal::campaign_budget ? r.scope_id : id;
        }
        return id;
    };
    // The same scopes, locked in the same order, as a reservation of this call would take.
    auto scopes = lock_reserve_scopes(tx, pairs, day);
    if (scopes.missing || campaign_scope(scopes) == 0) {
        // A campaign with no ledger scope yet gets an empty one: the charge is then a shortfall,
        // recorded all the same (no credit the API charged is dropped).
        run(tx, "ledger/ensure_campaign_scope", c.campaign_id);
        run(tx, "ledger/ensure_scopes", pairs, day);
        scopes = lock_reserve_scopes(tx, pairs, day);
    }
    const std::int64_t campaign = campaign_scope(scopes);
    if (campaign == 0) {
        throw store_error("ledger charge: campaign " + std::to_string(c.campaign_id) +
                          " has no budget scope after ensure_campaign_scope (a bug: roll back)");
    }
    legs_t legs{{campaign, true}};
    std::vector<std::int64_t> scope_ids{campaign};
    for (const auto& s : scopes.by_pair[key]) {
        if (s.scope_id != 0 && s.scope_id != campaign) {
            legs.emplace_back(s.scope_id, false);
            scope_ids.push_back(s.scope_id);
        }
    }
    const auto transfer_id = run(tx, "ledger/next_transfer_id")[0][0].as<std::int64_t>();
    write_set w;
    settlement out;
    out.status = settle_status::posted;
    out.posted = c.credits;
    out.overrun = c.credits;   // nothing was reserved: all of it is above the reservation
    out.shortfall = settle_legs(w, transfer_id, 0, c.credits, legs, scopes.available);
    w.new_transfers.row()
        .add("transfer_id", transfer_id)
        .add("attempt_id", nullptr)
        .add("campaign_id", c.campaign_id)
        .add("sender", c.sender)
        .add("action", c.action)
        .add("day", day)
        .add("reserved", 0)
        .add("scopes", scope_ids)
        .add("state", "posted")
        .add("posted", c.credits)
        .add("overrun", out.overrun)
        .add("shortfall", out.shortfall);
    locked(apply(tx, w));
    if (out.shortfall > 0) {
        pause(tx, c.campaign_id,
              "the API charged " + orch::text::counted(out.shortfall, "credit", "credits") + " beyond the budget (" +
                  c.action + ": " + orch::text::counted(c.credits, "credit", "credits") + ")");
    }
    return out;
}

// ---- budgets ----

std::optional<budget> get_budget(pqxx::transaction_base& tx, std::int64_t campaign_id) {
    auto r = run(tx, "ledger/get_budget", campaign_id);
    if (r.empty()) {
        return std::nullopt;
    }
    return budget{r[0][0].as<std::int64_t>(), optional_cap(r[0][1].as<std::int64_t>()),
                  optional_cap(r[0][2].as<std::int64_t>())};
}

budget_change set_budget(pqxx::work& tx, std::int64_t campaign_id, const budget& b, time_point now) {
    if (b.total < 0 || b.per_account.value_or(0) < 0 || b.per_day.value_or(0) < 0) {
        throw std::invalid_argument("ledger budget of campaign " + std::to_string(campaign_id) +
                                    ": budgets cannot be negative");
    }
    run(tx, "ledger/upsert_budget", campaign_id, b.total, b.per_account.value_or(-1), b.per_day.value_or(-1));
    run(tx, "ledger/ensure_campaign_scope", campaign_id);
    std::vector<std::int64_t> ids;
    std::map<std::int64_t, std::optional<std::int64_t>> target;
    std::int64_t campaign_scope = 0;
    for (const auto& r : run(tx, "ledger/budget_scopes", campaign_id, utc_day(now))) {
        auto id = r[0].as<std::int64_t>();
        auto kind = r[1].as<std::string>();
        ids.push_back(id);
        target[id] = kind == "campaign" ? std::optional<std::int64_t>(b.total)
                     : kind == "account" ? b.per_account
                                         : b.per_day;
        if (kind == "day" && b.per_day) {
            // The cap counts the whole day: what the day's transfers outside this scope hold or
            // cost (made while the campaign had no day cap) is not the scope's to give.
            const auto outside = run(tx, "ledger/day_spend_outside", campaign_id, r[2].as<std::string>(), id);
            target[id] = std::max<std::int64_t>(0, *b.per_day - as_i64(outside[0][0]) - as_i64(outside[0][1]));
        } else if (kind == "account" && b.per_account) {
            // The cap counts the campaign's whole life through the sender: what its transfers
            // outside this scope hold or cost (made while it had no per-account cap) likewise.
            const auto outside = run(tx, "ledger/sender_spend_outside", campaign_id, r[2].as<std::string>(), id);
            target[id] = std::max<std::int64_t>(0, *b.per_account - as_i64(outside[0][0]) - as_i64(outside[0][1]));
        }
        campaign_scope = kind == "campaign" ? id : campaign_scope;
    }
    lock_available(tx, ids);
    write_set w;
    budget_change out;
    for (const auto& r : run(tx, "ledger/scope_accounts", id_array(ids))) {
        auto id = r[0].as<std::int64_t>();
        std::int64_t funded = -r[1].as<std::int64_t>();
        std::int64_t available = r[2].as<std::int64_t>();
        const auto& want = target[id];
        if (want) {
            // available = budget - reserved - spent: move the difference between what the scope
            // should have been given and what it was given (grants plus charges beyond it).
            std::int64_t delta = *want - funded;
            if (delta > 0) {
                w.entries.push_back({0, 0, id, "grant", "available", "funding", delta});
                available += delta;
            } else if (delta < 0 && available > 0) {
                std::int64_t back = std::min(-delta, available);
                w.entries.push_back({0, 0, id, "ungrant", "funding", "available", back});
                available -= back;
            }
        }
        out.available = id == campaign_scope ? available : out.available;
    }
    if (!w.entries.empty()) {
        locked(apply(tx, w));
    }
    if (out.available > 0) {
        out.resumed = !run(tx, "ledger/resume_campaign", campaign_id).empty();
    }
    return out;
}

budget_change set_budget(pqxx::connection& conn, std::int64_t campaign_id, const budget& b, time_point now) {
    return in_transaction(conn, "ledger/set_budget",
                          [&](pqxx::work& tx) { return set_budget(tx, campaign_id, b, now); });
}

// ---- reports ----

std::vector<cap_use_row> cap_use(pqxx::transaction_base& tx, std::int64_t campaign_id, time_point now) {
    std::vector<cap_use_row> out;
    for (const auto& r : run(tx, "ledger/cap_use", campaign_id, utc_day(now))) {
        out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), optional_cap(r[2].as<std::int64_t>()),
                       r[3].as<std::int64_t>(), r[4].as<std::int64_t>(), r[5].as<std::int64_t>()});
    }
    return out;
}

std::int64_t read_allowance(pqxx::transaction_base& tx, std::int64_t campaign_id, const std::string& account,
                            time_point now) {
    auto r = run(tx, "intake/campaign_available", campaign_id);
    std::int64_t have = r.empty() ? std::numeric_limits<std::int64_t>::max() : r[0][0].as<std::int64_t>();
    for (const auto& u : cap_use(tx, campaign_id, now)) {
        if (u.cap && (u.scope == "day" || (u.scope == "account" && u.key == account))) {
            have = std::min(have, u.available);
        }
    }
    return have;
}

std::vector<campaign_budget_row> campaign_budgets(pqxx::transaction_base& tx, const std::string& name) {
    std::vector<campaign_budget_row> out;
    for (const auto& r : run(tx, "ledger/campaign_budgets", name)) {
        campaign_budget_row c;
        c.campaign_id = r[0].as<std::int64_t>();
        c.campaign = r[1].as<std::string>();
        c.state = r[2].as<std::string>();
        c.pause_reason = r[3].as<std::string>();
        if (r[4].as<std::int64_t>() >= 0) {
            c.limits = budget{r[4].as<std::int64_t>(), optional_cap(r[5].as<std::int64_t>()),
                              optional_cap(r[6].as<std::int64_t>())};
        }
        c.available = as_i64(r[7]);
        c.reserved = as_i64(r[8]);
        c.spent = as_i64(r[9]);
        c.overrun = as_i64(r[10]);
        c.shortfall = as_i64(r[11]);
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<spend_row> spend(pqxx::transaction_base& tx, std::int64_t campaign_id, dimension by) {
    const char* name = by == dimension::action ? "ledger/spend_by_action"
                       : by == dimension::account ? "ledger/spend_by_account"
                                                  : "ledger/spend_by_day";
    std::vector<spend_row> out;
    for (const auto& r : run(tx, name, campaign_id)) {
        out.push_back({r[0].as<std::string>(), as_i64(r[1]), as_i64(r[2]), as_i64(r[3]), as_i64(r[4]), as_i64(r[5]),
                       as_i64(r[6]), as_i64(r[7])});
    }
    return out;
}

std::vector<std::string> check(pqxx::transaction_base& tx) {
    std::vector<std::string> out;
    for (const auto& r : run(tx, "ledger/check")) {
        out.push_back(r[0].as<std::string>() + ": scope " + r[1].as<std::string>() + " account " +
                      r[2].as<std::string>() + " is " + r[3].as<std::string>() + ", should be " +
                      r[4].as<std::string>());
    }
    return out;
}

}  // namespace orch::engine::ledger
