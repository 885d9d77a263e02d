// orch::engine store: the Postgres side of the orchestrator (libpqxx, blocking). Every query is a
// named file under schema/queries (STYLE E1). One store owns one connection and is used by one
// thread at a time; workers open one per lane.
//
// Errors: pqxx exceptions are translated here into store_error (with the query name and the
// SQLSTATE when there is one); nothing else escapes.
#pragma once

#include "campaigns/model.hpp"
#include "engine/result.hpp"
#include "engine/account_quotas.hpp"
#include "engine/codes.hpp"
#include "engine/ledger.hpp"

#include <nlohmann/json.hpp>
#include <pqxx/connection>
#include <pqxx/except>
#include <pqxx/transaction>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace orch::engine {

using json = nlohmann::json;

struct store_error : failure {
    store_error(const std::string& what, std::string sqlstate_ = {})
        : failure(category_of_sqlstate(sqlstate_), what), sqlstate(std::move(sqlstate_)) {}
    std::string sqlstate;
};

// Called inside a catch handler of a pqxx::failure: rethrows it as a store_error naming `what`,
// with its SQLSTATE (08006 for a lost connection).
[[noreturn]] void rethrow_as_store_error(std::string_view what);

// Runs `once` (one transaction, which throws store_error) again when Postgres aborted it to break
// a deadlock (40P01), up to three tries in all, after a pause of 50-150 ms, then twice that. An
// operator's command (apply, budget set, a state change, lead operations, the do-not-contact
// list) locks rows a worker's lane transaction may hold in another order; Postgres aborts one
// side, and when it is the command, nothing was written and the operator should not have to run
// it again. The pause: the transaction that won has just been let go and still has its last
// statements to run; a try at once could take the rows before it and deadlock with it again.
namespace detail {
void again_after_deadlock(std::string_view what, const std::function<void()>& once);
}
template <typename F>
auto again_after_deadlock(std::string_view what, F&& once) -> decltype(once()) {
    if constexpr (std::is_void_v<decltype(once())>) {
        detail::again_after_deadlock(what, once);
    } else {
        std::optional<decltype(once())> out;
        detail::again_after_deadlock(what, [&] { out.emplace(once()); });
        return std::move(*out);
    }
}

// Runs `fn`, turning pqxx's exceptions into store_error naming `what` (rethrow_as_store_error).
template <typename F>
auto guarded(const char* what, F&& fn) -> decltype(fn()) {
    try {
        return fn();
    } catch (const pqxx::failure&) {
        rethrow_as_store_error(what);
    }
}

// Canonical form of a profile URL, the key that deduplicates leads across campaigns (one
// definition for the loader and the store: campaigns/model.hpp).
using campaigns::canonical_profile_url;

struct account_row {
    std::string account_id;
    std::string platform = "network";
    std::string api_status = "OK";
    bool connected = true;
    std::string display_name;
    std::string webhook_id;
    std::string updated_at;
    std::string last_event;
    std::string label;
    quota_overrides quotas{};  // per-account quota overrides (migration 0007); none by default
    // The time zone of its quota day (migration 0032); "" when not chosen yet (counts in UTC).
    std::string time_zone;
};

struct lead_input {
    std::string profile_url;
    json fields = json::object();  // first_name, company, ... (strings)
};

// A call the API billed while the campaign was applied, outside its steps (the audience
// search): recorded in the campaign's ledger in the apply's transaction (ledger::charge).
struct apply_charge {
    std::string sender;          // the account the call went through
    std::string action;          // "search_people"
    std::int64_t credits = 0;    // what the API charged
};

