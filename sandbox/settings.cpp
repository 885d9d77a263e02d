#include "sandbox/settings.hpp"

#include "sandbox/util.hpp"

#include <CLI/CLI.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

namespace orch::sandbox {

namespace {

// One row per scalar setting: its YAML key (the flag is the same with dashes), help text, and
// a setter from text that reports a problem instead of throwing.
struct entry {
    std::string key;
    std::string help;
    std::function<std::optional<std::string>(settings&, const std::string&)> set;
    std::function<std::string(const settings&)> get;
};

template <typename T>
std::optional<std::string> parse_number(const std::string& text, T& out) {
    const char* b = text.data();
    const char* e = b + text.size();
    if constexpr (std::is_floating_point_v<T>) {
        try {
            std::size_t used = 0;
            double v = std::stod(text, &used);
            if (used != text.size()) {
                return "not a number: '" + text + "'";
            }
            out = static_cast<T>(v);
            return std::nullopt;
        } catch (...) {
            return "not a number: '" + text + "'";
        }
    } else {
        auto [ptr, ec] = std::from_chars(b, e, out);
        if (ec != std::errc{} || ptr != e) {
            return "not an integer: '" + text + "'";
        }
        return std::nullopt;
    }
}

std::optional<std::string> parse_bool(const std::string& text, bool& out) {
    if (text == "true" || text == "1" || text == "yes" || text == "on") {
        out = true;
    } else if (text == "false" || text == "0" || text == "no" || text == "off") {
        out = false;
    } else {
        return "not a boolean: '" + text + "'";
    }
    return std::nullopt;
}

template <typename T>
entry number(std::string key, std::string help, T settings::*field) {
    return {key, std::move(help),
            [field](settings& s, const std::string& v) { return parse_number(v, s.*field); },
            [field](const settings& s) {
                std::ostringstream o;
                o << s.*field;
                return o.str();
            }};
}

entry text(std::string key, std::string help, std::string settings::*field) {
    return {key, std::move(help),
            [field](settings& s, const std::string& v) -> std::optional<std::string> {
                s.*field = v;
                return std::nullopt;
            },
            [field](const settings& s) { return s.*field; }};
}

entry flag(std::string key, std::string help, bool settings::*field) {
    return {key, std::move(help), [field](settings& s, const std::string& v) { return parse_bool(v, s.*field); },
            [field](const settings& s) { return std::string(s.*field ? "true" : "false"); }};
}

// The dialect settings and the values each may take (first: the default). `dialect=random:SEED`
// draws one of these values per setting; choice settings accept exactly these.
struct dialect_dimension {
    std::string key;
    std::vector<std::string> values;
};

const std::vector<dialect_dimension>& dialect_dimensions() {
    static const std::vector<dialect_dimension> dims = {
        {"retry_after", {"true", "false"}},
        {"dialect_webhook_activation", {"on_create", "on_start"}},
        {"dialect_event_envelope", {"wrapper", "flat_type", "flat_event"}},
        {"dialect_accepted_shape", {"single", "list", "data"}},
        {"dialect_message_type", {"message", "message_received"}},
        {"dialect_disconnection", {"always", "subscribed"}},
        {"dialect_sse_event_name", {"webhook", "type"}},
        {"dialect_sse_ids", {"true", "false"}},
        {"dialect_poll_cursor", {"after_id", "since", "opaque", "numeric"}},
        {"dialect_search_page_cap", {"0", "50", "100"}},
        {"dialect_timestamps", {"zoned", "naive"}},
        {"dialect_error_account_id", {"true", "false"}},
        {"dialect_extra_fields", {"false", "true"}},
        {"dialect_rate_limit_message", {"names_account", "generic", "your_account"}},
        {"dialect_message_sender", {"sender_profile", "sender_profile_url", "sender_object", "conversation_only"}},
    };
    return dims;
}

std::string joined(const std::vector<std::string>& values, const char* separator) {
    std::string out;
    for (const auto& v : values) {
        out += (out.empty() ? "" : separator) + v;
    }
    return out;
}

const std::vector<std::string>& dialect_values(const std::string& key) {
    for (const auto& d : dialect_dimensions()) {
        if (d.key == key) {
            return d.values;
        }
    }
    throw std::logic_error("no dialect dimension " + key);
}

// A text setting limited to the values of its dialect dimension.
entry choice(std::string key, std::string help, std::string settings::*field) {
    const auto& values = dialect_values(key);
    return {key, std::move(help) + " (" + joined(values, " | ") + ")",
            [field, &values](settings& s, const std::string& v) -> std::optional<std::string> {
                if (std::find(values.begin(), values.end(), v) == values.end()) {
                    return "must be one of " + joined(values, ", ") + "; got '" + v + "'";
                }
                s.*field = v;
                return std::nullopt;
            },
            [field](const settings& s) { return s.*field; }};
}

std::optional<std::uint64_t> random_dialect_seed(const std::string& text) {
    constexpr std::string_view prefix = "random:";
    if (!text.starts_with(prefix) || text.size() == prefix.size()) {
        return std::nullopt;
    }
    std::uint64_t seed = 0;
    auto [ptr, ec] = std::from_chars(text.data() + prefix.size(), text.data() + text.size(), seed);
    if (ec != std::errc{} || ptr != text.data() + text.size()) {
        return std::nullopt;
    }
    return seed;
}

entry dialect_entry() {
    return {"dialect", "default, or random:SEED to draw every dialect_* setting and retry_after from SEED "
                       "(settings given explicitly win)",
            [](settings& s, const std::string& v) -> std::optional<std::string> {
                if (v != "default" && !random_dialect_seed(v)) {
                    return "must be default or random:SEED (SEED an unsigned integer); got '" + v + "'";
                }
                s.dialect = v;
                return std::nullopt;
            },
            [](const settings& s) { return s.dialect; }};
}

const std::vector<entry>& table() {
    static const std::vector<entry> rows = {
        text("listen", "HOST:PORT of the API listener (port 0: any free port)", &settings::listen),
        text("control_listen", "HOST:PORT of the control interface; off when empty", &settings::control_listen),
        text("ready_file", "file written with {\"port\",\"control_port\"} once listening", &settings::ready_file),
        number("body_limit_bytes", "largest request body accepted (413 above)", &settings::body_limit_bytes),
        number("idle_timeout_ms", "keep-alive idle timeout per connection", &settings::idle_timeout_ms),
        number("seed", "seed of the simulated world and of every random draw", &settings::seed),
        number("world_people", "people in the simulated world", &settings::world_people),
        number("world_companies", "companies in the simulated world", &settings::world_companies),
        number("connections_per_account", "existing connections given to a new account",
               &settings::connections_per_account),
        number("received_invitations_per_account", "pending invitations a new account has received",
               &settings::received_invitations_per_account),
        number("checkpoint_rate", "share of logins answered checkpoint_required (0..1)", &settings::checkpoint_rate),
        text("checkpoint_code", "verification code that completes a checkpoint", &settings::checkpoint_code),
        number("accept_probability", "chance that an invited person accepts (0..1)", &settings::accept_probability),
        number("accept_delay_ms_min", "earliest acceptance after an invitation", &settings::accept_delay_ms_min),
        number("accept_delay_ms_max", "latest acceptance after an invitation", &settings::accept_delay_ms_max),
        number("reply_probability", "chance that a messaged person replies (0..1)", &settings::reply_probability),
        number("reply_delay_ms_min", "earliest reply after a message", &settings::reply_delay_ms_min),
        number("reply_delay_ms_max", "latest reply after a message", &settings::reply_delay_ms_max),
        number("weekly_invitation_cap", "invitations per account per rolling 7 days; 0: none",
               &settings::weekly_invitation_cap),
        number("invitation_note_max_chars", "longest invitation note", &settings::invitation_note_max_chars),
        number("message_max_chars", "longest message text", &settings::message_max_chars),
        text("post_reaction_shape", "items of post reactions: documented, sample (flat) or mixed (per post)",
             &settings::post_reaction_shape),
        number("monitoring_credits_per_day", "credits per UTC day per account with an active webhook",
               &settings::monitoring_credits_per_day),
        number("key_rate_per_s", "requests per second per API key; 0: unlimited", &settings::key_rate_per_s),
        number("key_burst", "bucket size of the per-key rate; 0: one second of rate", &settings::key_burst),
        flag("retry_after", "send a Retry-After header with 429 answers", &settings::retry_after),
        number("retry_after_s", "smallest Retry-After value sent", &settings::retry_after_s),
        text("latency_distribution", "latency per API request: uniform (latency_ms_min..max) or lognormal "
                                     "(latency_median_ms, latency_p99_ms)",
             &settings::latency_distribution),
        number("latency_ms_min", "uniform: added latency per API request, lower bound", &settings::latency_ms_min),
        number("latency_ms_max", "uniform: added latency per API request, upper bound", &settings::latency_ms_max),
        number("latency_median_ms", "lognormal: median latency per API request", &settings::latency_median_ms),
        number("latency_p99_ms", "lognormal: 99th percentile of the latency per API request",
               &settings::latency_p99_ms),
        number("rate_limited_rate", "share of V2 action requests answered 429 RATE_LIMITED for their account "
                                    "and action (no effect, no charge)",
               &settings::rate_limited_rate),
        number("rate_limited_retry_after_s", "Retry-After of the rate_limited_rate answers (seconds, >= 1)",
               &settings::rate_limited_retry_after_s),
        number("retry_after_grace_ms", "requests arriving this soon after their scope's 429 count as in flight, "
                                       "not as Retry-After violations",
               &settings::retry_after_grace_ms),
        number("internal_error_rate", "share of action requests answered INTERNAL_ERROR",
               &settings::internal_error_rate),
        number("channel_error_rate", "share of action requests answered CHANNEL_ERROR",
               &settings::channel_error_rate),
        number("drop_connection_rate", "share of action requests whose connection is closed, no effect",
               &settings::drop_connection_rate),
        number("lost_response_rate", "share of invite/send requests done but answered by a dropped connection",
               &settings::lost_response_rate),
        number("garbled_response_rate",
               "share of V2 action requests done (charged, effect made) but answered 200 with their JSON cut in half",
               &settings::garbled_response_rate),
        number("webhook_max_attempts", "delivery attempts per event and custom webhook",
               &settings::webhook_max_attempts),
        number("webhook_retry_base_ms", "first retry delay of a failed delivery (doubles each time)",
               &settings::webhook_retry_base_ms),
        number("webhook_timeout_ms", "deadline of one delivery attempt", &settings::webhook_timeout_ms),
        number("sse_keepalive_ms", "interval of ': keepalive' comments on event streams", &settings::sse_keepalive_ms),
        number("event_retention_s", "how long hosted events stay available", &settings::event_retention_s),
        number("qr_refresh_ms", "V1 messaging accounts: lifetime of a QR code, a new one follows",
               &settings::qr_refresh_ms),
        number("request_log_max", "request log entries kept for the control interface", &settings::request_log_max),
        dialect_entry(),
        choice("dialect_webhook_activation", "webhooks active at creation, or only after POST .../start",
               &settings::dialect_webhook_activation),
        choice("dialect_event_envelope", "shape of an event: the documented wrapper or a flat one",
               &settings::dialect_event_envelope),
        choice("dialect_accepted_shape", "accepted_invitation body: flat person, new_connections list or data",
               &settings::dialect_accepted_shape),
        choice("dialect_message_type", "type string of a new-message event", &settings::dialect_message_type),
        choice("dialect_message_sender",
               "how a new-message event names its sender: sender_profile, sender_profile_url, a sender object, "
               "or not at all (its conversation only)",
               &settings::dialect_message_sender),
        choice("dialect_disconnection", "disconnection to every webhook, or only to those subscribed to it",
               &settings::dialect_disconnection),
        choice("dialect_sse_event_name", "SSE event name: webhook, or the event's type",
               &settings::dialect_sse_event_name),
        flag("dialect_sse_ids", "SSE id: lines (and Last-Event-ID resumption)", &settings::dialect_sse_ids),
        choice("dialect_poll_cursor", "paging of GET /v2/webhooks/{id}/events", &settings::dialect_poll_cursor),
        number("dialect_search_page_cap", "people per search_people call, pages of 50; 0: all asked for",
               &settings::dialect_search_page_cap),
        choice("dialect_timestamps", "event, poll and metadata time text: ...Z, or naive microseconds (UTC)",
               &settings::dialect_timestamps),
        flag("dialect_error_account_id", "metadata.account_id on error bodies", &settings::dialect_error_account_id),
        flag("dialect_extra_fields", "add unknown fields to every JSON object the API emits",
             &settings::dialect_extra_fields),
        choice("dialect_rate_limit_message",
               "a 429's message: names the account (an account's limit), generic, or 'your account' for all",
               &settings::dialect_rate_limit_message),
    };
    return rows;
}

std::string dashed(std::string key) {
    for (char& c : key) {
        if (c == '_') {
            c = '-';
        }
    }
    return key;
}

std::optional<std::string> parse_api_key(const std::string& spec, api_key_setting& out) {
    auto colon = spec.find(':');
    out.key = spec.substr(0, colon);
    if (out.key.empty()) {
        return "empty API key in '" + spec + "'";
    }
    if (colon != std::string::npos) {
        if (auto err = parse_number(spec.substr(colon + 1), out.credits)) {
            return "credits of key '" + out.key + "': " + *err;
        }
    }
    return std::nullopt;
}

std::optional<std::string> parse_cap(const std::string& spec, std::map<std::string, int>& caps) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
        return "expected ACTION=COUNT, got '" + spec + "'";
    }
    int v = 0;
    if (auto err = parse_number(spec.substr(eq + 1), v)) {
        return "cap of '" + spec.substr(0, eq) + "': " + *err;
    }
    caps[spec.substr(0, eq)] = v;
    return std::nullopt;
}

