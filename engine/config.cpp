#include "engine/config.hpp"

#include "api/text.hpp"
#include "campaigns/detail/yaml_tags.hpp"
#include "engine/limits/redis_url.hpp"
#include "engine/reply_pattern.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <map>
#include <unistd.h>

#include <tuple>

extern char** environ;

namespace orch::engine {

namespace {

// One row per setting: how to read it into `settings` and how to describe it.
// How one setting is read from text, and shown as text (for the example file).
struct field_access {
    std::function<std::string(settings&, const std::string&)> assign;  // returns a problem or ""
    std::function<std::string(const settings&)> show;
    std::string type = "TEXT";  // the flag's type in --help: TEXT, INT or BOOL
    // Whether an empty value means something (unset, none, off). Where it does not, an empty value
    // in the file or a flag is refused: most often a template's variable left unfilled, which
    // would otherwise run with the default (an empty variable counts as unset instead).
    bool may_be_empty = false;
};

struct setting_row {
    std::string name;
    std::string env;
    std::string description;
    field_access field;
    std::string assign(settings& s, const std::string& v) const { return field.assign(s, v); }
};

field_access text(std::string settings::*field) {
    return {[field](settings& s, const std::string& v) {
                s.*field = v;
                return std::string();
            },
            [field](const settings& s) { return s.*field; }, "TEXT", true};
}

field_access boolean(bool settings::*field) {
    return {[field](settings& s, const std::string& v) {
        // YAML's core schema spells them true, True, TRUE (false alike); environment variables
        // often 1/0, yes/no, on/off.
        std::string lower = v;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (lower == "true" || lower == "1" || lower == "yes" || lower == "on") {
            s.*field = true;
        } else if (lower == "false" || lower == "0" || lower == "no" || lower == "off") {
            s.*field = false;
        } else {
            return "must be true or false, got '" + v + "'";
        }
        return std::string();
    },
            [field](const settings& s) { return std::string(s.*field ? "true" : "false"); }, "BOOL"};
}

field_access number(std::int64_t settings::*field, std::int64_t min, std::int64_t max) {
    return {[field, min, max](settings& s, const std::string& v) {
        std::int64_t n = 0;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (ec != std::errc() || end != v.data() + v.size()) {
            return "must be an integer, got '" + v + "'";
        }
        if (n < min || n > max) {
            return "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + v;
        }
        s.*field = n;
        return std::string();
    },
            [field](const settings& s) { return std::to_string(s.*field); }, "INT"};
}

bool valid_host_port(const std::string& v) {
    auto colon = v.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == v.size()) {
        return false;
    }
    unsigned port = 0;
    auto [end, ec] = std::from_chars(v.data() + colon + 1, v.data() + v.size(), port);
    return ec == std::errc() && end == v.data() + v.size() && port <= 65535;
}


// A text setting whose value alone can be wrong: checked as it is read, so the problem names
// where the value came from (the file's line and column, the variable, the flag).
field_access checked_text(std::string settings::*field, std::function<std::string(const std::string&)> problem,
                          bool may_be_empty = false) {
    return {[field, problem = std::move(problem)](settings& s, const std::string& v) {
                if (auto p = problem(v); !p.empty()) {
                    return p;
                }
                s.*field = v;
                return std::string();
            },
            [field](const settings& s) { return s.*field; }, "TEXT", may_be_empty};
}

// An http(s) URL with a host, a port that exists if any, and no fragment; a query only where
// `query` allows one (the API's base URL gets its paths appended).
std::string http_url_problem(const std::string& v, bool query) {
    const std::string got = ", got '" + redacted(v) + "'";
    auto u = boost::urls::parse_uri(v);
    if (!u || (u->scheme() != "http" && u->scheme() != "https") || u->host().empty()) {
        return "must be an http:// or https:// URL" + got;
    }
    if (u->has_port()) {
        const auto port = u->port();
        unsigned n = 0;
        auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
        if (port.empty() || ec != std::errc() || end != port.data() + port.size() || n < 1 || n > 65535) {
            return "has a bad port '" + std::string(port) + "' (1 to 65535)" + got;
        }
    }
    if (u->has_fragment()) {
        return "must have no fragment ('#...')" + got;
    }
    if (!query && u->has_query()) {
        return "must have no query ('?...'): the API's paths are added to it" + got;
    }
    return std::string();
}

// A worker's name goes into leases (with "/<lane>"), the intent log and log lines: one word.
std::string worker_id_problem(const std::string& v) {
    if (v.size() > 100) {
        return std::string("must be at most 100 characters");
    }
    for (unsigned char c : v) {
        if (std::isspace(c) != 0 || std::iscntrl(c) != 0 || c == '/') {
            return "must be one word without '/' (letters, digits, '-', '.', ...), got '" + v + "'";
        }
    }
    return std::string();
}

std::vector<setting_row> with_orch_env(std::vector<setting_row> rows) {
    for (auto& r : rows) {
        if (r.env.empty()) {
            r.env = "ORCH_";
            for (char c : r.name) {
                r.env += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            }
        }
    }
    return rows;
}

const std::vector<setting_row>& rows() {
    // Settings without a conventional variable read ORCH_<NAME> (for environment files).
    static const std::vector<setting_row> table = with_orch_env({
        {"database_url", "DATABASE_URL", "PostgreSQL connection URL (required)", text(&settings::database_url)},
        {"redis_url", "REDIS_URL", "Redis URL, redis://host:port (required by worker and serve)",
         checked_text(&settings::redis_url,
                      [](const std::string& v) {
                          std::string error;
                          return v.empty() || limits::parse_redis_url(v, error)
                                     ? std::string()
                                     : error + ", got '" + redacted(v) + "'";
                      },
                      true)},
        {"api_url", "OUTREACH_API_URL", "base URL of the Outreach API (default http://127.0.0.1:8780, the sandbox)",
         checked_text(&settings::api_url, [](const std::string& v) { return http_url_problem(v, false); })},
        {"api_key", "OUTREACH_API_KEY", "API key (secret; required by commands that call the API)",
         text(&settings::api_key)},
        {"webhook_listen", "", "serve: HOST:PORT of the webhook receiver (default 127.0.0.1:8701)",
         checked_text(&settings::webhook_listen,
                      [](const std::string& v) {
                          return valid_host_port(v) ? std::string() : "must be HOST:PORT, got '" + v + "'";
                      })},
        {"webhook_public_url", "", "serve: public URL of the receiver; empty = hosted mode (SSE + polling)",
         checked_text(&settings::webhook_public_url,
                      [](const std::string& v) { return v.empty() ? std::string() : http_url_problem(v, true); },
                      true)},
        {"worker_id", "", "worker: name in leases and the intent log, with /<lane> (default host-pid)",
         checked_text(&settings::worker_id, worker_id_problem)},
        {"worker_lanes", "", "worker: concurrent claim/settle loops, each with a DB connection (default 2)",
         number(&settings::worker_lanes, 1, 64)},
        {"lane_transaction_slots", "",
         "worker: lane transactions running in the database at once, across every worker process; about the "
         "database host's cores (0: no limit; default 4)",
         number(&settings::lane_transaction_slots, 0, 64)},
        {"batch_size", "", "worker: enrollments claimed per transaction (default 50)",
         number(&settings::batch_size, 1, 1000)},
        {"lease_seconds", "", "worker: lease of a claimed call before others reconcile it (default 90)",
         number(&settings::lease_seconds, 5, 3600)},
        {"idle_poll_ms", "", "worker: pause when nothing is due (default 200)", number(&settings::idle_poll_ms, 1, 60'000)},
        {"settle_delay_ms", "", "worker: how long a finished call waits for others to settle with it while calls run (default 5)",
         number(&settings::settle_delay_ms, 0, 1'000)},
        {"progress_log_seconds", "", "worker: seconds between progress log lines, 0 for none (default 60)",
         number(&settings::progress_log_seconds, 0, 86'400)},
        {"stop_timeout_ms", "", "worker: on SIGTERM, time to finish in-flight calls (default 10000)",
         number(&settings::stop_timeout_ms, 0, 600'000)},
        {"retry_base_ms", "", "transient failures: first backoff (default 2000)",
         number(&settings::retry_base_ms, 1, 3'600'000)},
        {"retry_cap_ms", "", "transient failures: largest backoff (default 600000)",
         number(&settings::retry_cap_ms, 1, 86'400'000)},
        {"reconcile_delay_ms", "",
         "an uncertain answer (timeout, dropped connection, 5xx to a write) is checked this long after it, so that a "
         "request still on its way lands first (default 60000)",
         number(&settings::reconcile_delay_ms, 0, 3'600'000)},
        {"api_pool_size", "", "keep-alive connections to the API (default 64)", number(&settings::api_pool_size, 1, 1024)},
        {"api_timeout_ms", "", "total deadline of one API call (default 30000)",
         number(&settings::api_timeout_ms, 100, 600'000)},
        {"log_level", "ORCH_LOG_LEVEL", "trace, debug, info, warn, error (default info)",
         checked_text(&settings::log_level,
                      [](const std::string& v) {
                          static const std::vector<std::string> levels = {"trace", "debug", "info", "warn", "error"};
                          return std::find(levels.begin(), levels.end(), v) != levels.end()
                                     ? std::string()
                                     : "must be one of trace, debug, info, warn, error; got '" + v + "'";
                      })},
        {"key_requests_per_minute", "", "rate limit: the API key's sustained requests per minute (default 300)",
         number(&settings::key_requests_per_minute, 1, 60'000'000)},
        {"key_burst", "", "rate limit: requests the key may send at once (default 10)",
         number(&settings::key_burst, 1, 1'000'000)},
        {"invite_per_day", "", "quota per account: invitations per day (default 80; -1 none)",
         number(&settings::invite_per_day, -1, 100'000'000)},
        {"invite_per_week", "", "quota per account: invitations per rolling week (default 200; -1 none)",
         number(&settings::invite_per_week, -1, 100'000'000)},
        {"send_per_day", "", "quota per account: messages per day (default 150; -1 none)",
         number(&settings::send_per_day, -1, 100'000'000)},
        {"send_per_week", "", "quota per account: messages per rolling week (default -1: none)",
         number(&settings::send_per_week, -1, 100'000'000)},
        {"visit_per_day", "", "quota per account: profile visits per day (default 100; -1 none)",
         number(&settings::visit_per_day, -1, 100'000'000)},
        {"visit_per_week", "", "quota per account: profile visits per rolling week (default -1: none)",
         number(&settings::visit_per_week, -1, 100'000'000)},
        {"withdraw_per_day", "", "quota per account: invitations withdrawn per day (default 50; -1 none)",
         number(&settings::withdraw_per_day, -1, 100'000'000)},
        {"withdraw_per_week", "", "quota per account: withdrawals per rolling week (default -1: none)",
         number(&settings::withdraw_per_week, -1, 100'000'000)},
        {"search_per_day", "", "quota per account: searches per day (default 300; -1 none)",
         number(&settings::search_per_day, -1, 100'000'000)},
        {"search_per_week", "", "quota per account: searches per rolling week (default -1: none)",
         number(&settings::search_per_week, -1, 100'000'000)},
        {"ramp_up", "", "new accounts start at a lower day quota and ramp up over days (default true)",
         boolean(&settings::ramp_up)},
        {"pacing", "", "spread each account's day quota over the working hours with random gaps (default true)",
         boolean(&settings::pacing)},
        {"credits_poll_seconds", "", "serve: how often the key's credit balance is read (default 300)",
         number(&settings::credits_poll_seconds, 1, 86'400)},
        {"monitoring_credits_per_day", "",
         "serve: credits the API bills per account and UTC day of webhook monitoring, counted apart from "
         "the drift (default 10)",
         number(&settings::monitoring_credits_per_day, 0, 1'000'000)},
        {"admin_listen", "", "serve: HOST:PORT of the admin REST endpoint, or off (default 127.0.0.1:8702)",
         {[](settings& s, const std::string& v) {
              std::string lower = v;
              std::transform(lower.begin(), lower.end(), lower.begin(),
                             [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
              if (lower != "off" && !valid_host_port(v)) {
                  return "must be HOST:PORT or off, got '" + v + "'";
              }
              s.admin_listen = lower == "off" ? lower : v;  // OFF, Off: as a switch reads them
              return std::string();
          },
          [](const settings& s) { return s.admin_listen; }}},
        {"admin_token", "ORCH_ADMIN_TOKEN",
         "serve: bearer token of the admin endpoint (secret, environment only, >= 16 characters; "
         "empty: no admin listener)",
         text(&settings::admin_token)},
        {"admin_body_limit_bytes", "", "serve: largest admin request body; larger gets 413 (default 1048576)",
         number(&settings::admin_body_limit_bytes, 1024, 64 * 1024 * 1024)},
        {"admin_db_connections", "", "serve: database connections (and threads) of the admin endpoint's queries (default 4)",
         number(&settings::admin_db_connections, 1, 64)},
        {"secret_key", "ORCH_SECRET_KEY",
         "serve: key that encrypts webhook signing secrets in the database (secret, environment only, >= 32 "
         "characters; required with webhook_public_url)",
         text(&settings::secret_key)},
        {"inbox_not_interested_pattern", "",
         "serve: a reply matching this regular expression (ECMAScript, any case) is marked not interested as it "
         "arrives, which puts the person on the do-not-contact list (default empty: off)",
         {[](settings& s, const std::string& v) {
              if (v.size() > 2000) {
                  return std::string("must be at most 2000 characters");
              }
              if (const auto why = reply_pattern::problem(v); !why.empty()) {
                  return "is not a valid regular expression: " + why;
              }
              s.inbox_not_interested_pattern = v;
              return std::string();
          },
          [](const settings& s) { return s.inbox_not_interested_pattern; }, "TEXT", true}},
        {"events_quiet_seconds", "",
         "serve: an account with pending invitations and no event for this long makes events health degraded "
         "(default 3600)",
         number(&settings::events_quiet_seconds, 1, 30 * 86'400)},
        {"sweep_seconds", "",
         "serve: how often the catch-up sweep checks pending invitations and replies (default 900)",
         number(&settings::sweep_seconds, 10, 7 * 86'400)},
        {"sweep_max_seconds", "",
         "serve: an account whose catch-up sweeps find nothing the deliveries missed is swept less often, its "
         "interval doubling from sweep_seconds up to this; a sweep that finds a missed event brings it back to "
         "sweep_seconds (default 3600; equal to sweep_seconds: no back-off)",
         number(&settings::sweep_max_seconds, 10, 7 * 86'400)},
        {"webhook_check_seconds", "",
         "serve: how often the key's webhooks are listed to start again one of ours stopped on the API's side "
         "(one request; default 60)",
         number(&settings::webhook_check_seconds, 10, 86'400)},
    });
    return table;
}

// Secrets are read from the environment only: a file may be shared, a flag shows in `ps`.
bool is_secret(const setting_row& r) { return r.name == "admin_token" || r.name == "secret_key"; }

std::string dashed(std::string name) {
    for (char& c : name) {
        if (c == '_') {
            c = '-';
        }
    }
    return name;
}

const setting_row* find_row(const std::string& name) {
    for (const auto& r : rows()) {
        if (r.name == name) {
            return &r;
        }
    }
    return nullptr;
}

// Where each setting read was given (a file's line and column, a variable, a flag), for the
// problems found across settings; the last source read wins, as its value does.
using origins = std::map<std::string, std::string>;

void apply(settings& s, const setting_row& row, const std::string& value, const std::string& where,
           std::vector<std::string>& problems, origins& from) {
    // Every setting is text, from a flag, the environment or the file: one that is not (invalid
    // UTF-8, a NUL) would reach PostgreSQL, Redis or the API and fail there, after the start.
    if (auto bad = orch::text::check_text(value)) {
        problems.push_back(where + ": " + row.name + " is not valid text (" + orch::text::at_byte(*bad) + ")");
        return;
    }
    if (value.empty() && !row.field.may_be_empty) {
        // worker_id's default is made at load, from the host and the process.
        const std::string fallback = row.name == "worker_id" ? "<host>-<pid>" : row.field.show(settings{});
        problems.push_back(where + ": " + row.name + " is empty; leave it out for its default" +
                           (fallback.empty() ? std::string() : " (" + fallback + ")"));
        return;
    }
    auto problem = row.assign(s, value);
    if (!problem.empty()) {
        problems.push_back(where + ": " + row.name + " " + problem);
        return;
    }
    from[row.name] = where;
}

void apply_file(settings& s, const settings_sources& src, std::vector<std::string>& problems, origins& from) {
    if (src.file_text.empty()) {
        return;
    }
    // Not text (a NUL, invalid UTF-8): said where it is; yaml-cpp names another place or none.
    if (auto bad = orch::text::check_text(src.file_text)) {
        const auto at = orch::text::position_of(src.file_text, bad->offset);
        problems.push_back(src.file_name + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                           ": the file is not valid text (" + bad->what + ")");
        return;
    }
    YAML::Node root;
    try {
        root = YAML::Load(src.file_text);
    } catch (const YAML::DeepRecursion& e) {
        // yaml-cpp says "bad file" for it.
        problems.push_back(src.file_name + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": values nested more than " + std::to_string(e.depth()) +
                           " levels deep (the configuration is a flat mapping of setting: value)");
        return;
    } catch (const YAML::Exception& e) {
        problems.push_back(src.file_name + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
        return;
    }
    if (root.IsNull()) {
        return;
    }
    // A tag outside the core schema, on the mapping, a key or a value, means something this
    // reader would not build: refused, as in a campaign file; so is a core tag on a node it does
    // not fit (!!seq on the mapping, !!map on a value, anything but !!str on a key). A value's
    // core scalar tag is taken: the setting reads the text as its own type.
    auto unsupported_tag = [&](const YAML::Node& n, std::initializer_list<std::string_view> fits, const char* what) {
        const std::string& tag = n.Tag();
        if (tag.empty() || tag == "?" || tag == "!") {
            return false;
        }
        if (campaigns::detail::core_schema_tag(tag)) {
            const auto type = std::string_view(tag).substr(campaigns::detail::yaml_core_prefix.size());
            if (std::find(fits.begin(), fits.end(), type) != fits.end()) {
                return false;
            }
        }
        problems.push_back(src.file_name + ":" + std::to_string(n.Mark().line + 1) + ":" +
                           std::to_string(n.Mark().column + 1) + ": unsupported YAML tag '" + campaigns::detail::shown_tag(tag) + "' on " + what);
        return true;
    };
    if (unsupported_tag(root, {"map"}, "the configuration (a mapping of setting: value, untagged or !!map)")) {
        return;
    }
    if (!root.IsMap()) {
        problems.push_back(src.file_name + ": the configuration must be a mapping of setting: value");
        return;
    }
    std::map<std::string, int> first_line;  // a setting given twice: yaml-cpp keeps both silently
    for (const auto& kv : root) {
        auto where = src.file_name + ":" + std::to_string(kv.first.Mark().line + 1) + ":" +
                     std::to_string(kv.first.Mark().column + 1);
        if (unsupported_tag(kv.first, {"str"}, "a setting's name (untagged or !!str)") ||
            unsupported_tag(kv.second, {"str", "int", "float", "bool", "null"},
                            "a setting's value (untagged, or !!str, !!int, !!float, !!bool or !!null)")) {
            continue;
        }
        auto key = kv.first.as<std::string>();
        if (auto [it, fresh] = first_line.emplace(key, kv.first.Mark().line + 1); !fresh) {
            problems.push_back(where + ": " + key + " is given twice (first at line " + std::to_string(it->second) + ")");
            continue;
        }
        if (const setting_row* secret = find_row(key); secret != nullptr && is_secret(*secret)) {
            problems.push_back(where + ": " + key + " is a secret: set " + secret->env + " instead");
            continue;
        }
        const setting_row* row = find_row(key);
        if (row == nullptr) {
            problems.push_back(where + ": unknown setting '" + key + "'");
            continue;
        }
        // A problem with the value points at the value (a null value has no mark of its own).
        const auto value_mark = kv.second.Mark();
        const auto value_where = value_mark.line < 0 ? where
                                                     : src.file_name + ":" + std::to_string(value_mark.line + 1) + ":" +
                                                           std::to_string(value_mark.column + 1);
        // A null (`name:`, `~`, `null`) is an empty value: taken where empty means something, else
        // said to be empty, at the setting's name (an omitted value's mark is the next token's).
        if (kv.second.IsNull()) {
            apply(s, *row, std::string(), where, problems, from);
            continue;
        }
        if (!kv.second.IsScalar()) {
            problems.push_back(value_where + ": " + key + " must be a single value");
            continue;
        }
        apply(s, *row, kv.second.Scalar(), value_where, problems, from);
    }
}

// A problem across settings names where those of them given were given ("" when all are defaults).
std::string given_at(const origins& from, std::initializer_list<std::string> names) {
    std::string out;
    for (const auto& n : names) {
        if (auto it = from.find(n); it != from.end()) {
            out += (out.empty() ? "" : ", ") + it->second;
        }
    }
    return out.empty() ? out : out + ": ";
}

void check(const settings& s, const settings_needs& needs, std::vector<std::string>& problems, const origins& from) {
    // A required setting given empty (which its source may do: an empty one means none) is said
    // with where it was given so.
    const auto required = [&](const char* name, const char* sources) {
        auto it = from.find(name);
        problems.push_back(std::string(name) + " is required (" + sources + ")" +
                           (it == from.end() ? std::string() : "; " + it->second + " gives it empty"));
    };
    if (needs.database && s.database_url.empty()) {
        required("database_url", "DATABASE_URL, --database-url or the config file");
    }
    if (needs.redis && s.redis_url.empty()) {
        required("redis_url", "REDIS_URL, --redis-url or the config file");
    }
    if (needs.api && s.api_key.empty()) {
        required("api_key", "OUTREACH_API_KEY, --api-key or the config file");
    }
    // A call must be over (done or timed out) before its lease lets another worker reconcile it,
    // or the reconciliation could miss a call still on its way and resend it.
    if (s.lease_seconds * 1000 < s.api_timeout_ms + 2000) {
        problems.push_back(given_at(from, {"lease_seconds", "api_timeout_ms"}) + "lease_seconds (" +
                           std::to_string(s.lease_seconds) +
                           " s) must exceed api_timeout_ms (" + std::to_string(s.api_timeout_ms) +
                           " ms) by at least 2 s");
    }
    if (!s.admin_token.empty() && s.admin_token.size() < 16) {
        problems.push_back("admin_token (ORCH_ADMIN_TOKEN) must have at least 16 characters");
    }
    if (!s.secret_key.empty() && s.secret_key.size() < 32) {
        problems.push_back("secret_key (ORCH_SECRET_KEY) must have at least 32 characters");
    }
    // Its default (3600) below a larger sweep_seconds is taken as sweep_seconds; given, it is checked.
    if (from.count("sweep_max_seconds") != 0 && s.sweep_max_seconds < s.sweep_seconds) {
        problems.push_back(given_at(from, {"sweep_max_seconds", "sweep_seconds"}) + "sweep_max_seconds (" +
                           std::to_string(s.sweep_max_seconds) + ") must be at least sweep_seconds (" +
                           std::to_string(s.sweep_seconds) + ")");
    }
    if (s.retry_cap_ms < s.retry_base_ms) {
        problems.push_back(given_at(from, {"retry_cap_ms", "retry_base_ms"}) + "retry_cap_ms (" +
                           std::to_string(s.retry_cap_ms) + ") must be at least retry_base_ms (" +
                           std::to_string(s.retry_base_ms) + ")");
    }
    // A week below a day is surely a slip: the day's quota could never be reached.
    for (const auto& [what, day, week] :
         {std::tuple{"invite", s.invite_per_day, s.invite_per_week}, {"send", s.send_per_day, s.send_per_week},
          {"visit", s.visit_per_day, s.visit_per_week}, {"withdraw", s.withdraw_per_day, s.withdraw_per_week},
          {"search", s.search_per_day, s.search_per_week}}) {
        if (day >= 0 && week >= 0 && week < day) {
            problems.push_back(given_at(from, {std::string(what) + "_per_week", std::string(what) + "_per_day"}) +
                               std::string(what) + "_per_week (" + std::to_string(week) + ") is below " + what +
                               "_per_day (" + std::to_string(day) + "), whose quota could then never be reached");
        }
    }
}

}  // namespace

settings_result load_settings(const settings_sources& src, const settings_needs& needs) {
    settings_result out;
    origins from;
    apply_file(out.value, src, out.problems, from);
    for (const auto& row : rows()) {
        auto it = src.env.find(row.env);
        if (it != src.env.end() && !it->second.empty()) {
            apply(out.value, row, it->second, "environment " + row.env, out.problems, from);
        }
    }
    for (const auto& [name, value] : src.flags) {
        if (const setting_row* secret = find_row(name); secret != nullptr && is_secret(*secret)) {
            // A flag shows in the process list; secrets come from the environment only.
            out.problems.push_back(name + " is a secret: set " + secret->env + ", not --" + dashed(name));
            continue;
        }
        const setting_row* row = find_row(name);
        if (row == nullptr) {
            out.problems.push_back("unknown setting '" + name + "'");
            continue;
        }
        apply(out.value, *row, value, "flag --" + dashed(name), out.problems, from);
    }
    if (out.value.worker_id.empty()) {
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        out.value.worker_id = std::string(host) + "-" + std::to_string(::getpid());
    }
    check(out.value, needs, out.problems, from);
    return out;
}

const std::vector<setting_doc>& setting_docs() {
    static const std::vector<setting_doc> docs = [] {
        std::vector<setting_doc> d;
        const settings defaults;
        for (const auto& r : rows()) {
            const bool secret = r.name == "api_key" || r.name.find("token") != std::string::npos;
            d.push_back({r.name, r.env, r.description, r.field.type, secret ? std::string() : r.field.show(defaults)});
        }
        return d;
    }();
    return docs;
}

bool lease_fits_two_requests(const settings& s) { return s.lease_seconds * 1000 >= 2 * s.api_timeout_ms + 2000; }

std::string example_config() {
    const settings defaults;
    std::string out =
        "# orchestrator configuration: every setting with its default (generated by `orchestrator config\n"
        "# example`). Pass the file with --config FILE. Precedence: this file < environment < --flags.\n"
        "# Each setting also reads the environment variable named below; keep secrets (api_key, passwords\n"
        "# in URLs, admin_token, secret_key) in the environment, e.g. a systemd EnvironmentFile, not in this file.\n";
    for (const auto& r : rows()) {
        out += "\n# " + r.description + "\n# environment: " + r.env + "\n";
        std::string value = r.field.show(defaults);
        bool secret = r.name == "api_key" || is_secret(r);
        bool quote = value.empty() || value.find_first_of(":#{}[],&*!|>'\"%@`") != std::string::npos;
        if (secret || value.empty()) {
            out += "# " + r.name + ": \"\"\n";
        } else {
            out += r.name + ": " + (quote ? "\"" + value + "\"" : value) + "\n";
        }
    }
    return out;
}

std::string redacted(const std::string& url) {
    auto u = boost::urls::parse_uri(url);
    if (!u || !u->has_password()) {
        return url;
    }
    boost::urls::url copy(*u);
    copy.set_password("***");
    return std::string(copy.buffer());
}

std::map<std::string, std::string> process_environment() {
    std::map<std::string, std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string entry(*e);
        auto eq = entry.find('=');
        if (eq != std::string::npos) {
            env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
        }
    }
    return env;
}

}  // namespace orch::engine
