// orch::campaigns state machine of one enrollment (one lead in one campaign version):
//
//   decide(campaign, lead, state, event, now) -> decision {next state, at most one API call}
//
// Pure: no clock (now is a parameter), no random source (jitter arrives inside events), no I/O.
// The engine (engine/) loads the state, calls decide, runs the call, feeds the outcome back as an
// event, and persists each transition as a compare-and-set on (status, step, attempt), so late or
// duplicate completions are harmless.
//
// Life of a side-effecting step (invite, send, withdraw, visit):
//   ready --due--> calling [call, intent written and committed by the engine before the call]
//   calling --result ok--> next step (ready, or waiting for a wait step)
//   calling --result transient--> ready at retry_at (attempt+1), failed after max_attempts
//   calling --result permanent--> failed (reason)
//   calling --result uncertain--> calling (reconcile = true); the next due runs the read-only
//          reconciliation call (check_invitation for invite/withdraw, get_conversation for send;
//          visit is not reconciled and counts as done).
//   calling --due (found after a crash: the intent was written, the outcome never recorded)-->
//          reconciliation call, as for uncertain.
//   reconcile result: effect present -> as ok; absent -> ready (resend, same attempt).
// Read-only steps (check_invitation) skip the reconciliation: a lost outcome is simply re-asked.
//
// Further rules (campaigns/README.md has the full table of states and events):
// - next_run_at means: ready -> when due; waiting -> the timeout deadline; calling -> when the
//   call started, or when the pending reconciliation is due (the engine claims a calling row only
//   once the lease of the worker that made the call has expired).
// - ev_due (and ev_deferred) before next_run_at in ready or waiting is invalid (not due yet).
// - Working hours: ev_due in ready at a step that calls the API, outside the schedule -> stays
//   ready, next_run_at = next_working_start, no call. Reconciliations and the check before a wait
//   times out are read-only and invisible to the lead, so they run at any hour.
// - Parking: entering a delay step sets ready with next_run_at = now + duration, and its ev_due
//   means "elapsed" (move to next); entering a wait_accepted step sets waiting with the deadline
//   now + timeout, or passes straight to next when accepted_seen. Entering an end step or ""
//   gives done (step ""). Entering any other step gives ready at now.
// - A wait that reaches its deadline (waiting + ev_due) first asks check_invitation (reconcile =
//   false, status calling at the wait step): accepted -> next, otherwise -> on_timeout. A
//   transient failure of that check leaves the lead ready at the wait step; its ev_due checks
//   again.
// - ev_accepted at a wait step (waiting, or ready/calling around its timeout check) -> next step
//   now; anywhere else (non-terminal) -> accepted_seen = true, which is sticky: a later wait step
//   passes at once, and a check_invitation result ACCEPTED sets it too.
// - Attempts: a transient failure counts one; so does an uncertain outcome of a side-effecting
//   call (this bounds a call that always ends uncertain) and a failed reconciliation. At
//   max_attempts the lead fails; a reconciliation that finds the effect absent resends only while
//   attempt < max_attempts. Moving to another step resets attempt and reason.
// - Terminal states keep the step where they happened, except done (step "").
//
// What the engine does before calling decide:
// - An invite refused because the person is already invited or connected is reported as ok (the
//   engine confirms it with check_invitation); decide has no notion of that error.
// - A get_conversation reconciliation gets the message text (and variant) in api_call.text: the
//   engine sets message_found when that text, sent by the account, is in the conversation.
#pragma once

#include "campaigns/model.hpp"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace orch::campaigns {

// Enrollment status; the same set is the Postgres enum enrollment_status (schema/).
enum class status {
    ready,      // due at next_run_at; the worker runs the current step (moved in by decide)
    calling,    // an API call of the current step was started (intent durable); outcome unknown
                // until a result event; found so after a crash -> reconciliation
    waiting,    // parked on accepted_invitation until next_run_at (the timeout deadline)
    done,       // terminal: the sequence ended normally
    replied,    // terminal: a message_received ended it (stop_on_reply)
    failed,     // terminal: permanent failure or attempts exhausted (reason set)
    cancelled,  // terminal: campaign cancelled or person on the do-not-contact list
};
bool is_terminal(status s);
const char* to_string(status s);