std::string scalar_text(const YAML::Node& n) { return n.as<std::string>(); }

void load_yaml(const std::string& path, settings& s, std::vector<std::string>& errors,
               std::set<std::string>& given) {
    YAML::Node root;
    try {
        root = YAML::LoadFile(path);
    } catch (const YAML::Exception& e) {
        errors.push_back(path + ": " + e.what());
        return;
    }
    if (!root.IsMap()) {
        if (!root.IsNull()) {
            errors.push_back(path + ": the top level must be a mapping of setting names");
        }
        return;
    }
    for (const auto& kv : root) {
        std::string key = kv.first.as<std::string>();
        const YAML::Node& value = kv.second;
        std::string where = path + ":" + std::to_string(kv.first.Mark().line + 1) + ": " + key;
        if (key == "api_keys") {
            if (!value.IsSequence()) {
                errors.push_back(where + ": expected a list of KEY[:CREDITS] strings or {key, credits} maps");
                continue;
            }
            for (const auto& item : value) {
                api_key_setting k;
                if (item.IsMap()) {
                    k.key = item["key"] ? item["key"].as<std::string>() : "";
                    if (item["credits"]) {
                        if (auto err = parse_number(scalar_text(item["credits"]), k.credits)) {
                            errors.push_back(where + ": " + *err);
                            continue;
                        }
                    }
                    if (k.key.empty()) {
                        errors.push_back(where + ": a key entry needs 'key'");
                        continue;
                    }
                } else if (auto err = parse_api_key(scalar_text(item), k)) {
                    errors.push_back(where + ": " + *err);
                    continue;
                }
                s.api_keys.push_back(k);
            }
            continue;
        }
        if (key == "account_daily_caps") {
            if (!value.IsMap()) {
                errors.push_back(where + ": expected a mapping of action to count");
                continue;
            }
            for (const auto& cap : value) {
                if (auto err = parse_cap(cap.first.as<std::string>() + "=" + scalar_text(cap.second),
                                         s.account_daily_caps)) {
                    errors.push_back(where + ": " + *err);
                }
            }
            continue;
        }
        const entry* found = nullptr;
        for (const auto& e : table()) {
            if (e.key == key) {
                found = &e;
            }
        }
        if (!found) {
            errors.push_back(where + ": unknown setting");
            continue;
        }
        if (!value.IsScalar()) {
            errors.push_back(where + ": expected a single value");
            continue;
        }
        if (auto err = found->set(s, scalar_text(value))) {
            errors.push_back(where + ": " + *err);
        }
        given.insert(key);
    }
}

