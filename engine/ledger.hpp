// orch::engine::ledger: campaign credit budgets in Postgres, as a double-entry ledger with
// two-phase transfers (schema/migrations/0002_ledger.up.sql explains the accounts and entries).
//
//   before a billable call:  reserve  the cost model's upper bound          (pending)
//   after it:                post     the actual charge, the rest released  (posted)
//                            or void  everything (the call failed: errors cost 0) (voided)
//
// A transfer is unique per step attempt (step_attempts.attempt_id): a second reserve, post or
// void of the same attempt changes nothing. No balance can go below zero: the database refuses it
// (CHECK constraints), and every writer locks the budget rows it draws from (FOR UPDATE, in one
// order) before it moves them, so concurrent workers never overspend. The functions below lock
// first and decide from the locked balances; the worker's fast path (held_balances, further
// down) decides from balances read without locks and locks only for its last statement.
//
// The batch functions take the caller's open transaction (the worker reserves in its claim
// transaction, atomic with the intent rows, and posts/voids in its settle transaction); the
// overloads taking a pqxx::connection run one transaction of their own and commit it.
//
// Errors: invalid input (a negative amount, a zero attempt id) throws std::invalid_argument and
// changes nothing; a database error throws store_error naming the query ("ledger/apply: ...").
// After an error the caller's transaction is unusable and must be rolled back.
#pragma once

#include "engine/codes.hpp"
#include "engine/result.hpp"

#include <pqxx/connection>
#include <pqxx/transaction>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace orch::engine::ledger {

using time_point = std::chrono::system_clock::time_point;

// Prefix of the pause reason the ledger writes; set_budget resumes only such pauses.
inline constexpr std::string_view pause_prefix = "budget exhausted:";

// ---- budgets ----

struct budget {
    std::int64_t total = 0;                   // the campaign's budget (campaign file: budget_credits)
    std::optional<std::int64_t> per_account;  // cap per sender account over the campaign's life
    std::optional<std::int64_t> per_day;      // cap per UTC day
    bool operator==(const budget&) const = default;
};

struct budget_change {
    std::int64_t available = 0;  // the campaign's available credits after the change
    bool resumed = false;        // the campaign was paused for its budget and is active again
};

// Sets a campaign's budgets (creating its ledger scope on first use) and moves the balances to
// match: available = budget - reserved - spent. Lowering below what is reserved or spent leaves
// available at 0 (nothing already reserved is taken back). Day caps apply from `now`'s UTC day on,
// and count that day's whole spend: what it spent or holds outside the day's scope (from before
// the cap) is not the scope's to give.
// A campaign paused by the ledger resumes when credits are available again.
// Precondition: the campaign exists. Throws std::invalid_argument for a negative amount.
budget_change set_budget(pqxx::work& tx, std::int64_t campaign_id, const budget& b, time_point now);
budget_change set_budget(pqxx::connection& conn, std::int64_t campaign_id, const budget& b, time_point now);
// nullopt: the campaign has no budget in the ledger.
std::optional<budget> get_budget(pqxx::transaction_base& tx, std::int64_t campaign_id);

// ---- two-phase transfers ----

struct reserve_request {
    std::int64_t attempt_id = 0;   // step_attempts.attempt_id: the idempotency key (> 0); the
                                   // intent row may be inserted later in the same transaction
    std::int64_t campaign_id = 0;
    std::string sender;            // the sender account id (per-account caps; "" for none)
    std::string action;            // what the call is, for reports ("invite", "search_people", ...)
    std::int64_t credits = 0;      // the cost model's upper bound (>= 0)
};

using refusal = budget_refusal;  // engine/codes.hpp
std::string_view to_string(refusal r);

struct reservation {
    std::int64_t attempt_id = 0;
    bool reserved = false;       // credits are held for the attempt (by this call, or earlier)
    bool duplicate = false;      // the attempt already had a transfer: nothing changed
    std::int64_t credits = 0;    // held for it (for a duplicate: what the earlier reserve held)
    refusal why = refusal::none;
    // What is left after this batch in the campaign's budget (reserved, campaign_budget), or in
    // the cap that refused (day_budget, account_budget).
    std::int64_t available = 0;
    time_point retry_at{};       // day_budget: the next UTC midnight; in_flight: when to try again
};

// Reserves in the order given: an attempt is reserved when every budget it draws from (the
// campaign's, and its sender's and today's caps when set) still covers it, else refused and the
// next one is tried. A campaign refused for its own budget is paused in the same transaction with
// the reason stored ("budget exhausted: ..."), unless its calls in flight (this batch's, and those
// whose lease is live: ledger/reserved_balance.sql) hold reservations that could cover the refused
// one once they settle: that one is refused `in_flight`, to be tried again 3-8 s later, and the
// campaign runs on. The same holds for a day or per-account cap (the sender's own calls for the
// latter), which would otherwise make the call wait a day. One result per request, in order.
std::vector<reservation> reserve(pqxx::work& tx, const std::vector<reserve_request>& batch, time_point now);
std::vector<reservation> reserve(pqxx::connection& conn, const std::vector<reserve_request>& batch, time_point now);