// The API calls a step can ask for (the engine maps them to the client).
enum class call_kind {
    check_invitation,
    invite,
    withdraw,
    send,
    visit,
    get_conversation,  // reconciliation of send only
};
const char* to_string(call_kind k);
std::optional<call_kind> call_kind_from_string(std::string_view name);
bool is_side_effecting(call_kind k);

struct api_call {
    call_kind kind = call_kind::check_invitation;
    std::string text;      // rendered invitation note or message text ("" if none); for the
                           // get_conversation reconciliation: the text to look for
    std::string variant;   // message variant name for send ("" otherwise)
    // The step chose among variants (an A/B test): its variant becomes the lead's, which the
    // reports group by. A step of one variant (a follow-up's message_text) sets the lead's only
    // when it has none, so a follow-up does not hide the test before it.
    bool variant_chosen = false;
    bool reconcile = false;  // true: read-only check whether the interrupted call took effect
    // send: a follow-up of a stop_on_reply campaign. The executor first reads the conversation
    // and does not send when the lead's last message is newer than ours.
    bool confirm_no_reply = false;
    // A reconciliation: the call whose effect it looks for (its step's: invite, withdraw, send).
    // Unset otherwise.
    std::optional<call_kind> reconciles;
};

// The lead as templates and variant choice see it.
struct lead_view {
    std::string key;                            // stable lead id (variant choice is hashed on it)
    std::map<std::string, std::string> fields;  // first_name, company, ... (missing = absent)
};

// Why a lead that could otherwise run waits: the engine's code for the English `reason` next to
// it, so that what the engine matches (a raised quota or budget wakes its waiters: SQL
// engine/wake_budget_waits, accounts/wake_quota_waiters) is this code, never the sentence, which
// is for people and built from the code and its details (the action, the account). The code
// travels with the reason: every transition that writes a reason writes its code (none when the
// reason is not a wait: an error, a failure, a cancellation), and one that keeps the reason keeps
// the code. Stored as text in enrollments.wait_code (migration 0018, NULL for none), whose CHECK
// lists the same names: keep both in step.
enum class wait_code {
    none,
    schedule,             // outside the campaign's working hours
    key_rate,             // the API key's request rate (rate-limit bucket)
    key_cooldown,         // the API key's RATE_LIMITED cooldown
    account_cooldown,     // an account's RATE_LIMITED cooldown for an action
    day_quota,            // the sender account's day quota for an action
    week_quota,           // the sender account's week quota for an action
    campaign_quota,       // the campaign's cap for an action on the sender account
    pacing,               // the sender account's pacing for an action
    limits_unavailable,   // the rate-limit store (Redis) is unreachable
    limits_error,         // the rate limits refused the check itself (bad input)
    throttled,            // the platform answered RATE_LIMITED, or a cooldown held the call at send time
    campaign_budget,      // the campaign's budget is exhausted (the campaign is paused)
    day_budget,           // the campaign's daily budget is spent (until the next UTC day)
    account_budget,       // the campaign's budget for the sender account is spent
    no_budget,            // the campaign has no budget in the ledger
    budget_in_flight,     // the budget left covers the call only if calls in flight give credits back
};
// Every code, in declaration order (wait_code_from_string and the tests walk it).
inline constexpr std::array<wait_code, 17> all_wait_codes{
    wait_code::none,           wait_code::schedule,        wait_code::key_rate,       wait_code::key_cooldown,
    wait_code::account_cooldown, wait_code::day_quota,     wait_code::week_quota,     wait_code::campaign_quota,
    wait_code::pacing,         wait_code::limits_unavailable, wait_code::limits_error, wait_code::throttled,
    wait_code::campaign_budget, wait_code::day_budget,     wait_code::account_budget, wait_code::no_budget,
    wait_code::budget_in_flight};
const char* to_string(wait_code w);
// nullopt for a name not listed above ("none" is none).
std::optional<wait_code> wait_code_from_string(std::string_view name);

struct enrollment_state {
    std::string step;             // id of the current step ("" only in terminal states)
    status st = status::ready;
    time_point next_run_at{};     // ready: when due; waiting: the timeout deadline
    int attempt = 0;              // failed attempts of the current step
    bool reconcile = false;       // status calling: the next due reconciles instead of calling
    bool accepted_seen = false;   // an accepted_invitation arrived before its wait step
    std::string reason;           // why failed/cancelled/replied, or the last transient error
    wait_code wait = wait_code::none;  // the code of `reason` when it says why the lead waits
};

// ---- events ----
struct ev_due {};  // the worker claimed the enrollment at/after next_run_at