struct apply_outcome {
    std::int64_t campaign_id = 0;
    int version = 0;
    bool created = false;    // a new campaign
    bool changed = false;    // a new version was stored (false: same definition re-applied)
    std::int64_t leads = 0;         // leads in the audience
    std::int64_t enrolled = 0;      // new enrollments
    std::int64_t skipped = 0;       // already contacted by another campaign, or do-not-contact
    std::int64_t charged = 0;       // credits of the apply_charge recorded (0: none)
    std::int64_t shortfall = 0;     // the part of it the campaign's budget could not cover
    std::string paused;             // the pause reason when that shortfall paused the campaign
    std::string state;              // the campaign's state after the apply (completed: nothing live)
    bool resumed_ended = false;     // it was paused at its end_at and the new end_at is later
    std::int64_t excluded_stopped = 0;  // live leads this version's `exclude:` cancelled
    std::int64_t excluded_calling = 0;  // and those it names that were in a call (their worker stops them)
    // With `exclude: companies:`, the live leads that have no company field: none can match.
    std::int64_t excluded_companies_unmatchable = 0;
    // A live budget (`budget set` since the last apply) that differs from the file's: kept (the
    // new version did not change the file's budget) or replaced by the file's (it did).
    std::optional<ledger::budget> live_budget;
    bool live_budget_kept = false;
    // With move_running: the live leads moved to the current version, and those kept on an older
    // one, by step and why ("in a call", "not in the version", "now of kind send", "busy: a
    // worker held it"; campaigns/kept_running.sql).
    std::int64_t moved = 0;
    struct kept_leads {
        std::string step;
        std::string why;
        std::int64_t count = 0;
    };
    std::vector<kept_leads> kept;
    // The senders whose quota day is in another time zone than the campaign's schedule
    // (campaigns/zone_conflicts.sql): their day quotas reset at their own midnight. A sender
    // without one took the campaign's zone in this apply (campaigns/adopt_time_zone.sql).
    struct zone_conflict {
        std::string account_id;
        std::string time_zone;  // the account's
        std::string label;      // "" for none
    };
    std::vector<zone_conflict> zone_conflicts;
    // The senders with quotas of their own (`accounts limits`; campaigns/sender_quotas.sql), by
    // label or id: the apply's warning about pacing and ramp-up counts with them.
    std::vector<account_overrides> own_quotas;
    std::size_t senders = 0;   // the campaign's senders
    // What the audience search's charge left of the budget and its caps: the apply warns of
    // one it used up.
    ledger::search_cap_use caps{};
    // A new version of a campaign that existed: what the apply warns of. The budget it set
    // (total) when that is below what is spent or reserved already (committed), the live leads a
    // start_at still to come holds (and when), and the live leads on senders the version no
    // longer lists, by account.
    struct budget_below {
        std::int64_t total = 0;
        std::int64_t committed = 0;
    };
    std::optional<budget_below> budget_below_committed;
    // A day cap (today's UTC day) or a per-account cap (a sender's) this version set or changed,
    // when it is no more than what the campaign already spent or holds under it.
    struct cap_below {
        std::string scope;  // "day" or "account"
        std::string key;    // the UTC day or the sender's account id
        std::int64_t cap = 0;
        std::int64_t used = 0;
    };
    std::vector<cap_below> caps_below_used;
    std::int64_t held_for_start = 0;
    std::string start_at;
    struct off_sender {
        std::string account_id;
        std::string label;
        std::int64_t count = 0;
        bool connected = true;
    };
    std::vector<off_sender> off_senders;
};

struct funnel_row {
    std::int64_t found = 0, skipped = 0, checked = 0, invited = 0, accepted = 0, messaged = 0, replied = 0,
                 failed = 0, live = 0, credits = 0;
};

// The exception being handled (call inside a catch block) in the engine's taxonomy: a failure's
// own error; libpqxx's lost connection unavailable, its SQL errors by SQLSTATE; anything else
// internal.
error error_of_current_exception();

// A change the campaign's state forbids (applying a cancelled campaign, resuming a cancelled one):
// a conflict the caller reports (409 in the admin API, exit 2 in the CLI), not a database failure.
struct campaign_conflict : failure {
    explicit campaign_conflict(const std::string& what) : failure(error_category::conflict, what) {}
};

// The digest stored with each campaign version: SHA-256 (hex) of the canonical JSON's dump().
std::string definition_digest(const json& canonical);