// Which of these calls a cap would refuse now and for long: a day cap (until the next UTC
// midnight) or a sender's cap in the campaign that is used up, and that the campaign's calls in
// flight could not make room in by giving credits back. Read without locks, and writes nothing:
// a call the limits gate holds back for a while (the API key's rate) waits for the cap instead of
// coming back for the gate only to be refused then. A campaign's own budget is left to reserve()
// (its refusal pauses the campaign). why is none for every other call; attempt ids may be 0.
std::vector<reservation> standing_refusals(pqxx::work& tx, const std::vector<reserve_request>& batch, time_point now);

// ---- the worker's fast path ----
// Every writer above locks the budget rows it draws from until its transaction ends. A worker
// cycle writes a batch of settles and reservations and then commits, so every lane and worker
// process of a campaign queued on that campaign's rows for the whole of it (with 4 processes,
// 40 s of waits on lock_available in an 8-second run of tests/bench/engine_bench.sh).
// With held_balances, settle() and reserve() read the balances without locking, write transfers
// and entries, and hold the balance changes back; apply_balances() then locks the rows (the same
// order as every writer) and moves the balances, as the transaction's last statement, so the
// rows are held only from there to the commit. The CHECK constraints still refuse an overdraft.
// The transfers to settle are read without a lock too (what a settle reads of them never changes);
// ledger/apply settles each only while it is still pending, under the row's lock.
// A decision that depends on the exact balance is never taken on an unlocked read: a refusal, a
// charge above its reservation, a scope still to create, an attempt already settled or never
// reserved, a transfer settled by another transaction since it was read — and an overdraft
// refused by apply_balances — answer a `contended` error (engine/result.hpp). The caller then
// rolls back to a savepoint taken before and does the same work with the functions above.
struct held_balances {
    std::map<std::pair<std::int64_t, std::string>, std::int64_t> delta;   // (scope_id, account kind) -> change
};
result<std::vector<reservation>> reserve(pqxx::work& tx, const std::vector<reserve_request>& batch, time_point now,
                                         held_balances& held);
result<void> apply_balances(pqxx::work& tx, const held_balances& held);

struct post_request {
    post_request() = default;
    post_request(std::int64_t attempt, std::int64_t charged) : attempt_id(attempt), credits(charged) {}
    post_request(std::int64_t attempt, std::int64_t charged, std::int64_t campaign, std::string sender_id,
                 std::string action_name)
        : attempt_id(attempt), credits(charged), campaign_id(campaign), sender(std::move(sender_id)),
          action(std::move(action_name)) {}

    std::int64_t attempt_id = 0;
    std::int64_t credits = 0;      // what the API charged (metadata.credits_consumed, or the V1 rule)
    // Optional: where to record a charge for an attempt that was never reserved (a charge is
    // never dropped). With campaign_id 0 such an attempt is reported `unknown` and not recorded.
    std::int64_t campaign_id = 0;
    std::string sender;
    std::string action;
};

enum class settle_status {
    posted,
    voided,
    already_settled,   // posted or voided before: nothing changed
    unknown,           // no transfer for this attempt (and no campaign given to record it under)
};
std::string_view to_string(settle_status s);

struct settlement {
    std::int64_t attempt_id = 0;
    settle_status status = settle_status::unknown;
    std::int64_t reserved = 0;
    std::int64_t posted = 0;      // for already_settled: what was posted then
    std::int64_t overrun = 0;     // posted above reserved
    std::int64_t shortfall = 0;   // the part of the overrun the campaign's budget could not cover
};

// Posts actual charges. Charged <= reserved: the rest is released. Charged > reserved (the API
// billed above the cost model's upper bound): the whole charge is recorded as spent; the excess
// comes out of what the budget has available, and what it cannot cover is recorded as a
// shortfall and the campaign is paused ("budget exhausted: ..."). Balances never go below zero.
std::vector<settlement> post(pqxx::work& tx, const std::vector<post_request>& batch, time_point now);
std::vector<settlement> post(pqxx::connection& conn, const std::vector<post_request>& batch, time_point now);
// Posts some attempts and voids others in one go (the worker's settle transaction): the same
// as post() then void_reservations(), in half the statements. Results: posts, then voids.
std::vector<settlement> settle(pqxx::work& tx, const std::vector<post_request>& posts,
                               const std::vector<std::int64_t>& voids, time_point now);
// The same on the fast path (held_balances above).
result<std::vector<settlement>> settle(pqxx::work& tx, const std::vector<post_request>& posts,
                               const std::vector<std::int64_t>& voids, time_point now, held_balances& held);
