// orch::engine codes: the closed sets of names the engine stores and matches as text in Postgres,
// as enums in C++. Each has one to_string/from_string pair, used only where a value crosses the
// database boundary (a batch row, a query parameter, a column read); everywhere else the code
// compares enums. The database keeps its own spelling of the same set (named below), which these
// names must equal; engine_codes_test holds the C++ side to them.
// (The enrollment's wait code, part of the state machine's state, is campaigns::wait_code.)
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <cstddef>
#include <optional>
#include <string_view>

namespace orch::engine {

// step_attempts.outcome: the Postgres enum attempt_outcome (migration 0001; not_sent, 0040).
enum class attempt_outcome {
    in_flight,           // the intent row before the call's answer (written by SQL, never by C++)
    ok,
    transient,           // failed without effect
    permanent,           // failed for good, without effect
    uncertain,           // may have taken effect (the most the lost request could cost is charged)
    reconciled_present,  // a reconciliation found the interrupted call's effect
    reconciled_absent,   // a reconciliation found no effect
    // Answered, and its effect deliberately not made: a follow-up of a stop_on_reply campaign
    // whose read before it found the lead's reply (the read made and billed, no message sent).
    not_sent,
};
inline constexpr std::array<attempt_outcome, 8> all_attempt_outcomes{
    attempt_outcome::in_flight, attempt_outcome::ok,        attempt_outcome::transient,
    attempt_outcome::permanent, attempt_outcome::uncertain, attempt_outcome::reconciled_present,
    attempt_outcome::reconciled_absent, attempt_outcome::not_sent};

static_assert(all_attempt_outcomes.size() == static_cast<std::size_t>(attempt_outcome::not_sent) + 1);

constexpr std::string_view to_string(attempt_outcome o) {
    switch (o) {
    case attempt_outcome::in_flight:
        return "in_flight";
    case attempt_outcome::ok:
        return "ok";
    case attempt_outcome::transient:
        return "transient";
    case attempt_outcome::permanent:
        return "permanent";
    case attempt_outcome::uncertain:
        return "uncertain";
    case attempt_outcome::reconciled_present:
        return "reconciled_present";
    case attempt_outcome::reconciled_absent:
        return "reconciled_absent";
    case attempt_outcome::not_sent:
        return "not_sent";
    }
    return "in_flight";
}

constexpr std::optional<attempt_outcome> attempt_outcome_from_string(std::string_view name) {
    for (attempt_outcome o : all_attempt_outcomes) {
        if (name == to_string(o)) {
            return o;
        }
    }
    return std::nullopt;
}

// The call's effect is known to have happened (the milestones and the limits count it). The SQL
// twin is attempt_took_effect() (migration 0018).
constexpr bool took_effect(attempt_outcome o) {
    return o == attempt_outcome::ok || o == attempt_outcome::reconciled_present;
}
// The call took effect or may have (in flight, or its answer lost): the person may have been
// reached. The SQL twin is attempt_may_have_taken_effect() (migration 0018).
constexpr bool may_have_taken_effect(attempt_outcome o) {
    return took_effect(o) || o == attempt_outcome::in_flight || o == attempt_outcome::uncertain;
}
// The call failed and is known to have done nothing (its rate-limit take is given back).
constexpr bool failed_without_effect(attempt_outcome o) {
    return o == attempt_outcome::transient || o == attempt_outcome::permanent;
}
// The call is known to have done nothing: it failed so, or it chose not to (not_sent). Its quota
// place is given back; the requests it made keep their places in the key's rate.
constexpr bool known_without_effect(attempt_outcome o) {
    return failed_without_effect(o) || o == attempt_outcome::not_sent;
}

// events.kind: the inbox's event kinds (its CHECK, migration 0001). The intake maps the API's
// event types to these; the worker applies accepted_invitation and message to the state machine.
enum class event_kind {
    accepted_invitation,  // the lead accepted the sender's invitation
    message,              // the lead wrote to the sender
    disconnection,        // the sender account was disconnected
    other,                // stored for the record, applied to nothing
};
inline constexpr std::array<event_kind, 4> all_event_kinds{event_kind::accepted_invitation, event_kind::message,
                                                           event_kind::disconnection, event_kind::other};

static_assert(all_event_kinds.size() == static_cast<std::size_t>(event_kind::other) + 1);

constexpr std::string_view to_string(event_kind k) {
    switch (k) {
    case event_kind::accepted_invitation:
        return "accepted_invitation";
    case event_kind::message:
        return "message";
    case event_kind::disconnection:
        return "disconnection";
    case event_kind::other:
        return "other";
    }
    return "other";
}

constexpr std::optional<event_kind> event_kind_from_string(std::string_view name) {
    for (event_kind k : all_event_kinds) {
        if (name == to_string(k)) {
            return k;
        }
    }
    return std::nullopt;
}

// Why the credit ledger refused a reservation (engine/ledger.hpp's reserve(); the planner turns
// it into the lead's wait).
enum class budget_refusal {
    none,
    campaign_budget,   // the campaign's budget cannot cover it: the campaign is paused
    day_budget,        // today's cap is used up: the reservation's retry_at is the next UTC midnight
    account_budget,    // this sender's cap in the campaign is used up
    no_budget,         // the campaign has no budget in the ledger (set_budget never ran)
    // The campaign's budget cannot cover it now, but calls of the campaign in flight hold
    // reservations that may give credits back when they settle (a reservation is an upper bound
    // of the charge): the reservation's retry_at is when to try again. The campaign is not paused.
    in_flight,
};

// When a call refused `in_flight` tries again: 3-8 s later (a call in flight mostly settles within
// its latency), spread by its attempt id so that a campaign's waiting calls do not all come back
// at one instant.
inline std::chrono::seconds in_flight_retry_after(std::int64_t attempt_id) {
    return std::chrono::seconds(3 + (attempt_id % 6 + 6) % 6);
}

}  // namespace orch::engine