// The stored campaign of a name as an apply sees it before it starts (store::current_definition).
struct current_definition_row {
    std::int64_t campaign_id = 0;
    std::string state;
    int version = 0;
    std::string digest;  // of the current version
    // What the current version's audience search depends on (campaigns/search_basis.sql, canonical
    // JSON); "" when its audience is not a search.
    std::string search_basis;
    // What its budget holds for calls in flight and has spent, and what today's UTC day holds and
    // has spent (the day cap's count): an apply refuses to send a search past either.
    std::int64_t budget_used = 0;
    std::int64_t today_used = 0;
    // What its scope for the sender an audience search goes through (the one current_definition
    // was asked about) holds and has spent: the per-account cap's count (ledger/sender_use).
    std::int64_t sender_used = 0;
    // The budget its current version's file gave, and the live one (`budget set` may have changed
    // it; an apply keeps it unless its file changes the budget it gives).
    std::optional<ledger::budget> file_budget{};
    std::optional<ledger::budget> live_budget{};
};

struct campaign_row {
    std::string name;
    std::string state;
    std::string pause_reason;
    int version = 0;
    std::int64_t enrollments = 0;
    std::int64_t live = 0;
};

// ---- availability (used by the store and by workers, inside the caller's transaction) ----
// The account is unavailable (disconnected, inactive, unknown to the API): marks it, parks its
// live enrollments out of the claim index and moves the leads of `reassign` campaigns that it
// has not contacted yet to the least loaded connected sender of their campaign. Returns how many
// enrollments moved.
std::int64_t account_unavailable(pqxx::work& tx, const std::string& account_id, const std::string& api_status);
// The same for an ACCOUNT_INACTIVE answer to calls claimed under `logins` (call_target::
// account_login): nothing, and nullopt, when the account is connected under a later login (a
// re-login overtook the requests; migration 0025).
struct unavailable_marking {
    bool was_connected = false;  // this call marked it (else it was unavailable already)
    std::int64_t moved = 0;      // enrollments moved to other senders
};
std::optional<unavailable_marking> account_unavailable_if_login(pqxx::work& tx, const std::string& account_id,
                                                                const std::string& api_status,
                                                                const std::set<std::int64_t>& logins);
// The account is connected again: marks it and wakes its parked enrollments (active campaigns).
void account_available(pqxx::work& tx, const std::string& account_id, const std::string& api_status);
// Moves the named campaign to `state` (active, paused, cancelled, completed) in the caller's
// transaction: writes the state and its reason, and cancels, parks or wakes its enrollments to
// match. No check of the move itself (callers decide which moves they allow). False when no
// such campaign.
bool set_campaign_state(pqxx::work& tx, const std::string& name, const std::string& state, const std::string& reason);
// Pauses an active campaign with a reason and parks its live enrollments; false when it was not
// active.
bool pause_campaign(pqxx::work& tx, std::int64_t campaign_id, const std::string& reason);

// A live change of a campaign's budget (`orchestrator budget set`, PUT /v1/campaigns/{name}/budget).
// Each field left nullopt keeps the ledger's current value; `no_cap` (an engaged optional holding
// nullopt) removes a cap.
struct budget_update {
    // As a campaign file's (campaigns/schema.json): more is no budget, and a number above 2^53
    // would not show exactly in /metrics (a double).
    static constexpr std::int64_t credits_max = 1'000'000'000'000;
    std::optional<std::int64_t> credits;
    std::optional<std::optional<std::int64_t>> per_day;
    std::optional<std::optional<std::int64_t>> per_account;
};
struct budget_set_outcome {
    std::int64_t campaign_id = 0;
    std::int64_t total = 0;
    std::optional<std::int64_t> per_day, per_account;
    std::int64_t available = 0;   // the campaign's available credits after the change
    bool resumed = false;         // it was paused for its budget and is active again
    std::int64_t woken = 0;       // leads that waited for a per-day or per-account cap, due again
    std::vector<std::int64_t> woken_leads{};  // their enrollment ids
    std::int64_t committed = 0;   // spent and reserved: a budget below it leaves nothing available
    json today = nullptr;         // with a day cap: today's use of it (cap_use_json's "today")
    json accounts = json::array();  // with a per-account cap: each sender's use of it (cap_use_json's "accounts")
};
// What went wrong with a budget_update that changed nothing (an unknown campaign is nullopt).
struct budget_update_error : failure {
    explicit budget_update_error(const std::string& what) : failure(error_category::unprocessable, what) {}
};