// Releases the whole reservation of each attempt (the call failed or never left).
std::vector<settlement> void_reservations(pqxx::work& tx, const std::vector<std::int64_t>& attempt_ids,
                                          time_point now);
std::vector<settlement> void_reservations(pqxx::connection& conn, const std::vector<std::int64_t>& attempt_ids,
                                          time_point now);

// ---- charges without a step attempt ----

// A call the API billed outside the steps, with no step attempt and no reservation before it
// (the audience search of `campaign apply`).
struct charge_request {
    std::int64_t campaign_id = 0;  // > 0; the campaign's budget scope is created when missing
    std::string sender;            // the account the call went through (per-account caps; "" for none)
    std::string action;            // what the call was ("search_people"); not empty
    std::int64_t credits = 0;      // what the API charged (>= 0)
};

// Records the charge as a transfer posted at once: attempt_id NULL, reserved 0, posted the
// charge, on `now`'s UTC day, drawing from the same scopes a reservation of it would (the
// campaign's, and its sender's and the day's caps when set). It goes the way of any charge above
// its reservation (post()): absorbed from the available balance as far as it goes, the rest a
// shortfall from funding, and a shortfall in the campaign's own budget pauses the campaign
// ("budget exhausted: ..."). Every call records one transfer (there is no idempotency key: each
// call is a charge of its own). Status `posted`; attempt_id 0.
// Throws std::invalid_argument for a non-positive campaign id, negative credits or no action.
settlement charge(pqxx::work& tx, const charge_request& c, time_point now);

// ---- reports (views of 0002) ----

struct campaign_budget_row {
    std::int64_t campaign_id = 0;
    std::string campaign;
    std::string state;
    std::string pause_reason;
    std::optional<budget> limits;   // nullopt: no budget in the ledger
    std::int64_t available = 0, reserved = 0, spent = 0, overrun = 0, shortfall = 0;
};
// All campaigns (name "") or the one named, by name.
std::vector<campaign_budget_row> campaign_budgets(pqxx::transaction_base& tx, const std::string& name);

// What an apply's audience search left of the campaign's budget and of the caps it drew from,
// its charge counted (store::apply_outcome::caps; the apply's warnings, engine/campaign_lifecycle).
struct search_cap_use {
    // Today's (UTC) day cap (nullopt: none), what it has left, and today's whole spend.
    std::optional<std::int64_t> day_cap{};
    std::int64_t day_cap_left = 0;
    std::int64_t day_cap_used = 0;
    // The per-account cap of the sender the search went through (nullopt: none), what it has
    // left, and all the campaign spent or holds through that sender.
    std::string sender{};
    std::optional<std::int64_t> sender_cap{};
    std::int64_t sender_cap_left = 0;
    std::int64_t sender_cap_used = 0;
    // The campaign's budget (nullopt: none in the ledger) and what it has left.
    std::optional<std::int64_t> budget_total{};
    std::int64_t budget_left = 0;
};

// Where a campaign's caps stand: today's per-day cap (the scope of `now`'s UTC day) and each
// sender's per-account cap, as far as they have been drawn from (a scope is made on first use:
// no row means nothing reserved or spent under that cap yet). `cap` is nullopt for the scope of a
// cap since removed.
struct cap_use_row {
    std::string scope;                 // "day" or "account"
    std::string key;                   // the day (YYYY-MM-DD) or the sender account id
    std::optional<std::int64_t> cap;
    std::int64_t reserved = 0, spent = 0, available = 0;
};
std::vector<cap_use_row> cap_use(pqxx::transaction_base& tx, std::int64_t campaign_id, time_point now);

// What a campaign may still spend through `account` on a read charged without a reservation
// (serve's sweep and attribution reads, the inbox's live read): the least of its budget's
// available credits, today's day cap and its cap on the account. No budget in the ledger: the
// largest int64 (not ours to stop).
std::int64_t read_allowance(pqxx::transaction_base& tx, std::int64_t campaign_id, const std::string& account,
                            time_point now);

enum class dimension { action, account, day };
struct spend_row {
    std::string key;                     // the action, the sender account or the day (YYYY-MM-DD)
    std::int64_t calls = 0, pending = 0, posted_calls = 0, voided = 0;
    std::int64_t reserved_pending = 0;   // held now for calls in flight
    std::int64_t reserved_posted = 0;    // what was reserved for the calls since posted
    std::int64_t posted = 0;             // what they cost
};
std::vector<spend_row> spend(pqxx::transaction_base& tx, std::int64_t campaign_id, dimension by);

// The ledger's invariants that do not hold (view ledger_check), one line each; empty when sound.
std::vector<std::string> check(pqxx::transaction_base& tx);

// The UTC day of `t` as YYYY-MM-DD.
std::string utc_day(time_point t);

}  // namespace orch::engine::ledger
