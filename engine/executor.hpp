// orch::engine executor: runs one API call a step asked for (campaigns::api_call) through the
// Outreach client and turns the answer into the state machine's event (campaigns::ev_result),
// plus what the shell must do beyond this lead (pause the account, pause for budget, stop).
//
// The limits (rate-limit buckets, credit reservations) are checked before a call is chosen to
// run, in call_gate.hpp; the executor only runs it.
#pragma once

#include "campaigns/campaigns.hpp"
#include "engine/clock.hpp"
#include "engine/codes.hpp"
#include "engine/config.hpp"
#include "engine/api_port.hpp"
#include "engine/outreach/client.hpp"
#include "engine/random.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>

namespace orch::engine {

struct call_target {
    std::string account_id;
    std::string profile_url;
    std::int64_t campaign_id = 0;
    std::int64_t enrollment_id = 0;
    // The account's quota overrides as the claim read them (accounts.quotas as JSON text, "" for
    // none; see engine/account_quotas.hpp), for the limits gate.
    std::string account_quotas;
    // The account's login the claim read it under (accounts.connected_at as account_login_us,
    // migration 0025; 0 when unknown): an ACCOUNT_INACTIVE answer pauses the account only while
    // that is still its login, not after a re-login that overtook the request.
    std::int64_t account_login = 0;
    // The take the gate's before() made for this call (gate_decision::take; 0: none yet): after()
    // and released() give back that take, and no other claim's of the same enrollment (a claim
    // made again after its lease ended while the first call waited).
    std::uint64_t gate_take = 0;
    // The account's quota day (accounts.time_zone, migration 0032; "" when not chosen: UTC): the
    // limits gate counts its day quotas and campaign day caps in it, whichever campaign calls.
    std::string account_time_zone{};
    // Whether its row waited for the API key's rate (wait_code key_rate) when it was claimed: a
    // lead some process queued for the key's places, not one due for the first time.
    bool key_queued = false;
};

// What the shell does besides moving the lead.
enum class call_consequence { none, pause_account, pause_budget, stop_everything };

struct call_outcome {
    campaigns::ev_result event;
    engine::attempt_outcome attempt_outcome = engine::attempt_outcome::ok;  // step_attempts.outcome
    std::string error;                    // describe(error), "" on success
    std::int64_t credits = 0;             // metadata.credits_consumed of the calls made
    bool unknown_charge = false;          // a request's answer was lost after it reached the API
    // Set when a request's answer was lost after it may have reached the API: the most that
    // request could have cost (from the client's cost model). The answered requests' charges are
    // in `credits`, and the requests the call never sent after the loss cost nothing: the ledger
    // posts the sum, not the call's whole reservation (an invite whose answer was lost never made
    // the check a refusal would have made).
    std::optional<std::int64_t> lost_credits;
    call_consequence consequence = call_consequence::none;
    std::string error_code;               // the API's error code ("RATE_LIMITED", ...), "" on success
    // The API's own message (error::message): a RATE_LIMITED's scope is read from it
    // (outreach::limit_names_account), not from `error`, whose other parts hold numbers.
    std::string error_message;
    std::optional<std::chrono::milliseconds> retry_after;  // the answer's Retry-After, when given
    // The request a RATE_LIMITED answer was for: its action is the cooldown's scope (a follow-up's
    // reply check, a withdraw's look-up and an invitation's check after a refusal are requests of
    // other actions than their call's).
    std::optional<campaigns::call_kind> limited_request;
    std::string stop_reason;  // set: not sent, and the lead stops with this reason (do-not-contact)
    // Set: the call went out, and its person went on the do-not-contact list meanwhile. Its
    // outcome is recorded, then the lead stops with this reason, unless it waits to check an
    // uncertain call (the check's own outcome stops it).
    std::string stop_after_reason;
    // Not sent: held at send time (a cooldown, an unavailable account, the send window); its
    // retry_at is looked at again when it is settled (the hold may have ended since).
    bool held = false;
    // The request whose own scope held the call, when it was not the call's (a follow-up's reply
    // check held by a get_conversation cooldown): the settle asks the gate about that scope.
    std::optional<campaigns::call_kind> held_request;
    // No request of the call left this process (held or stopped before its first): the gate gives
    // its place in the key's rate back too, not only its counters.
    bool nothing_sent = false;
};

struct backoff_settings {
    std::int64_t base_ms = 2'000;
    std::int64_t cap_ms = 600'000;
    // How long after an uncertain answer its reconciliation runs (settings::reconcile_delay_ms).
    std::int64_t reconcile_delay_ms = 0;
};

// Full-jitter exponential backoff: uniform in [0, min(cap, base * 2^attempt)], at least 1 s.
std::chrono::milliseconds backoff_delay(const backoff_settings& b, int attempt, random_port& rng);

// The least a lead waits after a call that reached no API (transport_connect: nothing was sent),
// which spends none of its attempts.
inline constexpr std::chrono::milliseconds unreached_wait{30'000};

// The API client's settings from the orchestrator's: URL, key, `api_timeout_ms` as the call's
// whole and read deadlines, and `pool_size` connections (every client the orchestrator makes).
outreach::client_settings api_client_settings(const settings& s, std::size_t pool_size);

// The most credits execute() can spend on `call`, from the client's cost model (an upper bound,
// reserved in the budget ledger before the call): every request it may make, e.g. an invitation
// and the check_invitation that follows a CHANNEL_ERROR refusal.
std::int64_t credits_upper_bound(const campaigns::api_call& call);
// The most requests execute() sends for `call` in one go, each a place in the API key's request
// rate: a follow-up that reads the conversation first (confirm_no_reply) and a withdraw (its
// look-up of the invitation) make 2; every other call 1. (An invite refused with CHANNEL_ERROR
// checks the invitation too: that second request is rare, and left to the key's burst.)
int api_requests(const campaigns::api_call& call);

// Runs `call` for `target`. Never throws; every failure is an outcome. `target` is taken by
// value (the coroutine outlives the caller's locals); `api`, `call`, `backoff`, `clock` and `rng` must
// outlive the returned awaitable.
//  - invite: a CHANNEL_ERROR refusal is checked with check_invitation: an invitation already
//    pending or accepted counts as ok (the person is invited, whoever did it).
//  - withdraw: asks check_invitation for the invitation id first; no pending invitation is ok.
//  - reconciliation (call.reconcile): check_invitation for invite/withdraw, get_conversation for
//    send (the rendered text among the account's messages means it was sent).
boost::asio::awaitable<call_outcome> execute(api_port& api, call_target target,
                                             const campaigns::api_call& call, const backoff_settings& backoff,
                                             int attempt, const clock_port& clock,
                                             random_port& rng);

}  // namespace orch::engine