enum class result_kind {
    ok,          // the call succeeded (for check_invitation see `invitation`)
    transient,   // failed without effect, retry later at retry_at (engine computes the jitter)
    permanent,   // failed for good for this lead (INVALID_PARAMS, CHANNEL_ERROR, FORBIDDEN, ...)
    uncertain,   // failed and may have taken effect (timeout after write, 500, dropped)
    throttled,   // RATE_LIMITED (or no API reached): refused without effect, not the lead's fault: retry at retry_at
                 // (the scope's cooldown end) with attempts unchanged
};
// `received` is a PENDING invitation of type RECEIVED: the person invited the account. It is not
// ours to wait for (only the account can accept it), and an invite to that person is refused.
enum class invitation { accepted, pending, received, none };

// Why a lead whose person invited its account fails (a check that finds a PENDING invitation of
// type RECEIVED, or an invite refused for it): what it is and what the operator can do. `detail`
// is the API's refusal of the invite, when there was one.
std::string invited_by_the_person(const std::string& detail);

struct ev_result {
    call_kind call = call_kind::check_invitation;  // must match the call decide asked for
    bool reconcile = false;                         // must match too
    result_kind kind = result_kind::ok;
    std::optional<invitation> invitation_state;     // check_invitation ok (and invite/withdraw reconcile)
    bool message_found = false;                     // get_conversation ok: the sent text is there
    bool reply_found = false;                       // send with confirm_no_reply: not sent, the lead replied
    time_point retry_at{};                          // transient
    std::string reason;                             // transient / permanent: the error, for the record
};

// Whether a reconciliation's result finds the effect of the call it looks for (`of`: invite,
// withdraw or send): an invitation pending or accepted, one no longer pending, the message in the
// conversation. nullopt when the result cannot tell (an invitation's check without its state).
std::optional<bool> effect_found(call_kind of, const ev_result& r);

// The engine could not run the step now (working hours, a rate-limit bucket, a paused account or
// budget): stay ready until `until`, attempts unchanged.
struct ev_deferred {
    time_point until;
    std::string reason;
    wait_code code = wait_code::none;
};

struct ev_accepted {};  // accepted_invitation for this lead on its sender account
struct ev_replied {};   // message_received from this lead on its sender account
struct ev_cancel {      // campaign cancelled, do-not-contact
    std::string reason;
};

using event = std::variant<ev_due, ev_result, ev_deferred, ev_accepted, ev_replied, ev_cancel>;

struct decision {
    enrollment_state next;
    std::optional<api_call> call;  // set only on ev_due; the engine runs it
    bool valid = true;             // false: the event is not valid in this state; next == state
    std::string why;               // for invalid events and logs
};

// Preconditions: `state.step` names a step of `c` unless the state is terminal. An event that is
// not valid in the state (a result for another call, an event in a terminal state, ...) gives
// valid = false and the state unchanged, never an assertion: late and duplicate events happen.
decision decide(const campaign& c, const lead_view& lead, const enrollment_state& state,
                const event& e, time_point now);

// The state a new enrollment starts in: the entry step, ready at `now`.
enrollment_state initial_state(const campaign& c, time_point now);

// The state of a lead moved into step `id` at `now` by an operator (`leads skip --to`), as any
// move into a step: a delay parks it ready until it elapses, a wait parks it waiting until its
// timeout (or passes on when `accepted_seen`), an end step finishes it (done). Precondition: `id`
// names a step of `c`.
enrollment_state enter_step(const campaign& c, const std::string& id, time_point now, bool accepted_seen);

// Deterministic A/B choice: the same (lead key, step id) always gives the same variant: FNV-1a 64
// of key + '\0' + step id, through MurmurHash3's fmix64 finalizer, modulo the variant count.
// Precondition: the step has at least one variant (every send step of a loaded campaign has).
const message_variant& choose_variant(const step& s, const lead_view& lead);

// Whether a send step can come after another send step (so a message already went out): a
// follow-up, which a stop_on_reply campaign sends only after confirming no reply came (its call's
// confirm_no_reply; campaign estimate counts that conversation read).
bool follows_send(const campaign& c, const std::string& id);

// Working hours (schedule in model.hpp) through the IANA time zone database.
bool in_working_hours(const schedule& s, time_point t);
time_point next_working_start(const schedule& s, time_point t);  // t itself when inside

}  // namespace orch::campaigns