// Sets a campaign's budget in the ledger in the caller's transaction (apply, budget set): a
// campaign the ledger paused resumes (its parked leads wake) when credits are available again,
// and leads waiting for a per-day or per-account cap are looked at again. Returns the change.
// Whether an apply of a definition giving the budget `wanted` sets it: when the campaign is new
// (`previous`, the budget its last version's file gave, is nullopt) or the file changes it. Else
// the apply keeps the live budget, which `budget set` may have changed.
bool file_changes_budget(const std::optional<ledger::budget>& previous, const ledger::budget& wanted);
budget_set_outcome set_campaign_budget(pqxx::work& tx, std::int64_t campaign_id, std::int64_t total,
                                       std::optional<std::int64_t> per_day, std::optional<std::int64_t> per_account,
                                       std::chrono::system_clock::time_point now);

// Where a campaign's caps stand now (budget show, GET /v1/budget), for the `per_day` and
// `per_account` caps it has (nullopt: none, and nothing is listed for it):
//   "today":    {"day", "per_day", "reserved", "spent", "available"} for `now`'s UTC day, or null
//   "accounts": [{"account", "per_account", "reserved", "spent", "available"}], the senders that
//               drew from the cap so far
json cap_use_json(pqxx::transaction_base& tx, std::int64_t campaign_id, std::optional<std::int64_t> per_day,
                  std::optional<std::int64_t> per_account, std::chrono::system_clock::time_point now);
// A day cap's "today" (above) in words: "N used, M left", and ", K over the cap" when the day
// spent past it (serve's catch-up sweep reads, an audience search, a charge above its reservation).
std::string day_cap_use_text(const json& today);

// A campaign's spend from the ledger's views (budget show CAMPAIGN, GET /v1/budget?campaign=):
// {"by_action": [{"action", "calls", "pending", "posted_calls", "voided", "reserved_pending",
// "reserved_posted", "posted"}], "by_account": [... "account" ...], "by_day": [... "day" ...]}.
// Every transfer counts, a step's call or a charge without one (the audience search at apply,
// action search_people, reserved 0).
json spend_json(pqxx::transaction_base& tx, std::int64_t campaign_id);

// The API key is out of credits (INSUFFICIENT_CREDITS): pauses every active campaign with a
// "credits: ..." reason and parks their enrollments. Returns how many campaigns paused.
std::int64_t pause_for_credits(pqxx::work& tx, const std::string& why);

class store {
public:
    explicit store(const std::string& database_url);
    ~store();
    store(const store&) = delete;
    store& operator=(const store&) = delete;

    pqxx::connection& connection() { return *conn_; }

    // ---- migrations (STYLE E3) ----
    int current_version();
    // Applies every pending migration, each in its own transaction with its record row; returns
    // the versions applied (empty: already current). Safe to run concurrently (advisory lock).
    std::vector<int> migrate();
    // Throws store_error with a clear message unless the database is at the binary's version.
    void require_current();

    // ---- accounts ----
    void upsert_account(const account_row& a);
    std::vector<account_row> accounts();
    struct resolved_account {
        std::string account_id;
        bool connected = false;
    };
    // An account named by id or label; nullopt: unknown.
    std::optional<resolved_account> resolve_account(const std::string& id_or_label);
    static std::optional<resolved_account> resolve_account(pqxx::connection& conn, const std::string& id_or_label);
    void set_account_connected(const std::string& account_id, bool connected, const std::string& api_status);
    // A disconnection event that happened at `at` (nullopt: not said): applied as
    // set_account_connected(false) unless the account became connected after it (a re-login
    // since; migration 0023). Returns whether it was applied.
    bool account_disconnected(const std::string& account_id, const std::string& api_status,
                              std::optional<std::chrono::system_clock::time_point> at);
    void set_account_webhook(const std::string& account_id, const std::string& webhook_id);
    void set_account_last_event(const std::string& account_id, const std::string& event_id);

