// orch::engine lead_ops: an operator's actions on a campaign's leads, shared by the CLI
// (`orchestrator leads stop|retry|skip|move`) and the admin API (POST /v1/campaigns/{name}/leads/
// {id}/stop|retry|skip|move, POST /v1/campaigns/{name}/leads:bulk). Each works on one lead or on a
// filter (a state, or a list of lead ids), in one transaction, compare-and-set on each row's status.
//
//   stop   a live lead (ready or waiting) ends: cancelled, "stopped by an operator".
//   retry  a ready lead becomes due now (next_run_at = due_at = now): the worker's gate still
//          decides when it runs (quotas, cooldowns, working hours, budget); nothing is bypassed. A
//          lead of a paused campaign or disconnected sender stays parked and runs when it wakes.
//          A waiting lead is refused: its next_run_at is its wait's deadline, and making it due
//          would end the wait as a timeout (skip --to moves it on instead).
//   skip   a live lead moves to a step of its campaign version, entered as any move into a step
//          (campaigns::enter_step: a delay or wait parks it, an end step finishes it).
//   move   a live lead that its sender has not contacted yet (no invitation or message sent, in
//          flight or uncertain) gets another sender (a known account, by id or label).
// A lead in `calling` has a request in flight and is never touched (refused, with why); finished
// leads are refused too, but for a stop of a lead cancelled already, which is what was asked
// (counted as already, as a pause of a paused campaign succeeds). One lead refused is a conflict;
// in bulk, refused leads are counted by why and the others change.
#pragma once

#include <nlohmann/json.hpp>
#include <pqxx/connection>
#include <pqxx/result>
#include <pqxx/transaction_base>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace orch::engine::lead_ops {

using json = nlohmann::json;

// Why a lead is where it is, in one sentence ("waiting for the invite day quota of account X
// until 14:32 UTC (2026-11-23T14:32:00Z)", "paused: budget exhausted: ...", "waiting for account
// X to be connected again"): `lead` as the admin API shows it (state, reason, next_run_at, step,
// account_id), its campaign's state and pause reason, whether its sender is connected, and
// whether its next run is later than now. The stored reason is the last wait the gate or the
// machine gave; a paused campaign or a disconnected sender outranks it. For the admin API's lead
// detail and `orchestrator leads show`.
// A calling lead's call: whether it reconciles an uncertain one, and the lease of the worker
// that holds it (owner "" when none; leased: the lease has not ended).
struct call_hold {
    bool reconcile = false;
    std::string lease_owner;
    std::string lease_until;  // ISO, "" when no lease
    bool leased = false;
};
// Which of the four a calling lead is, for programs (the lead's `call`; `waiting` says it for
// people): "in_flight" (a worker's call under a live lease), "checking" (a worker checking whether
// an uncertain call took effect), "to_check" (an uncertain call waiting for that check) or
// "outcome_lost" (its worker's lease ended before the call's outcome was written).
std::string call_kind(const call_hold& call);
std::string waiting_sentence(const json& lead, const std::string& campaign_state, const std::string& pause_reason,
                             bool account_connected, bool later, const call_hold& call = {});

// A row of admin/leads or admin/lead (the same columns) as the admin API and `orchestrator leads
// list|show` show it, with its `waiting` sentence.
json lead_item(const pqxx::row& r);
// The lead's detail for the admin API and `orchestrator leads show`: lead_item, its attempt, its
// calls (`timeline`), the inbox events about it (`events`) and its campaign's name; nullopt when
// the campaign has no such lead.
std::optional<json> lead_detail(pqxx::transaction_base& tx, std::int64_t campaign_id, const std::string& campaign_name,
                                std::int64_t lead_id);

enum class verb { stop, retry, skip, move };
std::optional<verb> verb_from_string(const std::string& s);
const char* to_string(verb v);

struct request {
    verb what = verb::stop;
    std::string campaign;
    std::vector<std::int64_t> lead_ids;  // one or more leads, or
    std::string state;                   // a filter: live, ready, waiting, calling, ... (one of them)
    bool ids_listed = false;             // a list of ids was given (the admin API's lead_ids), empty or not
    bool state_given = false;            // a state was given (the admin API's state), empty or not
    std::string to_step;                 // skip
    std::string account;                 // move: id or label
};

struct changed_lead {
    std::int64_t lead_id = 0;
    std::int64_t enrollment_id = 0;
    std::string from;     // status before
    std::string state;    // status after
    std::string step;
    std::string account_id;
    std::string next_run_at;
};
struct refused_lead {
    std::int64_t lead_id = 0;
    std::string state;
    std::string why;
};

struct outcome {
    enum class kind { ok, no_campaign, no_lead, bad_request, conflict } result = kind::ok;
    std::string message;   // no_*, bad_request (422), conflict (409): why
    std::int64_t matched = 0;
    std::vector<changed_lead> changed;
    std::vector<refused_lead> refused;  // in bulk: at most 100 listed, all counted in refused_by_why
    std::map<std::string, std::int64_t> refused_by_why;
    std::int64_t refused_count = 0;
    std::int64_t already_count = 0;  // stop: leads stopped already (cancelled), left as they are
    // skip: leads moved to a message step with no acceptance seen (not known to be connections of
    // their sender, whom the platform lets message connections only).
    std::int64_t not_known_connected = 0;
    // move: the new sender is not among the campaign's current senders (taken, and said).
    std::string sender_not_listed;
};
json to_json(const request& r, const outcome& o);

// What is wrong with a request before the database is asked ("" when nothing): a verb's missing
// argument, no lead and no filter, an unknown state; every problem, joined by "; ".
std::string check(const request& r);
// Its two halves, for a caller that read some fields wrong (and says so itself): the leads chosen
// (ids, state), and the verb's arguments (to, account), where `to_given`/`account_given` say a
// field was sent, if not readable.
std::string check_selection(const request& r);
std::string check_arguments(const request& r, bool to_given = false, bool account_given = false);

// Runs the request in one transaction (again after a deadlock with a worker, three tries).
// Throws store_error for a database failure.
outcome run(pqxx::connection& conn, const request& r);

inline const std::vector<std::string> states = {"live", "ready", "calling", "waiting",
                                                "done", "replied", "failed", "cancelled"};

}  // namespace orch::engine::lead_ops
