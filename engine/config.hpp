// orch::engine settings: one configuration model for every orchestrator subcommand.
// Sources, later ones win: built-in defaults < YAML file (--config) < environment < flags.
// A bad or missing setting stops the program at start with one message listing every problem.
// Secrets (the API key, passwords inside URLs) are never logged: use redacted() to print.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace orch::engine {

struct settings {
    std::string database_url;                 // DATABASE_URL (required)
    std::string redis_url;                    // REDIS_URL (required by worker/serve)
    std::string api_url = "http://127.0.0.1:8780";  // OUTREACH_API_URL: outreach-sandbox's default listener
    std::string api_key;                      // OUTREACH_API_KEY (required by commands calling the API)
    std::string webhook_listen = "127.0.0.1:8701";  // serve: where the webhook receiver listens
    std::string webhook_public_url;           // serve: URL the API posts to; empty: hosted mode (SSE/polling)
    std::string worker_id;                    // default: <hostname>-<pid>
    std::int64_t worker_lanes = 2;            // concurrent claim/settle loops (each owns a DB connection)
    std::int64_t batch_size = 50;             // enrollments claimed per transaction
    // At most this many lane transactions run at once in the database, across every worker
    // process (0: no limit); migration 0021 says why.
    std::int64_t lane_transaction_slots = 4;
    // How long a claimed call may run before others reconcile it: by default twice
    // api_timeout_ms and more, so that a call of two requests can make both (lease_fits_two_requests).
    std::int64_t lease_seconds = 90;
    std::int64_t idle_poll_ms = 200;          // sleep when nothing is due
    std::int64_t settle_delay_ms = 5;         // a finished call waits at most this for others to settle with it
    std::int64_t progress_log_seconds = 60;   // the worker's progress line; 0: none
    std::int64_t stop_timeout_ms = 10'000;    // SIGTERM: finish in-flight calls within this, then leave
    std::int64_t retry_base_ms = 2'000;       // transient failures: exponential backoff with full jitter
    std::int64_t retry_cap_ms = 600'000;
    // An uncertain answer (a timeout, a dropped connection, a 5xx to a write) is checked this
    // long after it: a request the client gave up on may still reach the API and take effect,
    // and a check made before it lands reads "not sent" and sends it again.
    std::int64_t reconcile_delay_ms = 60'000;
    std::int64_t api_pool_size = 64;          // keep-alive connections to the API
    std::int64_t api_timeout_ms = 30'000;     // total deadline of one API call
    std::string log_level = "info";
    // Rate limits (Redis buckets, engine/limits): the API key's request rate, and per account
    // and action the quotas per local day and rolling week (-1 = none), shared by every campaign
    // using the account; a campaign file's `limits` can only tighten them.
    std::int64_t key_requests_per_minute = 300;
    std::int64_t key_burst = 10;
    std::int64_t invite_per_day = 80;
    std::int64_t invite_per_week = 200;
    std::int64_t send_per_day = 150;
    std::int64_t send_per_week = -1;
    std::int64_t visit_per_day = 100;
    std::int64_t visit_per_week = -1;
    std::int64_t withdraw_per_day = 50;
    std::int64_t withdraw_per_week = -1;
    std::int64_t search_per_day = 300;
    std::int64_t search_per_week = -1;
    bool ramp_up = true;                      // new accounts start lower and ramp up over days
    bool pacing = true;                       // spread each day quota over the working hours
    std::int64_t credits_poll_seconds = 300;  // serve: how often the key's balance is read
    std::int64_t monitoring_credits_per_day = 10;  // serve: the API's price of a monitored account-day
    // serve: the admin REST endpoint (engine/admin.hpp), its own listener; "off" disables it.
    std::string admin_listen = "127.0.0.1:8702";
    std::string admin_token;                  // ORCH_ADMIN_TOKEN only (a secret); empty: no admin listener
    std::int64_t admin_body_limit_bytes = 1024 * 1024;  // larger request bodies get 413
    std::int64_t admin_db_connections = 4;               // threads running the admin's queries
    // serve: the key that encrypts webhook signing secrets at rest (ORCH_SECRET_KEY only, a
    // secret; >= 32 characters). Required for custom-mode webhooks (webhook_public_url set).
    std::string secret_key;
    // serve: an account with pending invitations and no event for this long is reported as
    // degraded events health (/readyz, metric, a warning).
    std::int64_t events_quiet_seconds = 3'600;
    // serve: how often the leader runs the catch-up sweep (and after any gap in intake).
    std::int64_t sweep_seconds = 900;
    std::int64_t sweep_max_seconds = 3'600;  // a quiet account's full sweep backs off up to this
    // serve: how often the leader lists the key's webhooks to find one of ours stopped or gone on
    // the API's side (one request; also with each full sweep).
    std::int64_t webhook_check_seconds = 60;
    // serve: a reply whose text matches this regular expression (ECMAScript, any case; "" = off)
    // is marked "not interested" as it arrives: the person goes on the do-not-contact list
    // (engine/inbox.hpp). Checked when the settings are read.
    std::string inbox_not_interested_pattern;
};

// Where each setting may come from. `file_text` is the YAML text of --config (empty: none);
// `env` holds the process environment (only known names are read); `flags` holds the values
// given on the command line, keyed by setting name.
struct settings_sources {
    std::string file_name;
    std::string file_text;
    std::map<std::string, std::string> env;
    std::map<std::string, std::string> flags;
};

// What a command needs: each `required` name must end up non-empty.
struct settings_needs {
    bool database = true;
    bool redis = false;
    bool api = false;
};

struct settings_result {
    settings value;
    std::vector<std::string> problems;  // empty: value is usable
};

settings_result load_settings(const settings_sources& sources, const settings_needs& needs);

// The setting names (as used in the YAML file and as --flags with '_' -> '-'), each with its
// environment variable ("" if none) and a one-line description with the default.
struct setting_doc {
    std::string name;
    std::string env;
    std::string description;
    std::string type;           // TEXT, INT or BOOL (for --help)
    std::string default_value;  // as the example configuration shows it; "" for none or a secret
};
const std::vector<setting_doc>& setting_docs();

// A YAML configuration file with every setting, its description, its environment variable and
// its default (deploy/orchestrator.example.yaml is this text; a test keeps them equal).
std::string example_config();

// True when the lease lets a call of two requests (a follow-up's reply check, then its send) make
// both, each taking up to api_timeout_ms: lease_seconds is at least twice api_timeout_ms plus 2 s.
// The worker warns at start when it is not.
bool lease_fits_two_requests(const settings& s);

// URL with any password replaced by "***" (for logs).
std::string redacted(const std::string& url);

// The environment of this process, as a map (for settings_sources::env).
std::map<std::string, std::string> process_environment();

}  // namespace orch::engine