    // ---- per-account quota overrides (engine/account_quotas.hpp) ----
    struct quota_change {
        bool found = false;       // false: no account of that id or label; nothing changed
        std::string account_id;
        quota_overrides quotas{};  // after the change; as stored when refused
        std::string time_zone;     // the quota day's time zone after the change; "" when not chosen
        std::string previous_time_zone;  // before it
        std::string error;        // the change was refused (`change` said why); nothing changed
        bool changed = false;     // a different value was written
        std::int64_t woken = 0;   // leads waiting for the account's quota made due now
    };
    // `change` maps the account's current overrides to the new ones, or returns nullopt with
    // `error` set to refuse. One transaction with the account's row locked: concurrent changes
    // apply one after the other. No overrides are stored as NULL. A change also makes the
    // account's leads that wait for its day or week quota due now (the gate looks again with the
    // new numbers; accounts/wake_quota_waiters), and notifies idle workers. `time_zone` (checked
    // by the caller) sets the account's quota day (migration 0032) in the same transaction.
    using quota_change_fn = std::function<std::optional<quota_overrides>(const quota_overrides&, std::string& error)>;
    quota_change change_account_quotas(const std::string& id_or_label, const quota_change_fn& change,
                                       const std::optional<std::string>& time_zone = std::nullopt);

    // ---- campaigns ----
    // Stores a new version when the definition changed (digest differs) and enrolls the leads
    // not enrolled yet, each with the sender `assign(i)` chose, all in one transaction. A new
    // version sets the campaign's budget in the credit ledger (engine/ledger.hpp) from its
    // budget_credits. `charge` (optional: the audience search's cost) is recorded in the
    // campaign's ledger after that budget, changed or not (engine/ledger.hpp charge()); a charge
    // the budget cannot cover pauses the campaign and parks its leads, in the same transaction.
    // `progress` (optional) is told (leads enrolled so far, total) after each chunk of 5,000.
    // `move_running`: the live leads on older versions move to the current one where their step
    // is in it with the same kind (campaigns/move_running.sql); the others are counted in
    // apply_outcome::kept.
    // Runs again (three tries in all) when Postgres aborts it to break a deadlock with a worker.
    // `rolled_back`: the whole apply runs and its transaction is rolled back, so the outcome says
    // what an apply sent now would do and nothing is stored (a preview: the outcome's counts are
    // the apply's own, its warnings included; a new campaign's id and the ledger's transfer ids
    // are taken from their sequences and skipped).
    using apply_progress = std::function<void(std::int64_t done, std::int64_t total)>;
    apply_outcome apply_campaign(const std::string& name, const json& canonical, const std::string& source,
                                 const std::string& first_step, const std::vector<lead_input>& leads,
                                 const std::vector<std::string>& accounts, std::chrono::system_clock::time_point now,
                                 const apply_progress& progress = {},
                                 const std::optional<apply_charge>& charge = std::nullopt, bool move_running = false,
                                 bool rolled_back = false);
    std::vector<campaign_row> campaigns();
    // The campaign's state and current version's digest; nullopt when there is no such campaign.
    std::optional<current_definition_row> current_definition(const std::string& name,
                                                             const std::string& search_sender = "");
    bool campaign_exists(const std::string& name);
    // pause/resume/cancel/complete; false when no such campaign.
    bool set_campaign_state(const std::string& name, const std::string& state, const std::string& reason);
    std::int64_t live_enrollments(const std::string& name);
    funnel_row funnel(const std::string& name);
    // Changes the named campaign's budget in one transaction (see budget_update). nullopt: no such
    // campaign. Throws budget_update_error, changing nothing, for a negative amount, or a cap
    // above the total (the same rule as a campaign file's).
    std::optional<budget_set_outcome> update_campaign_budget(const std::string& name, const budget_update& u,
                                                             std::chrono::system_clock::time_point now);