const entry& entry_of(const std::string& key) {
    for (const auto& e : table()) {
        if (e.key == key) {
            return e;
        }
    }
    throw std::logic_error("no setting " + key);
}

// dialect=random:SEED: each dialect setting not in `given` takes a value drawn from SEED and its
// key alone, so a draw does not depend on which other settings were given.
void draw_dialect(settings& s, const std::set<std::string>& given) {
    auto seed = random_dialect_seed(s.dialect);
    if (!seed) {
        return;
    }
    for (const auto& d : dialect_dimensions()) {
        const auto& value = d.values[hash64(d.key, *seed) % d.values.size()];
        if (!given.contains(d.key)) {
            (void)entry_of(d.key).set(s, value); // the values are valid by construction
        }
    }
}

} // namespace

const std::vector<std::string>& dialect_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> out;
        for (const auto& d : dialect_dimensions()) {
            out.push_back(d.key);
        }
        return out;
    }();
    return keys;
}

std::string describe_dialect(const settings& s) {
    std::string out = "dialect=" + s.dialect;
    for (const auto& key : dialect_keys()) {
        out += " " + key + "=" + entry_of(key).get(s);
    }
    return out;
}

void validate(const settings& s, std::vector<std::string>& errors) {
    auto probability = [&](const char* name, double v) {
        if (!(v >= 0.0 && v <= 1.0)) {
            errors.push_back(std::string(name) + ": must be between 0 and 1, got " + std::to_string(v));
        }
    };
    auto range = [&](const char* lo_name, std::int64_t lo, const char* hi_name, std::int64_t hi) {
        if (lo < 0) {
            errors.push_back(std::string(lo_name) + ": must not be negative");
        }
        if (hi < lo) {
            errors.push_back(std::string(hi_name) + " (" + std::to_string(hi) + ") is below " + lo_name + " (" +
                             std::to_string(lo) + ")");
        }
    };
    probability("checkpoint_rate", s.checkpoint_rate);
    probability("accept_probability", s.accept_probability);
    probability("reply_probability", s.reply_probability);
    probability("internal_error_rate", s.internal_error_rate);
    probability("channel_error_rate", s.channel_error_rate);
    probability("drop_connection_rate", s.drop_connection_rate);
    probability("lost_response_rate", s.lost_response_rate);
    probability("garbled_response_rate", s.garbled_response_rate);
    range("accept_delay_ms_min", s.accept_delay_ms_min, "accept_delay_ms_max", s.accept_delay_ms_max);
    range("reply_delay_ms_min", s.reply_delay_ms_min, "reply_delay_ms_max", s.reply_delay_ms_max);
    range("latency_ms_min", s.latency_ms_min, "latency_ms_max", s.latency_ms_max);
    probability("rate_limited_rate", s.rate_limited_rate);
    if (s.rate_limited_retry_after_s < 1) {
        errors.push_back("rate_limited_retry_after_s: must be at least 1 (a Retry-After window of 0 s is none), got " +
                         std::to_string(s.rate_limited_retry_after_s));
    }
    if (s.retry_after_grace_ms < 0 || s.retry_after_grace_ms > 60'000) {
        errors.push_back("retry_after_grace_ms: must be between 0 and 60000, got " +
                         std::to_string(s.retry_after_grace_ms));
    }
    if (s.latency_distribution != "uniform" && s.latency_distribution != "lognormal") {
        errors.push_back("latency_distribution: must be uniform or lognormal, got '" + s.latency_distribution + "'");
    } else if (s.latency_distribution == "lognormal") {
        if (s.latency_median_ms < 1) {
            errors.push_back("latency_median_ms: must be at least 1 with latency_distribution lognormal, got " +
                             std::to_string(s.latency_median_ms));
        } else if (s.latency_p99_ms < s.latency_median_ms) {
            errors.push_back("latency_p99_ms (" + std::to_string(s.latency_p99_ms) + ") is below latency_median_ms (" +
                             std::to_string(s.latency_median_ms) + ")");
        } else if (s.latency_p99_ms > 600'000) {
            errors.push_back("latency_p99_ms: at most 600000 (10 minutes), got " + std::to_string(s.latency_p99_ms));
        }
    }
    if (s.world_people < 100) {
        errors.push_back("world_people: at least 100 people are needed, got " + std::to_string(s.world_people));
    }
    if (s.world_companies < 10) {
        errors.push_back("world_companies: at least 10 companies are needed");
    }
    if (s.key_rate_per_s < 0 || s.key_burst < 0) {
        errors.push_back("key_rate_per_s and key_burst must not be negative");
    }
    if (s.webhook_max_attempts < 1) {
        errors.push_back("webhook_max_attempts: at least 1");
    }
    if (s.sse_keepalive_ms < 10) {
        errors.push_back("sse_keepalive_ms: at least 10");
    }
    if (s.qr_refresh_ms < 10) {
        errors.push_back("qr_refresh_ms: at least 10");
    }
    if (s.body_limit_bytes < 1024) {
        errors.push_back("body_limit_bytes: at least 1024");
    }
    if (s.post_reaction_shape != "documented" && s.post_reaction_shape != "sample" &&
        s.post_reaction_shape != "mixed") {
        errors.push_back("post_reaction_shape: must be documented, sample or mixed, got '" + s.post_reaction_shape +
                         "'");
    }
    if (s.dialect_search_page_cap < 0 || s.dialect_search_page_cap % 50 != 0) {
        errors.push_back("dialect_search_page_cap: must be 0 or a positive multiple of 50 (search pages hold 50 "
                         "results), got " +
                         std::to_string(s.dialect_search_page_cap));
    }
    if (s.api_keys.empty()) {
        errors.push_back("api_keys: give at least one --api-key KEY[:CREDITS]");
    }
    for (const auto& [action, cap] : s.account_daily_caps) {
        if (cap < 0) {
            errors.push_back("account_daily_caps." + action + ": must not be negative");
        }
    }
    for (const auto& k : s.api_keys) {
        if (k.credits < 0) {
            errors.push_back("api key '" + k.key + "': credits must not be negative");
        }
    }
}

