// Settings of outreach-sandbox. Every field can be set by a command-line flag
// (--accept-probability 0.5) or by the same key in a YAML config file (accept_probability: 0.5);
// flags win. The table in settings.cpp is the single list of settings; `--help` prints it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace orch::sandbox {

struct api_key_setting {
    std::string key;
    std::int64_t credits = 100'000;
};

struct settings {
    // Listeners
    std::string listen = "127.0.0.1:8780";
    std::string control_listen;            // empty: no control interface
    std::string ready_file;                // written with the bound ports once listening
    std::size_t body_limit_bytes = 1024 * 1024;
    std::int64_t idle_timeout_ms = 60'000;

    // Keys and world
    std::vector<api_key_setting> api_keys; // --api-key KEY[:CREDITS], repeatable
    std::uint64_t seed = 42;
    int world_people = 10'000;
    int world_companies = 600;
    int connections_per_account = 25;      // existing connections seeded at login
    int received_invitations_per_account = 4;

    // Login
    double checkpoint_rate = 0.0;          // share of logins answered checkpoint_required
    std::string checkpoint_code = "123456";

    // Simulated people
    double accept_probability = 0.6;
    std::int64_t accept_delay_ms_min = 1'000;
    std::int64_t accept_delay_ms_max = 10'000;
    double reply_probability = 0.3;
    std::int64_t reply_delay_ms_min = 1'000;
    std::int64_t reply_delay_ms_max = 10'000;
    int weekly_invitation_cap = 200;       // per account, rolling 7 days; 0: none
    int invitation_note_max_chars = 300;
    int message_max_chars = 8'000;
    // Item shape of reactions ON a post (content get_reactions, V1 post reactions): documented
    // {reaction_type, created_time, actor{...}}, sample (flat {type, name, subtitle, ...}) or mixed.
    std::string post_reaction_shape = "documented";

    // Credits
    std::int64_t monitoring_credits_per_day = 10; // per account with an active webhook

    // Rate limits
    double key_rate_per_s = 0.0;           // per-key request rate; 0: unlimited
    double key_burst = 0.0;                // bucket size; 0: equals the rate (one second)
    std::map<std::string, int> account_daily_caps; // action -> requests per account per UTC day
    bool retry_after = true;               // send Retry-After on 429
    std::int64_t retry_after_s = 1;        // value sent when the limiter cannot compute one

    // Faults
    // Latency before each answer: uniform in [latency_ms_min, latency_ms_max] (0/0: none), or
    // log-normal with the given median and 99th percentile (a long tail, as real APIs have).
    std::string latency_distribution = "uniform"; // uniform | lognormal
    std::int64_t latency_ms_min = 0;
    std::int64_t latency_ms_max = 0;
    std::int64_t latency_median_ms = 300;
    std::int64_t latency_p99_ms = 3'000;
    // A share of V2 action requests answered 429 RATE_LIMITED for (their account, their action),
    // with Retry-After rate_limited_retry_after_s (when retry_after is on); no effect, no charge.
    double rate_limited_rate = 0.0;
    std::int64_t rate_limited_retry_after_s = 1;
    // A request of a scope arriving this soon after the scope's 429 was answered may have left
    // the client before that answer reached it: counted apart, not as a Retry-After violation.
    std::int64_t retry_after_grace_ms = 10;
    double internal_error_rate = 0.0;
    double channel_error_rate = 0.0;
    double drop_connection_rate = 0.0;     // close the connection without an answer, no effect
    double lost_response_rate = 0.0;       // invite and send: effect done, answer lost
    double garbled_response_rate = 0.0;    // V2 actions: effect done, a 200 answer cut in half (not JSON)

    // Webhooks
    int webhook_max_attempts = 5;
    std::int64_t webhook_retry_base_ms = 500;
    std::int64_t webhook_timeout_ms = 5'000;
    std::int64_t sse_keepalive_ms = 30'000;
    std::int64_t event_retention_s = 24 * 3600;
    std::int64_t qr_refresh_ms = 20'000;   // V1 messaging accounts: a new QR code this often (spec: 20 s)

    // Record limits (bounded memory)
    std::size_t request_log_max = 2'000'000;

    // Dialects (sandbox/README.md "Dialects"): where the spec or api-facts leave a choice open,
    // which reading the sandbox serves. Startup settings; every default is the historical
    // behaviour. `retry_after` above belongs to this group too.
    std::string dialect = "default";                      // default | random:SEED (draws the others)
    std::string dialect_webhook_activation = "on_create"; // on_create | on_start
    std::string dialect_event_envelope = "wrapper";       // wrapper | flat_type | flat_event
    std::string dialect_accepted_shape = "single";        // single | list | data
    std::string dialect_message_type = "message";         // message | message_received
    // Where a message event names its sender: sender_profile (the docs' example, flat),
    // sender_profile_url (a third-party sample), sender_object ({sender: {name, profile_url}}), or
    // conversation_only (no sender: the conversation and the text alone).
    std::string dialect_message_sender = "sender_profile";
    std::string dialect_disconnection = "always";         // always | subscribed
    std::string dialect_sse_event_name = "webhook";       // webhook | type
    bool dialect_sse_ids = true;
    std::string dialect_poll_cursor = "after_id";         // after_id | since | opaque | numeric
    int dialect_search_page_cap = 0;                      // 0: none; else people per search_people call
    std::string dialect_timestamps = "zoned";             // zoned | naive
    bool dialect_error_account_id = true;                 // metadata.account_id on error bodies
    bool dialect_extra_fields = false;                    // unknown fields added to emitted objects
    std::string dialect_rate_limit_message = "names_account"; // names_account | generic | your_account
};

// The keys of the dialect group, in table order (retry_after included).
const std::vector<std::string>& dialect_keys();
// "key=value ..." of every dialect setting, for the startup log line.
std::string describe_dialect(const settings& s);

// Builds settings from argv (and the YAML file named by --config). On bad input returns false
// and fills `errors` with one line per problem; `--help`/`--version` set `exit_now`.
bool load_settings(int argc, char** argv, settings& out, std::vector<std::string>& errors, bool& exit_now,
                   std::string& help_text);

// Validates ranges and relations (min <= max, probabilities in [0,1], ...). Appends to errors.
void validate(const settings& s, std::vector<std::string>& errors);

} // namespace orch::sandbox

namespace orch::sandbox {

// Runtime changes through the control interface: sets one scalar setting from text. Returns an
// error text for an unknown key, a bad value, or a key that cannot change at run time
// (listeners, seed, world size).
std::optional<std::string> apply_setting(settings& s, const std::string& key, const std::string& value);
// Every scalar setting as (key, value text), in table order.
std::vector<std::pair<std::string, std::string>> describe_settings(const settings& s);

} // namespace orch::sandbox