    // ---- the API key's credits ----
    struct credit_read {
        std::int64_t drift = 0;       // since the previous read (see migrations 0003 and 0009)
        // The part of `drift` the calls in flight at this read and the last do not explain
        // (migration 0028): a read taken while calls are in flight sees +N, the next -N.
        std::int64_t unexplained = 0;
        std::int64_t monitoring = 0;  // expected webhook monitoring charges counted by this read
        // Credits the key was given since the previous read (a top-up, a refund: the balance rose,
        // and calls only take): the rise plus what the ledger posted and the monitoring. Such a
        // read counts no drift.
        std::int64_t added = 0;
        std::int64_t resumed = 0;     // campaigns resumed because the key has credits again
        std::int64_t completed = 0;   // active campaigns with nothing live, completed (migration 0017)
    };
    // Records a balance read from GET /v2/credits; a positive balance resumes the campaigns
    // paused for the key's credits. The monitoring days recorded since the previous read count
    // `monitoring_credits_per_day` each as expected charges, apart from the drift. It also completes
    // the active campaigns that have nothing live (the completion trigger's safety net).
    credit_read record_credit_read(std::int64_t balance, std::int64_t monitoring_credits_per_day = 0);
    // Campaigns paused because the key had no credits (credits/paused_count).
    std::int64_t campaigns_paused_for_credits();
    // Stops the campaigns whose end_at has passed (campaigns/pause_ended) and parks their leads;
    // answers their names.
    std::vector<std::string> pause_ended_campaigns();
    // Of a file audience's people (campaigns::audience::leads), how many an apply of campaign
    // `name` would skip, as campaigns/enroll does (campaign estimate).
    struct audience_skips {
        std::int64_t excluded = 0;        // by the file's own `exclude:`
        std::int64_t do_not_contact = 0;  // on the do-not-contact list
        std::int64_t elsewhere = 0;       // enrolled by another campaign
        std::int64_t already = 0;         // this campaign's leads already (a new version enrolls them no more)
        std::int64_t total() const { return excluded + do_not_contact + elsewhere + already; }
    };
    audience_skips estimate_skips(const std::string& name, const std::vector<std::map<std::string, std::string>>& leads,
                                  const campaigns::campaign::exclusions& exclude);
    // `serve` keeps these accounts monitored by a V2 webhook today (UTC): the API bills that day.
    void record_monitoring_day(const std::vector<std::string>& account_ids);
    // An apply's audience search, billed page by page before the apply books it (migration 0042):
    // its row counts as credits in flight for the balance reads until it ends. hold sets what the
    // search may have been billed so far (the row keeps the most it was told); end removes the
    // row, once the apply has booked the charge or stored nothing.
    std::int64_t begin_search_in_flight();
    void hold_search_in_flight(std::int64_t search_id, std::int64_t credits);
    void end_search_in_flight(std::int64_t search_id);

    // ---- events ----
    // Stores an inbox event once; returns its id and wakes the lead's enrollments, or nullopt
    // for a duplicate source id.
    // The newest events_quarantine rows (engine/intake.hpp), as the admin API and the CLI show
    // them: the body as text when it is UTF-8 JSON or text, else base64.
    json quarantined_events(std::int64_t limit);

    // Stores an event once by its source id and, when given (not ""), by its content key (an
    // event seen under two ids by two channels); nullopt for one already stored. `already`, when
    // given, runs in the insert's transaction under a lock on the event's person on the account
    // (events/lock_person): true leaves the event unstored, so that two channels' copies of one
    // message, stored at the same moment, are compared one after the other.
    using stored_check = std::function<bool(pqxx::work&)>;
    std::optional<std::int64_t> insert_event(const std::string& source_id, const std::string& account_id,
                                             event_kind kind, const std::string& profile_url,
                                             const json& payload, const std::string& content_key = "",
                                             const stored_check& already = {});

private:
    // One try of apply_campaign (which retries it after a deadlock; `progress` then starts over).
    apply_outcome apply_once(const std::string& name, const json& canonical, const std::string& source,
                             const std::string& first_step, const std::vector<lead_input>& leads,
                             const std::vector<std::string>& accounts, std::chrono::system_clock::time_point now,
                             const apply_progress& progress, const std::optional<apply_charge>& charge,
                             bool move_running, bool rolled_back);
    // One try of update_campaign_budget (which retries it after a deadlock).
    // `woken`: the leads the change's own wake-up woke; those this one wakes are added when not
    // there already (a lane may have held one back again in between, and it is one lead).
    void wake_after_lanes(std::string_view query, const std::string& id, std::vector<std::int64_t>& woken);
    std::optional<budget_set_outcome> set_budget_once(const std::string& name, const budget_update& u,
                                                      std::chrono::system_clock::time_point now);
    std::unique_ptr<pqxx::connection> conn_;
};

}  // namespace orch::engine