bool load_settings(int argc, char** argv, settings& out, std::vector<std::string>& errors, bool& exit_now,
                   std::string& help_text) {
    exit_now = false;
    CLI::App app{"outreach-sandbox: the Outreach API over a simulated, seeded world"};
    app.set_version_flag("--version", std::string("outreach-sandbox 0.1.0"));
    std::string config_path;
    app.add_option("--config", config_path, "YAML file with the same keys as the flags (flags win)");
    std::vector<std::string> key_specs;
    app.add_option("--api-key", key_specs, "API key KEY[:CREDITS] (repeatable; default credits 100000)");
    std::vector<std::string> cap_specs;
    app.add_option("--account-daily-cap", cap_specs, "ACTION=COUNT requests per account per UTC day (repeatable)");
    settings defaults;
    std::vector<std::string> values(table().size());
    for (std::size_t i = 0; i < table().size(); ++i) {
        const auto& e = table()[i];
        app.add_option("--" + dashed(e.key), values[i], e.help + " (default: " + e.get(defaults) + ")");
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        help_text = app.help();
        exit_now = true;
        return true;
    } catch (const CLI::CallForVersion&) {
        help_text = app.version();
        exit_now = true;
        return true;
    } catch (const CLI::ParseError& e) {
        errors.push_back(e.what());
        return false;
    }
    std::set<std::string> given; // settings set explicitly, which a dialect draw leaves alone
    if (!config_path.empty()) {
        load_yaml(config_path, out, errors, given);
    }
    for (const auto& spec : key_specs) {
        api_key_setting k;
        if (auto err = parse_api_key(spec, k)) {
            errors.push_back("--api-key: " + *err);
        } else {
            out.api_keys.push_back(k);
        }
    }
    for (const auto& spec : cap_specs) {
        if (auto err = parse_cap(spec, out.account_daily_caps)) {
            errors.push_back("--account-daily-cap: " + *err);
        }
    }
    for (std::size_t i = 0; i < table().size(); ++i) {
        const auto& e = table()[i];
        if (app.get_option("--" + dashed(e.key))->count() > 0) {
            if (auto err = e.set(out, values[i])) {
                errors.push_back("--" + dashed(e.key) + ": " + *err);
            }
            given.insert(e.key);
        }
    }
    draw_dialect(out, given);
    validate(out, errors);
    return errors.empty();
}

} // namespace orch::sandbox

namespace orch::sandbox {

std::optional<std::string> apply_setting(settings& s, const std::string& key, const std::string& value) {
    static const std::vector<std::string> fixed = {"listen", "control_listen", "ready_file", "seed", "world_people",
                                                   "world_companies", "body_limit_bytes", "idle_timeout_ms"};
    // Dialects are startup settings (events already stored keep the shape they were published
    // in); retry_after stays changeable as it always was.
    bool dialect = key == "dialect" || (key.starts_with("dialect_") &&
                                        std::find(dialect_keys().begin(), dialect_keys().end(), key) !=
                                            dialect_keys().end());
    if (dialect || std::find(fixed.begin(), fixed.end(), key) != fixed.end()) {
        return "'" + key + "' cannot change while the sandbox runs";
    }
    for (const auto& e : table()) {
        if (e.key == key) {
            return e.set(s, value);
        }
    }
    return "unknown setting '" + key + "'";
}

std::vector<std::pair<std::string, std::string>> describe_settings(const settings& s) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& e : table()) {
        out.emplace_back(e.key, e.get(s));
    }
    return out;
}

} // namespace orch::sandbox
