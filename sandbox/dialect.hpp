// Dialects: the readings of the spec the sandbox can serve where the spec or api-facts leave a
// choice open (settings dialect_*, README "Dialects"). Every wire detail that depends on a
// dialect is rendered here, so the area modules stay dialect-free: time text, the event
// envelope, the accepted_invitation body, the event type string, the webhook filter rule and
// the unknown extra fields.
#pragma once

#include "sandbox/settings.hpp"
#include "sandbox/state.hpp"

#include <string>
#include <vector>

namespace orch::sandbox {

// How precise a time is in the zoned dialect: "2025-01-15T10:31:00Z" or "...00.123Z". The
// naive dialect always writes "2025-01-15T10:31:00.123456" (microseconds, no zone, UTC).
enum class time_precision { seconds, millis };
std::string wire_time(const settings& cfg, time_point t, time_precision precision = time_precision::seconds);

// The type string an event carries on the wire for the sandbox's event type (message,
// accepted_invitation, disconnection).
std::string wire_event_type(const settings& cfg, const std::string& type);

// The whole event as delivered, streamed and polled: `body` holds the event's own fields (its
// `timestamp` is filled in when absent); `at` is when the API emits it.
json render_event(const settings& cfg, const std::string& account_id, const std::string& account_name,
                  const std::string& type, json body, time_point at);

// The fields of an accepted_invitation event body.
struct accepted_person {
    std::string profile_url;
    std::string public_identifier;
    std::string first_name;
    std::string last_name;
    std::string name;
    std::string invitation_id;
};
json accepted_invitation_body(const settings& cfg, const accepted_person& p);

// The fields of a new-message event body, its sender named as dialect_message_sender says (not
// at all under conversation_only).
struct message_fields {
    std::string text;
    std::string sender_name;
    std::string sender_profile_url;
    std::string conversation_id;
    std::string message_id;
};
json message_event_body(const settings& cfg, const message_fields& m);

// A RATE_LIMITED answer's message: `natural` (an account's limit names the account, the key's
// does not) under names_account; the same text for every scope under generic ("too many
// requests", the spec's words) and your_account ("... for your account", the customer's account,
// that is the whole key, in a vendor's words).
std::string rate_limit_message(const settings& cfg, std::string natural);

// Whether a webhook with filter `events` receives an event of the sandbox's `type`
// ("message_received" selects type message; disconnection per dialect_disconnection).
bool webhook_wants(const settings& cfg, const std::vector<std::string>& events, const std::string& type);

// dialect_extra_fields: adds unknown fields to `root` (an envelope or an event), to the objects
// it holds and to the objects those hold (arrays are looked through). No-op otherwise.
void add_extra_fields(const settings& cfg, json& root);

} // namespace orch::sandbox
