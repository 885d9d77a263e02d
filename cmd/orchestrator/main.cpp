// orchestrator: the product's one binary (DESIGN.md "Two programs").
//
//   migrate                          apply the schema migrations (idempotent)
//   worker [--exit-when-idle]        run campaigns: claim due enrollments, call the API, settle
//   serve                            the webhook receiver / hosted event intake
//   campaign validate|apply FILE     check or store a campaign definition (apply enrolls its audience)
//   campaign list|show|pause|resume|cancel NAME
//   accounts connect|sync            accounts come from the API and are stored locally
//   accounts list [--format table|json] [--time-zone TZ]   with quotas used/left and cooldowns
//   accounts limits ACCOUNT [--invite-per-day N] [--invite-per-week N] [--send-per-day N] ...
//            [--clear ACTION|all] [--format table|json]   an account's own quotas (override or default)
//   report funnel NAME [--format table|json|csv]
//   budget show [CAMPAIGN] [--format table|json|csv]   credit budgets, reserved vs posted, spend
//   budget set CAMPAIGN [--credits N] [--per-day N|none] [--per-account N|none]   a live change
//   dnc add|remove|list|import, leads list|show|stop|retry|skip|move   (dnc_leads.hpp)
//   inbox list|show|reply|mark, campaign watch NAME   (inbox_watch.hpp)
//
// Settings: --config FILE (YAML) < environment (DATABASE_URL, REDIS_URL, OUTREACH_API_URL,
// OUTREACH_API_KEY) < flags. A bad or missing setting stops the command at start with one message
// listing every problem.
#include "api/log_format.hpp"
#include "api/text.hpp"
#include "campaigns/campaigns.hpp"
#include "cmd/orchestrator/command_support.hpp"
#include "cmd/orchestrator/dnc_leads.hpp"
#include "cmd/orchestrator/inbox_watch.hpp"
#include "engine/account_view.hpp"
#include "engine/admin_input.hpp"
#include "engine/campaign_apply.hpp"
#include "engine/campaign_lifecycle.hpp"
#include "engine/config.hpp"
#include "engine/executor.hpp"
#include "engine/intake.hpp"
#include "engine/ledger.hpp"
#include "engine/limits/line_ticket.hpp"
#include "engine/limits_gate.hpp"
#include "engine/outreach/client.hpp"
#include "engine/store.hpp"
#include "engine/time_format.hpp"
#include "engine/worker.hpp"
#include "schema/schema.hpp"

#include <CLI/CLI.hpp>
#include <pqxx/pqxx>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>
#include <semaphore.h>
#include <unistd.h>

namespace asio = boost::asio;
namespace fs = std::filesystem;
using orch::engine::json;
using orch::engine::settings;
using orch::cli::print_aligned;
using orch::cli::print_csv;
using orch::cli::text_table;
using orch::engine::settings_needs;

namespace {

// A command-line failure the user can fix: printed as one message, exit code 2.
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// ---- settings from file, environment and flags ----
struct global_options {
    std::string config_file;
    std::map<std::string, std::string> flags;  // setting name -> value, only those given
};

void add_setting_flags(CLI::App& app, global_options& g) {
    // CLI11's own check says "File does not exist: " of an empty path.
    const CLI::Validator config_file(
        [](std::string& path) {
            return path.empty() ? std::string("no file was named (an empty path)") : CLI::ExistingFile(path);
        },
        "PATH");
    app.add_option("--config", g.config_file, "YAML configuration file")->check(config_file)->type_name("PATH");
    for (const auto& doc : orch::engine::setting_docs()) {
        std::string flag = "--" + doc.name;
        std::replace(flag.begin(), flag.end(), '_', '-');
        auto name = doc.name;
        // The type and the default in --help; the default is only shown (not applied by the flag),
        // so the configuration file and the environment still take effect when the flag is absent.
        app.add_option_function<std::string>(
               flag, [&g, name](const std::string& v) { g.flags[name] = v; },
               doc.description + (doc.env.empty() ? "" : " [env " + doc.env + "]"))
            ->type_name(doc.type)
            ->default_str(doc.default_value)
            ->group("Settings");
    }
}

settings load(const global_options& g, const settings_needs& needs) {
    orch::engine::settings_sources src;
    if (!g.config_file.empty()) {
        src.file_name = g.config_file;
        auto read = orch::cli::read_file(g.config_file, 1024 * 1024);
        if (!read.text) {
            throw usage_error("'" + orch::text::escaped(g.config_file) + "': cannot read the configuration file: " + read.why);
        }
        src.file_text = std::move(*read.text);
    }
    src.env = orch::engine::process_environment();
    src.flags = g.flags;
    auto r = orch::engine::load_settings(src, needs);
    if (!r.problems.empty()) {
        std::string all = "bad configuration:";
        for (const auto& p : r.problems) {
            all += "\n  - " + p;
        }
        throw usage_error(all);
    }
    spdlog::set_level(spdlog::level::from_str(r.value.log_level));
    return r.value;
}

// Runs one API coroutine to completion on a private io_context (CLI commands).
template <typename F>
auto with_client(const settings& s, F f) {
    asio::io_context io;
    orch::outreach::client_settings cs;
    cs.base_url = s.api_url;
    cs.api_key = s.api_key;
    cs.total_timeout_ms = s.api_timeout_ms;
    auto made = orch::outreach::client::make(io.get_executor(), cs);
    if (!made) {
        throw usage_error("bad API settings: " + orch::outreach::describe(made.error()));
    }
    auto api = std::move(*made);
    auto fut = asio::co_spawn(io, f(api), asio::use_future);
    io.run();
    return fut.get();
}

// A refused API call as the command's error: the caller's or the account's mistake (the API
// will answer the same again: give_up, pause_account) exits 2; a refusal that passes (a 429, a
// timeout, a server error) exits 1, to be tried again later. `advice`, when given, follows the
// text in either case instead of "(try again later)".
[[noreturn]] void api_refused(const std::string& text, orch::outreach::disposition d,
                              const std::optional<std::string>& advice = std::nullopt) {
    if (d == orch::outreach::disposition::give_up || d == orch::outreach::disposition::pause_account) {
        throw usage_error(text + advice.value_or(""));
    }
    throw orch::engine::failure(orch::engine::error_category::unavailable, text + advice.value_or(" (try again later)"));
}
// A call that reached no API, or whose answer is not the API's, is as likely the setting's mistake
// as an outage: the advice names api_url and its value.
[[noreturn]] void api_refused_as(const settings& s, const std::string& text, const orch::outreach::error& e) {
    switch (e.kind) {
    case orch::outreach::error_kind::http_status:  // no API error envelope
    case orch::outreach::error_kind::malformed_response:
        if (e.what_to_do == orch::outreach::disposition::give_up ||
            e.what_to_do == orch::outreach::disposition::pause_account) {
            api_refused(text, e.what_to_do, " (the answer is not the API's: is api_url " + s.api_url + " the API's URL?)");
        }
        // One the client may try again (a 200 whose body is cut or of another shape, a 5xx page):
        // as likely a passing fault of the API as the setting's mistake.
        api_refused(text, e.what_to_do,
                    " (the answer is not of the API's documented shape: try again later; if it persists, check that "
                    "api_url " + s.api_url + " is the API's URL)");
    case orch::outreach::error_kind::transport_connect:  // nothing was sent
        api_refused(text, e.what_to_do,
                    " (no API answered at api_url " + s.api_url +
                        (s.api_url == settings{}.api_url ? ", the default (the sandbox's)" : "") +
                        ": check the api_url setting, or try again once the API is up)");
    default:
        api_refused(text, e.what_to_do);
    }
}
[[noreturn]] void api_refused(const settings& s, const std::string& what, const orch::outreach::error& e) {
    api_refused_as(s, what + ": " + orch::outreach::describe(e), e);
}
// A call named by `call` ("login") that did not succeed, said as what happened to it: refused by
// the API (its error answer), not sent (no API answered), or failed (no answer of the API's).
[[noreturn]] void api_call_failed(const settings& s, const std::string& call, const orch::outreach::error& e) {
    using kind = orch::outreach::error_kind;
    const char* how = e.kind == kind::api_error || e.kind == kind::v1_error ? " refused"
                      : e.kind == kind::transport_connect                  ? " not sent"
                                                                           : " failed";
    api_refused(s, call + how, e);
}

// What an operator's command says while it waits for the API key's places, without repeating
// itself: who stands ahead in the line when that changes, and a wait for the key's rate or a
// cooldown once (not again at each refresh of its ticket within it). Shared by the accounts
// commands' wait and an apply's audience search.
struct wait_teller {
    std::string prefix;  // before each line ("" or "audience search, page N: ")
    std::string told_ahead;
    std::chrono::steady_clock::time_point told_until{};

    void ahead(const std::string& who) {
        if (who != told_ahead) {
            std::cerr << prefix << "waiting for " << who << "\n";
            told_ahead = who;
        }
    }
    void held(std::chrono::milliseconds retry_after, const std::string& by) {
        const auto now = std::chrono::steady_clock::now();
        if (retry_after > std::chrono::seconds(1) && now + retry_after > told_until + std::chrono::seconds(1)) {
            std::cerr << prefix << "waiting " << (retry_after.count() + 999) / 1000 << " s for " << by << "\n";
            told_until = now + retry_after;
        }
        told_ahead.clear();
    }
};

// Takes a place for an operator's call in the API key's bucket (check `c`), waiting for it at
// most 2 minutes; throws (unavailable) when Redis does not answer for 10 s or no place comes in
// time. Commands waiting at once stand in the operators' line (limiter::line) and take in the order
// they asked: only the first in line takes, the others look again every 100 ms. Its ticket is
// refreshed at least every 5 s of waiting and stays in line 15 s without word, so a command
// killed while it waits holds the others up for 15 s at most.
orch::limits::verdict wait_for_key_place(orch::limits::limiter& limiter, const orch::limits::check& c) {
    constexpr auto refresh = orch::limits::limiter::line_refresh;
    constexpr auto look_again = orch::limits::limiter::line_look_again;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    const auto no_redis = [] {
        return orch::engine::failure(orch::engine::error_category::unavailable,
                                     "Redis did not answer, so this call could not take its place in the API "
                                     "key's request rate; this call was not sent (try again later)");
    };
    orch::limits::line_ticket in_line(limiter);  // left however the wait ends
    wait_teller tell;
    // Redis not answering is waited out for a few seconds (a restart, a failover), as the workers
    // hold their calls, and then ends the command.
    constexpr std::chrono::seconds redis_patience{10};
    std::optional<std::chrono::steady_clock::time_point> redis_down_since;
    const auto wait_for_redis = [&] {
        const auto now = std::chrono::steady_clock::now();
        if (!redis_down_since) {
            redis_down_since = now;
            std::cerr << "Redis did not answer; trying again for up to " << redis_patience.count() << " s\n";
        } else if (now - *redis_down_since >= redis_patience || now >= deadline) {
            throw no_redis();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    };
    for (;;) {
        const auto place = in_line.ask();
        if (!place) {
            wait_for_redis();
            continue;
        }
        redis_down_since.reset();
        const auto now = std::chrono::steady_clock::now();
        if (place->ahead > 0) {
            if (now + look_again > deadline) {
                throw orch::engine::failure(
                    orch::engine::error_category::unavailable,
                    std::to_string(place->ahead) + " operator command(s) asked for the API key's places before this "
                        "one and are still waiting after 2 minutes; this call was not sent (try again later)");
            }
            tell.ahead(std::to_string(place->ahead) +
                       " operator command(s) that asked for the API key's places before this one");
            std::this_thread::sleep_for(look_again);
            continue;
        }
        const auto v = limiter.take(c);
        if (v.allowed) {
            return v;
        }
        if (v.why == orch::limits::reason::unavailable) {
            wait_for_redis();
            continue;
        }
        const auto seconds = std::to_string((v.retry_after.count() + 999) / 1000);
        // The key's cooldown after a 429, or its rate (busy with the workers' calls).
        const std::string held = v.why == orch::limits::reason::cooldown_key
                                     ? "the API key's cooldown after a RATE_LIMITED answer"
                                     : "the API key's request rate";
        if (v.why == orch::limits::reason::bad_input || now + v.retry_after > deadline) {
            throw orch::engine::failure(
                orch::engine::error_category::unavailable,
                (v.why == orch::limits::reason::cooldown_key
                     ? held + " ends in " + seconds + " s, after the 2 minutes this call may wait"
                     : held + " has no place for this call within 2 minutes (the next is " + seconds + " s away)") +
                    "; this call was not sent (try again later)");
        }
        tell.held(v.retry_after, held);
        std::this_thread::sleep_for(std::clamp(v.retry_after, std::chrono::milliseconds(10), refresh));
    }
}

// with_client for a command's call that must count in the API key's request rate, as the workers'
// and serve's calls do: the key's limit is the API's, shared by everything that uses the key.
// With Redis configured, the call first takes a place in the key's bucket (account "~cli", as
// serve's account-less calls take "~serve"), waiting for it at most 2 minutes
// (wait_for_key_place); a RATE_LIMITED answer then writes the key's cooldown for every worker,
// and an answered call ends the key's streak of them. Redis not answering for 10 s stops the
// command before its call is sent: its place could not be counted. Without Redis, the call goes
// as it is (the workers cannot count theirs either).
template <typename F>
auto with_gated_client(const settings& s, F f) {
    std::unique_ptr<orch::limits::limiter> limiter;
    orch::limits::check c;
    orch::limits::verdict taken;
    if (!s.redis_url.empty()) {
        limiter = std::make_unique<orch::limits::limiter>(orch::engine::limiter_settings(s));
        c.account_id = "~cli";
        c.what = orch::limits::action::check_invitation;
        c.day = orch::limits::day_in_zone(std::chrono::system_clock::now(), "UTC").value_or(orch::limits::local_day{});
        taken = wait_for_key_place(*limiter, c);
    }
    auto r = with_client(s, f);
    if (limiter && !r && r.error().code == "RATE_LIMITED") {
        std::optional<std::chrono::milliseconds> ra;
        if (r.error().retry_after_s) {
            ra = std::chrono::seconds(*r.error().retry_after_s);
        }
        (void)limiter->rate_limited(c, orch::limits::scope::key, ra);
    } else if (limiter && r) {
        // Ends the key's RATE_LIMITED streak the take saw, as a worker's answered call does, so
        // the next 429's backoff starts short again.
        limiter->succeeded(c, taken);
    }
    return r;
}

// A command's call through with_gated_client that waits out a 429, with at most 3 retries,
// rather than failing a command the operator would only have to run again (and, for a
// checkpoint, type the code again); a Retry-After over 2 minutes is not waited out (the caller
// says the refusal, exit 1). With Redis, the 429 wrote the key's cooldown (its Retry-After, else
// a backoff) and the retry waits for it in the key's bucket, up to 2 minutes each time, as every
// worker does; without, the command sleeps the Retry-After (else 2, 4, 8 s), at most 2 minutes in
// all. A 429 is answered before the API does anything, so the call is sent again as it was.
template <typename F>
auto with_429_retries(const settings& s, const std::string& what, F call) {
    auto r = with_gated_client(s, call);
    std::int64_t waited_s = 0;
    for (int tries = 0; !r && r.error().code == "RATE_LIMITED" && tries < 3; ++tries) {
        const auto& ra = r.error().retry_after_s;
        const std::string told = ra ? " (Retry-After " + std::to_string(*ra) + " s)" : std::string();
        if (ra && *ra > 120) {
            break;  // longer than a retry may wait
        }
        if (!s.redis_url.empty()) {
            std::cerr << "rate limited" << told << ": retrying the " << what << " when the API key's cooldown ends\n";
        } else {
            std::int64_t wait_s = std::max<std::int64_t>(ra.value_or(2LL << tries), 1);
            if (waited_s + wait_s > 120) {
                break;
            }
            std::cerr << "rate limited" << told << ": retrying the " << what << " in " << wait_s << " s\n";
            std::this_thread::sleep_for(std::chrono::seconds(wait_s));
            waited_s += wait_s;
        }
        r = with_gated_client(s, call);
    }
    return r;
}

// ---- output formats ----
// Every listing command takes --format table|json|csv (text_table, print_csv and print_aligned
// are in command_support).
// A JSON value as a cell: strings as they are, numbers as written, null as "".
std::string cell(const json& v) {
    if (v.is_null()) {
        return "";
    }
    return v.is_string() ? v.get<std::string>() : v.dump();
}

// A fraction (0.5714) as a percentage with one decimal ("57.1%"); null or not a number: "".
std::string percent(const json& v) {
    if (!v.is_number()) {
        return "";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", v.get<double>() * 100.0);
    return buf;
}

// Prints `sections` in `format`: table (the named one, or all), csv (the named one, else the
// first), json (`doc`, given whole). An unknown section name is a usage error listing them.
void print_sections(const std::string& format, const std::vector<text_table>& sections,
                    const std::vector<std::string>& names, const std::string& section, const json& doc) {
    std::size_t pick = 0;
    if (!section.empty()) {
        auto it = std::find(names.begin(), names.end(), section);
        if (it == names.end()) {
            std::string all;
            for (const auto& n : names) {
                all += (all.empty() ? "" : ", ") + n;
            }
            throw usage_error("--section: unknown section '" + orch::text::escaped(section) + "'; one of " + all);
        }
        pick = static_cast<std::size_t>(it - names.begin());
    }
    if (format == "json") {
        std::cout << (section.empty() || !doc.contains(section) ? doc : doc[section]).dump(2) << "\n";
        return;
    }
    if (format == "csv") {
        print_csv(sections[pick]);
        return;
    }
    for (std::size_t i = 0; i < sections.size(); ++i) {
        if (!section.empty() && i != pick) {
            continue;
        }
        if (i > 0 && section.empty()) {
            std::cout << "\n";
        }
        print_aligned(sections[i]);
    }
}

// The store, after checking the schema is current: an empty or older database says to run
// `orchestrator migrate` (and a newer one to upgrade), whatever the command.
std::unique_ptr<orch::engine::store> open_store(const settings& s) {
    auto db = std::make_unique<orch::engine::store>(s.database_url);
    db->require_current();
    return db;
}

// ---- migrate ----
int cmd_migrate(const settings& s) {
    orch::engine::store db(s.database_url);
    auto applied = db.migrate();
    if (applied.empty()) {
        std::cout << "database is current (version " << db.current_version() << ")\n";
    }
    for (int v : applied) {
        std::cout << "applied migration " << v << "\n";
    }
    return 0;
}

// ---- accounts ----
int cmd_accounts_connect(const settings& s, const std::string& token, const std::string& country,
                         const std::string& email, const std::string& password, const std::string& label) {
    orch::engine::store db(s.database_url);
    db.require_current();
    orch::outreach::login_params p;
    p.platform = orch::outreach::platform::network;
    p.country = country;
    p.login_token = token;
    p.email = email;
    p.password = password;
    auto r = with_429_retries(s, "login", [&](orch::outreach::client& api) { return api.login(p); });
    if (!r) {
        api_call_failed(s, "login", r.error());
    }
    std::string account_id = r->account_id;
    // The account's status as the API last said it (the login's, or the checkpoint's), as
    // `accounts sync` stores the status the account list gives.
    std::string api_status = r->status;
    if (r->checkpoint_required()) {
        std::cout << "checkpoint required (" << r->challenge_type << "): enter the code (empty for an app "
                  << "challenge approved on the phone): " << std::flush;
        std::string code;
        if (!std::getline(std::cin, code)) {
            // No line at all (stdin closed, as in a script): sending an empty code would answer
            // for an app challenge nobody approved.
            std::cout << "\n";
            throw usage_error("checkpoint required (" + r->challenge_type + ") for account " + account_id +
                              ", but no code could be read: standard input is closed; run `accounts connect` again "
                              "where a code can be typed (an empty line, for an app challenge approved on the phone)");
        }
        orch::outreach::checkpoint_params cp;
        cp.account_id = account_id;
        cp.code = code;
        auto c = with_429_retries(s, "checkpoint", [&](orch::outreach::client& api) { return api.checkpoint(cp); });
        if (!c) {
            api_call_failed(s, "checkpoint", c.error());
        }
        api_status = c->status.empty() ? "connected" : c->status;
    }
    // A label names one account. The login had to come first (it says which account this is: a
    // label already on this account is a re-login), so a clash is found now: said plainly, with
    // the account logged in on the API and nothing stored here.
    std::string old_label;
    for (const auto& a : db.accounts()) {
        if (!label.empty() && a.label == label && a.account_id != account_id) {
            throw usage_error("--label '" + orch::text::escaped(label) + "' is already account " + a.account_id +
                              "'s; this login is account " + account_id +
                              " (logged in on the API, not stored here): connect it again with another --label");
        }
        if (a.account_id == account_id) {
            old_label = a.label;
        }
    }
    orch::engine::account_row row;
    row.account_id = account_id;
    row.api_status = api_status;
    row.label = label;
    db.upsert_account(row);
    if (!label.empty() && !old_label.empty() && old_label != label) {
        std::cerr << "account " << account_id << " was labelled '" << orch::text::escaped(old_label) << "', now '"
                  << orch::text::escaped(label) << "': campaign files that name it '" << orch::text::escaped(old_label)
                  << "' no longer find it\n";
    }
    std::cout << account_id << "\n";
    return 0;
}

int cmd_accounts_sync(const settings& s) {
    orch::engine::store db(s.database_url);
    db.require_current();
    const orch::outreach::list_accounts_params page{500, 0};
    auto r = with_gated_client(s, [&page](orch::outreach::client& api) { return api.list_accounts(page); });
    if (!r) {
        api_refused(s, "listing accounts failed", r.error());
    }
    auto known = db.accounts();
    for (const auto& a : r->items) {
        orch::engine::account_row row;
        row.account_id = a.account_id;
        row.platform = a.platform.empty() ? "network" : a.platform;
        row.api_status = a.status.empty() ? "active" : a.status;
        row.connected = a.is_active.value_or(a.status == "active" || a.status == "connected");
        row.display_name = a.account_name;
        for (const auto& k : known) {
            if (k.account_id == a.account_id) {
                row.label = k.label;
            }
        }
        db.upsert_account(row);
    }
    std::cout << "synced " << orch::text::counted(static_cast<std::int64_t>(r->items.size()), "account", "accounts") << "\n";
    // Accounts the API lists as not connected (a login that never finished its checkpoint, a
    // session that ended) are stored with their status: said, so that an unlabelled inactive row
    // in `accounts list` is not a surprise, and what to do about it.
    for (const auto& a : r->items) {
        if (a.is_active.value_or(a.status == "active" || a.status == "connected")) {
            continue;
        }
        std::string label;
        for (const auto& k : known) {
            if (k.account_id == a.account_id) {
                label = k.label;
            }
        }
        std::cerr << "warning: account " << orch::text::escaped(a.account_id)
                  << (label.empty() ? std::string(" (no label: not connected through this orchestrator)")
                                    : " ('" + orch::text::escaped(label) + "')")
                  << " is not connected (status " << orch::text::escaped(a.status.empty() ? "unknown" : a.status)
                  << "): its calls are refused until it logs in again (accounts connect)\n";
    }
    // Stored accounts the API no longer lists (a whole page under its size is the whole list):
    // said, not changed; their calls will fail, and `serve` pauses them on INVALID_ACCOUNT.
    if (static_cast<std::int64_t>(r->items.size()) < *page.limit) {
        for (const auto& k : known) {
            const bool listed = std::any_of(r->items.begin(), r->items.end(),
                                            [&k](const auto& a) { return a.account_id == k.account_id; });
            if (!listed) {
                std::cerr << "warning: account " << orch::text::escaped(k.account_id)
                          << (k.label.empty() ? std::string() : " ('" + orch::text::escaped(k.label) + "')")
                          << " is stored here but the API no longer lists it: its calls will be refused "
                             "(connect it again, or stop its campaigns)\n";
            }
        }
    }
    return 0;
}

// Per account and action: the quota used and left today and this week, and any cooldown, from
// the Redis buckets (limits::limiter::status) with the settings' quotas. "Today" is the account's
// quota day (accounts.time_zone, UTC when not chosen; `time_zone`, when given, instead), with the
// account's own quota overrides (accounts limits) where it has them. Redis unavailable
// or not configured: the accounts are listed anyway, with the reason the quotas are missing.
struct account_quotas {
    std::optional<orch::limits::account_status> status;
    std::string error;  // why status is missing
};

// A limiter for a one-shot command to read the quotas' use with (limits::limiter::status): a short
// connect timeout, so that the command says the use is unknown rather than hang on Redis. Null,
// with the reason in `why`, when Redis is not set or the settings do not hold.
struct quota_reader {
    orch::limits::settings config;
    std::unique_ptr<orch::limits::limiter> limiter;
};
quota_reader read_quotas_with(const settings& s, std::string& why) {
    quota_reader r{orch::engine::limiter_settings(s), nullptr};
    r.config.connect_timeout_ms = 1'000;
    if (s.redis_url.empty()) {
        why = "Redis: REDIS_URL is not set";
    } else if (auto problems = orch::limits::validate(r.config); !problems.empty()) {
        why = "Redis: " + problems.front();
    } else {
        r.limiter = std::make_unique<orch::limits::limiter>(r.config);
    }
    return r;
}

std::string left_text(std::int64_t used, std::int64_t limit, std::int64_t left) {
    if (limit < 0) {
        return std::to_string(used) + "/-";
    }
    return std::to_string(used) + "/" + std::to_string(limit) + " (" + std::to_string(left) + " left)";
}

int cmd_accounts_list(const settings& s, const std::string& format, const std::string& time_zone,
                      const std::string& section) {
    namespace limits = orch::limits;
    orch::engine::store db(s.database_url);
    db.require_current();
    const auto now = std::chrono::system_clock::now();
    if (!time_zone.empty()) {
        if (const auto problem = orch::campaigns::time_zone_problem(time_zone); !problem.empty()) {
            throw usage_error("--time-zone: " + problem);
        }
    }
    auto accounts = db.accounts();
    // Each account's quota day: its own time zone unless --time-zone says another.
    auto zone_of = [&time_zone](const orch::engine::account_row& a) {
        return !time_zone.empty() ? time_zone : orch::engine::quota_time_zone(a.time_zone);
    };
    std::map<std::string, limits::local_day> days;
    for (const auto& a : accounts) {
        days[a.account_id] = limits::day_in_zone(now, zone_of(a)).value_or(limits::local_day{});
    }
    // The quotas of every account, or one reason why there are none.
    std::string quotas_error;
    std::map<std::string, limits::account_status> quotas;
    const auto reader = read_quotas_with(s, quotas_error);
    if (reader.limiter) {
        for (const auto& a : accounts) {
            auto st = reader.limiter->status(a.account_id, days[a.account_id],
                                             orch::engine::effective(a.quotas, reader.config.actions));
            if (!st) {
                quotas_error = "Redis: no answer from " + orch::engine::redacted(s.redis_url);
                break;
            }
            quotas[a.account_id] = std::move(*st);
        }
    }
    if (!quotas_error.empty()) {
        quotas.clear();
    }
    // The limits are kept per API key: run with another key than the workers', every quota reads
    // unused. When nothing is used under this key, a (bounded) look for the accounts' counters
    // under another one says so.
    std::string other_key;
    const bool nothing_used =
        !quotas.empty() && std::all_of(quotas.begin(), quotas.end(), [](const auto& q) {
            return !q.second.key_cooldown_until &&
                   std::all_of(q.second.actions.begin(), q.second.actions.end(),
                               [](const auto& st) { return st.used_week == 0 && !st.cooldown_until; });
        });
    if (nothing_used) {
        int looked = 0;
        for (const auto& a : accounts) {
            if (looked++ == 3) {
                break;
            }
            if (reader.limiter->counted_under_another_key(a.account_id).value_or(false)) {
                other_key = "Redis keeps quota counts of " + a.account_id +
                            (a.label.empty() ? std::string() : " (" + a.label + ")") +
                            " under another API key than this command's (OUTREACH_API_KEY): the quotas shown are "
                            "this key's; run it with the workers' key to see theirs";
                break;
            }
        }
    }
    if (!other_key.empty() && format != "json") {
        std::cerr << "warning: " << orch::text::escaped(other_key) << "\n";
    }
    if (format == "json") {
        // Each account as GET /v1/accounts gives it (engine/account_view.hpp), its quota use in
        // its own day's time zone or --time-zone's.
        json out = json::array();
        for (const auto& a : accounts) {
            json j = orch::engine::account_json(a, reader.config.actions);
            if (auto it = quotas.find(a.account_id); it != quotas.end()) {
                j["limits"] = orch::engine::account_limits_json(it->second, zone_of(a), days[a.account_id]);
            } else {
                j["limits_error"] = quotas_error;
            }
            out.push_back(std::move(j));
        }
        json doc = {{"time_zone", time_zone.empty() ? json(nullptr) : json(time_zone)}, {"accounts", out},
                    {"limits_error", quotas_error.empty() ? json(nullptr) : json(quotas_error)},
                    {"limits_warning", other_key.empty() ? json(nullptr) : json(other_key)}};
        std::cout << doc.dump(2) << "\n";
        return 0;
    }
    if (format == "csv") {
        // One table: the accounts (the main one), or --section quotas: one row per account and action.
        text_table list{"", {"account", "label", "status", "connected", "webhook", "time_zone"}, {}};
        text_table q{"", {"account", "action", "day", "time_zone", "used_today", "limit_today", "left_today", "used_week", "limit_week",
                          "left_week", "cooldown_until"}, {}};
        for (const auto& a : accounts) {
            list.rows.push_back(
                {a.account_id, a.label, a.api_status, a.connected ? "true" : "false", a.webhook_id, a.time_zone});
            auto it = quotas.find(a.account_id);
            if (it == quotas.end()) {
                continue;
            }
            for (const auto& st : it->second.actions) {
                auto n = [](std::int64_t v) { return v < 0 ? std::string() : std::to_string(v); };
                q.rows.push_back({a.account_id, limits::to_string(st.what), orch::limits::iso_date(days[a.account_id].day), zone_of(a),
                                  std::to_string(st.used_today), n(st.limit_today), n(st.left_today),
                                  std::to_string(st.used_week), n(st.limit_week), n(st.left_week),
                                  st.cooldown_until ? orch::iso8601_s(*st.cooldown_until) : std::string()});
            }
        }
        if (section == "quotas" && !quotas_error.empty()) {
            throw usage_error("quotas unavailable (" + quotas_error + ")");
        }
        print_sections("csv", {list, q}, {"accounts", "quotas"}, section, json());
        return 0;
    }
    // The accounts, then each one's quotas. Text from the API or an operator is escaped by the
    // printer, so no control or bidi character reaches the terminal.
    text_table list{"", {"account", "label", "status", "connected", "webhook", "quota day in"}, {}};
    for (const auto& a : accounts) {
        list.rows.push_back({a.account_id, a.label, a.api_status, a.connected ? "yes" : "no", a.webhook_id,
                             a.time_zone.empty() ? "UTC (none chosen)" : a.time_zone});
    }
    print_aligned(list);
    for (const auto& a : accounts) {
        auto it = quotas.find(a.account_id);
        const bool overrides = !orch::engine::no_overrides(a.quotas);
        if (it == quotas.end() && !overrides) {
            continue;
        }
        std::cout << "\n" << orch::text::escaped(a.account_id)
                  << (a.label.empty() ? std::string() : " (" + orch::text::escaped(a.label) + ")") << ", quota day "
                  << orch::limits::iso_date(days[a.account_id].day) << " in " << orch::text::escaped(zone_of(a))
                  << (a.time_zone.empty() && time_zone.empty() ? " (no time zone chosen yet)" : "") << "\n";
        if (overrides) {
            std::string text;
            for (auto act : orch::engine::quota_actions) {
                const auto& o = a.quotas[static_cast<std::size_t>(act)];
                if (!o.empty()) {
                    text += std::string(text.empty() ? "" : ", ") + orch::limits::to_string(act) +
                            (o.per_day ? " " + std::to_string(*o.per_day) + "/day" : "") +
                            (o.per_week ? " " + std::to_string(*o.per_week) + "/week" : "");
                }
            }
            std::printf("  own quotas (accounts limits): %s\n", text.c_str());
        }
        if (it == quotas.end()) {
            continue;
        }
        if (it->second.key_cooldown_until) {
            std::printf("  API key cooling down until %s\n", orch::iso8601_s(*it->second.key_cooldown_until).c_str());
        }
        text_table q{"", {"action", "today used/limit", "week used/limit", "cooldown until"}, {}};
        const auto quotas_of = orch::engine::effective(a.quotas, reader.config.actions);
        for (const auto& st : it->second.actions) {
            // Read-only checks have no quota: shown only when used or cooling down.
            if (st.limit_today < 0 && st.limit_week < 0 && st.used_week == 0 && !st.cooldown_until) {
                continue;
            }
            // Today's limit below the account's day quota: a new account's ramp-up.
            const auto& own = quotas_of[static_cast<std::size_t>(st.what)];
            const std::int64_t per_day = own ? own->per_day : reader.config.actions[static_cast<std::size_t>(st.what)].limit.per_day;
            const bool ramping = st.limit_today >= 0 && (per_day < 0 || st.limit_today < per_day);
            q.rows.push_back({limits::to_string(st.what),
                              left_text(st.used_today, st.limit_today, st.left_today) +
                                  (ramping ? " ramp-up to " + (per_day < 0 ? std::string("no limit") : std::to_string(per_day))
                                           : std::string()),
                              left_text(st.used_week, st.limit_week, st.left_week),
                              st.cooldown_until ? orch::iso8601_s(*st.cooldown_until) : std::string()});
        }
        print_aligned(q);
    }
    if (!quotas_error.empty()) {
        std::printf("quotas unavailable (%s)\n", quotas_error.c_str());
    } else {
        std::printf("quotas: today (each account's quota day) and the rolling week; -: no limit; check_invitation "
                    "counts every read of the account (the steps' checks, and serve's webhook, polling and "
                    "catch-up reads), get_conversation counts serve's list_inbox and "
                    "conversation reads too, and a follow-up's reply check counts with its send\n");
    }
    return 0;
}

// ---- per-account quota overrides (engine/account_quotas.hpp) ----
// What `accounts limits` was asked to change: per action, the day and week numbers given (as
// typed, checked before the database is touched) and whether to clear the action.
struct limits_request {
    std::map<std::string, std::string> values;  // "invite.per_day" -> "40"
    std::vector<std::string> clear;             // action names, or "all"
    std::optional<std::string> time_zone;       // --time-zone: the account's quota day
};

// The change `r` describes, applied to `current`; throws usage_error naming every bad flag.
orch::engine::quota_overrides limits_change(const limits_request& r, orch::engine::quota_overrides current) {
    namespace limits = orch::limits;
    orch::engine::admin_input::problems found;
    const auto add = [&found](std::string p) { found.add(std::move(p)); };
    for (const auto& name : r.clear) {
        if (name == "all") {
            current = {};
            continue;
        }
        auto a = limits::parse_action(name);
        if (!a || !orch::engine::has_quota(*a)) {
            add("--clear: unknown action '" + orch::text::escaped(name) + "'; one of invite, send, visit, withdraw, search, all");
            continue;
        }
        current[static_cast<std::size_t>(*a)] = {};
    }
    for (const auto& [key, text] : r.values) {
        auto dot = key.find('.');
        auto a = *limits::parse_action(key.substr(0, dot));
        std::string flag = "--" + key.substr(0, dot) + (key.substr(dot + 1) == "per_day" ? "-per-day" : "-per-week");
        if (std::find(r.clear.begin(), r.clear.end(), key.substr(0, dot)) != r.clear.end()) {
            add(flag + " and --clear " + key.substr(0, dot) + " contradict each other");
            continue;
        }
        // As PUT /v1/accounts/{id}/limits: "all" clears this action too.
        if (std::find(r.clear.begin(), r.clear.end(), "all") != r.clear.end()) {
            add(flag + " and --clear all contradict each other");
            continue;
        }
        std::int64_t n = -1;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
        if (ec != std::errc() || end != text.data() + text.size() || n < 0 || n > orch::engine::quota_value_max) {
            add(flag + ": must be an integer from 0 to " + std::to_string(orch::engine::quota_value_max) + ", got '" +
                orch::text::escaped(text) + "'");
            continue;
        }
        auto& o = current[static_cast<std::size_t>(a)];
        (key.substr(dot + 1) == "per_day" ? o.per_day : o.per_week) = n;
    }
    if (!found.empty()) {
        throw usage_error(found.joined());
    }
    return current;
}

// Sets or clears the quota overrides of one account (named by id or label) and prints its
// effective quotas per action: the override where there is one, else the settings' default.
int cmd_accounts_limits(const settings& s, const std::string& account, const limits_request& r,
                        const std::string& format) {
    // Check the flags first, every one: a bad one changes nothing and needs no database.
    orch::engine::admin_input::problems found;
    try {
        limits_change(r, {});
    } catch (const usage_error& e) {
        found.add(e.what());
    }
    if (r.time_zone) {
        if (const auto problem = orch::campaigns::time_zone_problem(*r.time_zone); !problem.empty()) {
            found.add("--time-zone: " + problem);
        }
    }
    if (!found.empty()) {
        throw usage_error(found.joined());
    }
    orch::engine::store db(s.database_url);
    db.require_current();
    auto result = db.change_account_quotas(
        account,
        [&r, &s](const orch::engine::quota_overrides& current, std::string& why) {
            auto next = limits_change(r, current);
            // As PUT /v1/accounts/{id}/limits: a week below a day (defaults included), for an
            // action these flags change.
            std::vector<orch::limits::action> changed;
            for (const auto& [key, text] : r.values) {
                changed.push_back(*orch::limits::parse_action(key.substr(0, key.find('.'))));
            }
            why = orch::engine::week_below_day(next, orch::engine::limiter_settings(s).actions, changed);
            return why.empty() ? std::optional(next) : std::nullopt;
        },
        r.time_zone);
    if (!result.found) {
        throw usage_error("no account '" + orch::text::escaped_clipped(account, 200) + "' (by id or label; `orchestrator accounts list` shows them)");
    }
    if (!result.error.empty()) {
        throw usage_error(result.error);
    }
    const auto defaults = orch::engine::limiter_settings(s).actions;
    auto view = orch::engine::quotas_view(result.quotas, defaults);
    if (format == "json") {
        json doc = {{"account_id", result.account_id}, {"changed", result.changed},
                    {"time_zone", result.time_zone.empty() ? json(nullptr) : json(result.time_zone)},
                    {"note", orch::engine::quota_day_move_note(result.previous_time_zone, result.time_zone,
                                                               std::chrono::system_clock::now())},
                    {"woken", result.woken}, {"overrides", orch::engine::to_json(result.quotas)}, {"quotas", view}};
        std::cout << doc.dump(2) << "\n";
        return 0;
    }
    if (format == "csv") {
        text_table t{"", {"action", "per_day", "per_day_source", "per_week", "per_week_source"}, {}};
        for (auto a : orch::engine::quota_actions) {
            const auto& q = view[orch::limits::to_string(a)];
            t.rows.push_back({orch::limits::to_string(a), cell(q["per_day"]), cell(q["per_day_source"]),
                              cell(q["per_week"]), cell(q["per_week_source"])});
        }
        print_csv(t);
        return 0;
    }
    auto quota_cell = [](const json& v, const json& source) {
        return (v.is_null() ? std::string("-") : std::to_string(v.get<std::int64_t>())) + " (" +
               source.get<std::string>() + ")";
    };
    std::printf("account %s%s\n", orch::text::escaped(result.account_id).c_str(),
                result.changed ? ": changed"
                               : (r.values.empty() && r.clear.empty() && !r.time_zone ? "" : ": unchanged"));
    std::printf("  quota day: %s\n",
                result.time_zone.empty() ? "UTC (no time zone chosen yet: the first campaign applied with it sets its own)"
                                         : orch::text::escaped(result.time_zone).c_str());
    if (const auto note = orch::engine::quota_day_move_note(result.previous_time_zone, result.time_zone,
                                                            std::chrono::system_clock::now());
        !note.empty()) {
        std::printf("note: %s\n", note.c_str());
    }
    std::printf("  %-10s %-20s %s\n", "action", "per day", "per week");
    for (auto a : orch::engine::quota_actions) {
        const auto& q = view[orch::limits::to_string(a)];
        std::printf("  %-10s %-20s %s\n", orch::limits::to_string(a), quota_cell(q["per_day"], q["per_day_source"]).c_str(),
                    quota_cell(q["per_week"], q["per_week_source"]).c_str());
    }
    std::printf("-: no limit; a campaign file's limits can only lower these for its campaign\n");
    if (result.woken > 0) {
        std::printf("%lld leads waiting for its quotas (or a campaign's cap on it) are due again\n",
                    static_cast<long long>(result.woken));
    }
    // A quota lowered to or below what the account used already in its day or week: nothing more
    // goes out in it, which "changed" alone does not say (a trial's send quota of 3 after 10 sends).
    std::string no_reader;
    if (const auto reader = result.changed ? read_quotas_with(s, no_reader) : quota_reader{}; reader.limiter) {
        const auto day = orch::limits::day_in_zone(std::chrono::system_clock::now(),
                                                   orch::engine::quota_time_zone(result.time_zone));
        auto st = day ? reader.limiter->status(result.account_id, *day,
                                               orch::engine::effective(result.quotas, reader.config.actions))
                      : std::nullopt;
        for (const auto& a : st ? st->actions : std::vector<orch::limits::action_status>{}) {
            if (a.limit_today >= 0 && a.used_today > 0 && a.used_today >= a.limit_today) {
                std::printf("note: %s: %lld used in this quota day, at or above its day quota of %lld: none more "
                            "until the quota day ends\n",
                            orch::limits::to_string(a.what), static_cast<long long>(a.used_today),
                            static_cast<long long>(a.limit_today));
            } else if (a.limit_week >= 0 && a.used_week > 0 && a.used_week >= a.limit_week) {
                std::printf("note: %s: %lld used in the last 7 quota days, at or above its week quota of %lld: "
                            "none more until older ones leave the week\n",
                            orch::limits::to_string(a.what), static_cast<long long>(a.used_week),
                            static_cast<long long>(a.limit_week));
            }
        }
    }
    return 0;
}

// ---- campaigns ----
struct loaded_campaign {
    orch::campaigns::campaign value;
    std::string source;
};

loaded_campaign load_campaign_file(const std::string& file, orch::engine::store* db, bool stores = true) {
    auto read = orch::cli::read_file(file, orch::campaigns::definition_bytes_max);
    if (!read.text) {
        throw usage_error("'" + orch::text::escaped(file) + "': cannot read the campaign file: " + read.why);
    }
    auto& text = read.text;
    auto base = fs::path(file).parent_path();
    auto r = orch::engine::check_definition(*text, file, db, [base](const std::string& path) {
        fs::path p(path);
        auto read = orch::cli::read_file((p.is_absolute() ? p : base / p).string(), orch::campaigns::audience_file_bytes_max);
        return orch::campaigns::file_read(std::move(read.text), std::move(read.why));
    });
    // A diagnostic may quote what the file holds (a key, a step id): through terminal_error, which
    // spells out a control character and leaves the escapes the loader wrote alone (escaping the
    // message again doubled them: 'a\\tb').
    for (const auto& w : r.warnings) {
        std::cerr << "warning: " << orch::text::terminal_error(w.to_string()) << "\n";
    }
    if (!r.errors.empty()) {
        std::string all;
        for (const auto& d : r.errors) {
            all += orch::text::terminal_error(d.to_string()) + "\n";
        }
        all += orch::text::counted(static_cast<std::int64_t>(r.errors.size()), "error", "errors") +
               (stores ? "; nothing was stored" : "");
        throw usage_error(all);
    }
    return {std::move(*r.value), std::move(*text)};
}

// The audience search's pages let through by the gate (and so sent), for what an interrupted
// command says it leaves billed.
std::atomic<int> g_search_pages_sent{0};
std::atomic<bool> g_search_running{false};  // an apply's audience search is under way

// The audience as leads: the file's rows, or a search_people through the first sender, with
// what that search cost (booked in the campaign's ledger by the apply). A failed search costs
// nothing and stops the apply.
// The row of a search billed and not booked yet (store::begin_search_in_flight), removed when
// the apply is done with it, however it ends. It only keeps serve's drift check from taking the
// search's pages for credits lost, so the database's failures are not the apply's.
// An interrupted command (leave_the_line_when_interrupted) ends it on a connection of its own: the
// pages it had sent are then a drift the balance reads report, not credits in flight for an hour.
std::atomic<std::int64_t> g_search_row{0};
std::string g_search_row_database;  // set before g_search_row

class search_in_flight {
public:
    search_in_flight(orch::engine::store& db, const std::string& database_url) : db_(db) {
        try {
            id_ = db_.begin_search_in_flight();
            g_search_row_database = database_url;
            g_search_row = id_;
        } catch (const std::exception&) {
            id_ = 0;
        }
    }
    search_in_flight(const search_in_flight&) = delete;
    search_in_flight& operator=(const search_in_flight&) = delete;
    ~search_in_flight() {
        g_search_row = 0;
        if (id_ != 0) {
            try {
                db_.end_search_in_flight(id_);
            } catch (const std::exception&) {
                // the row stops counting once the apply's session ends (migration 0043)
            }
        }
    }
    void hold(std::int64_t credits) {
        if (id_ != 0) {
            try {
                db_.hold_search_in_flight(id_, credits);
            } catch (const std::exception&) {
            }
        }
    }

private:
    orch::engine::store& db_;
    std::int64_t id_ = 0;
};

struct audience {
    std::vector<orch::engine::lead_input> leads;
    std::optional<orch::engine::apply_charge> charge;
    std::optional<orch::engine::audience_found> found;
    std::unique_ptr<search_in_flight> in_flight;  // until the apply has booked the charge
};
audience audience_leads(const settings& s, orch::engine::store& db, const orch::campaigns::campaign& c,
                        const std::string& sender, const orch::engine::search_budget& room) {
    if (c.who.kind == orch::campaigns::audience::source::file) {
        return {orch::engine::leads_from_file(c), std::nullopt, std::nullopt, nullptr};
    }
    // Each page takes the sender's search bucket when Redis is configured, as a worker's call would.
    std::unique_ptr<orch::limits::limiter> limiter;
    orch::engine::page_gate gate;
    if (!s.redis_url.empty()) {
        limiter = std::make_unique<orch::limits::limiter>(orch::engine::limiter_settings(s));
        gate = orch::engine::search_gate(*limiter, sender, c,
                                         orch::engine::search_limits_of(db, sender, orch::engine::limiter_settings(s).actions));
        // Says what a page waits for, as the accounts commands do: once per line length, and once
        // per wait for the key's rate or a cooldown (a page held longer than it may wait says
        // why when the search stops).
        gate.ask = [inner = std::move(gate.ask), tell = wait_teller{},
                    told_page = 0]() mutable -> std::optional<orch::engine::page_refusal> {
            auto refused = inner();
            if (!refused) {
                ++g_search_pages_sent;
                return refused;
            }
            if (!refused->passing || refused->retry_after > orch::engine::search_wait_max) {
                return refused;
            }
            if (const int n = g_search_pages_sent.load() + 1; n != told_page) {
                told_page = n;
                tell = wait_teller{"audience search, page " + std::to_string(n) + ": ", {}, {}};
            }
            if (refused->queued) {
                tell.ahead(refused->why);
            } else {
                tell.held(refused->retry_after, refused->why);
            }
            return refused;
        };
    } else {
        // No bucket to take: every page goes, and is counted as sent.
        gate.ask = []() -> std::optional<orch::engine::page_refusal> {
            ++g_search_pages_sent;
            return std::nullopt;
        };
    }
    // A page the API answered 429 did not bill, and is asked again as the same page.
    gate.answered = [inner = std::move(gate.answered)](const orch::outreach::error* e) {
        if (e != nullptr && e->what_to_do == orch::outreach::disposition::back_off) {
            --g_search_pages_sent;
        }
        return inner ? inner(e) : false;
    };
    g_search_running = true;
    auto in_flight = std::make_unique<search_in_flight>(db, s.database_url);
    gate.billed = [&in_flight](std::int64_t credits) { in_flight->hold(credits); };
    auto r = with_client(s, [&](orch::outreach::client& api) {
        return orch::engine::search_audience(api, sender, c, gate, orch::engine::search_wait_max, room);
    });
    g_search_running = false;
    if (!r) {
        // The file's or the account's mistake exits 2; a refusal that passes (the key's rate
        // still empty after the wait, a timeout, a server error) exits 1.
        api_refused_as(s, orch::engine::search_failure_text(r.error()), r.error());
    }
    auto charge = orch::engine::audience_charge(*r, sender);
    auto leads = orch::engine::leads_from_search(r->people);
    return {std::move(leads), charge, std::move(*r), std::move(in_flight)};
}

// A database for a command that can go on without one (`campaign validate`, `estimate`): nullptr
// when none is configured or it cannot be used (down, not migrated), and `problem` says which.
std::unique_ptr<orch::engine::store> optional_store(const settings& s, std::string& problem) {
    problem = "no database configured";
    if (s.database_url.empty()) {
        return nullptr;
    }
    try {
        auto opened = std::make_unique<orch::engine::store>(s.database_url);
        opened->require_current();
        return opened;
    } catch (const std::exception& e) {
        // libpq's messages run over lines; the first says what happened.
        const std::string what = e.what();
        problem = "the database did not answer (" + what.substr(0, what.find('\n')) + ")";
        return nullptr;
    }
}

int cmd_campaign_validate(const global_options& g, const std::string& file, bool search_again,
                          bool move_running = false, bool dry_run = false) {
    // Accounts are checked when a database is configured and answers; the file alone otherwise.
    settings_needs needs;
    needs.database = false;
    auto s = load(g, needs);
    std::string db_problem;
    auto db = optional_store(s, db_problem);
    auto c = load_campaign_file(file, db.get(), false);
    std::cout << file << ": ok (campaign '" << c.value.name << "', "
              << orch::text::counted(static_cast<std::int64_t>(c.value.steps.size()), "step", "steps")
              << (db ? "" : "; accounts, and what an apply would warn of, not checked: " + orch::text::escaped(db_problem))
              << ")\n";
    if (!db && c.value.who.kind == orch::campaigns::audience::source::search) {
        // The budget an apply's search would need is the database's: say the prediction was not made.
        std::cerr << "warning: whether an apply" << (search_again ? " with --search-again" : "")
                  << " would send the audience search (the budget and caps it needs) is not checked: "
                  << orch::text::escaped(db_problem) << "\n";
    }
    if (db) {
        // What an apply sent now would refuse, before anything is stored or billed; else whether
        // it would send the (billed) search again.
        std::string refused, note, held;
        std::optional<orch::engine::apply_plan> planned;
        try {
            const auto plan = orch::engine::plan_apply(*db, c.value);
            planned = plan;
            refused = orch::engine::predicted_search_refusal(c.value, plan, search_again);
            note = orch::engine::search_again_note(c.value, plan, search_again, "--search-again");
            held = orch::engine::predicted_search_hold(c.value, plan, search_again);
        } catch (const orch::engine::campaign_conflict& e) {
            refused = e.what();
        }
        if (!refused.empty()) {
            std::cout.flush();
            std::cerr << "warning: " << orch::text::escaped(refused) << "\n";
        } else if (!note.empty()) {
            std::cout << "note: " << note << "\n";
        }
        if (!held.empty()) {
            std::cout << "note: if applied now, " << orch::text::escaped(held) << "\n";
        }
        // What the apply would say of the leads already there, from the apply itself rolled back
        // (it writes, then rolls back: a database role that may only read cannot run it).
        orch::engine::apply_preview preview;
        try {
            preview = orch::engine::preview_apply(*db, c.value, orch::engine::sender_ids(*db, c.value), move_running);
        } catch (const std::exception& e) {
            const std::string what = e.what();
            std::cout.flush();
            std::cerr << "warning: what an apply would warn of is not checked: "
                      << orch::text::escaped(what.substr(0, what.find('\n'))) << "\n";
        }
        if (!preview.live_budget.empty() && preview.live_budget_kept) {
            std::cout << "note: if applied now, " << preview.live_budget << "\n";
        }
        if (!preview.moved.empty()) {
            // moved_running_text says "moved …": of an apply not made, "would have moved".
            std::cout << "note: if applied now with --move-running, it would have " << preview.moved << "\n";
        }
        std::cout.flush();
        if (!preview.live_budget.empty() && !preview.live_budget_kept) {
            std::cerr << "warning: if applied now, " << preview.live_budget << "\n";
        }
        for (const auto& w : preview.warnings) {
            std::cerr << "warning: if applied now, " << w << "\n";
        }
        if (dry_run) {
            // In the apply's own words: what it would store, and whether it would search (billed).
            std::cout << "dry run: nothing was stored or billed; an apply now would ";
            const bool searches = c.value.who.kind == orch::campaigns::audience::source::search;
            if (!refused.empty() || !planned) {
                std::cout << "be refused (the warning above)";
            } else if (!planned->exists) {
                std::cout << "create campaign '" << orch::text::escaped_name(c.value.name) << "' (version 1) and "
                          << (searches ? "send its audience search (billed)"
                                       : "enroll " + orch::text::counted(static_cast<std::int64_t>(c.value.who.leads.size()),
                                                                         "person", "people") + " of its file");
            } else if (planned->unchanged && orch::engine::skips_search(c.value, *planned, search_again)) {
                std::cout << "store nothing new: the file is version " << planned->version << "'s definition"
                          << (preview.moved.empty() ? "" : "; it would move running leads (the note above)");
            } else {
                std::cout << "store version " << planned->version + 1 << " of campaign '"
                          << orch::text::escaped_name(c.value.name) << "'"
                          << (!searches ? ", enrolling the people of its file who are new"
                              : note.empty() ? ", keeping its audience (no search)"
                                             : ", sending its audience search again (billed; the note above)");
            }
            std::cout << "\n";
        }
    } else if (dry_run) {
        std::cout << "dry run: nothing was stored or billed; what an apply would do is not known without the "
                     "database\n";
    }
    return 0;
}

// The pre-launch forecast (campaigns/estimate.hpp): credits from the client's cost model, the
// duration from the quotas in force (each sender's own when the database is looked up, else the
// settings' per-account defaults; tightened by the file's limits) and the schedule. Needs no API; with a database configured it looks the senders up.
int cmd_campaign_estimate(const global_options& g, const std::string& file, const std::string& format) {
    settings_needs needs;
    needs.database = false;
    auto s = load(g, needs);
    // With a database configured, the senders are looked up as `campaign validate` does; a
    // database that cannot answer (down, not migrated) leaves the forecast offline, with a warning.
    std::string db_problem;
    auto db = optional_store(s, db_problem);
    if (!db && !s.database_url.empty()) {
        std::cerr << "warning: the senders are not looked up: " << orch::text::escaped(db_problem) << "\n";
    }
    auto c = load_campaign_file(file, db.get(), false);
    namespace cs = orch::campaigns;
    cs::estimate_input in;
    in.senders = static_cast<std::int64_t>(c.value.accounts.size());
    // A file's people an apply would skip (its exclusions, the do-not-contact list, another
    // campaign's): with the database, the forecast leaves them out, as the apply will.
    std::optional<orch::engine::store::audience_skips> skips;
    bool search_kept = false;  // a search audience an apply now would keep (applied already)
    std::int64_t own_leads = 0;  // a search sent again: the campaign's leads it may find again
    if (c.value.who.kind == cs::audience::source::file) {
        in.leads = static_cast<std::int64_t>(c.value.who.leads.size());
        if (db) {
            try {
                skips = db->estimate_skips(c.value.name, c.value.who.leads, c.value.exclude);
                in.leads -= skips->total();
            } catch (const std::exception& e) {
                std::cerr << "warning: the people an apply would skip were not counted: "
                          << orch::text::escaped(e.what()) << "\n";
            }
        }
    } else {
        in.leads = c.value.who.total_results;
        // The search as `campaign apply` sends it (its filters and page mode included), at the
        // price the apply books when the answer carries no metadata.credits_consumed.
        in.audience_credits = orch::outreach::estimate(orch::engine::audience_search(c.value)).credits;
        if (db) {
            // Applied already with this audience: an apply now keeps the campaign's leads, sends no
            // search and enrolls nobody (it forecast the whole audience for such an apply).
            try {
                const auto plan = orch::engine::plan_apply(*db, c.value);
                if (plan.exists && (orch::engine::skips_search(c.value, plan, false) ||
                                    orch::engine::reuses_audience(c.value, plan, false))) {
                    search_kept = true;
                    in.leads = 0;
                    in.audience_credits = 0;
                } else if (plan.exists) {
                    // Searched again: the people it finds who are the campaign's leads already are
                    // not enrolled again (an apply from 40 to 50 enrolled 10; this said 50).
                    pqxx::nontransaction tx(db->connection());
                    own_leads = tx.exec_params1(std::string(orch::schema::query("campaigns/lead_count")),
                                                c.value.name)[0]
                                    .as<std::int64_t>();
                }
            } catch (const std::exception& e) {
                std::cerr << "warning: whether an apply would send the audience search is not known: "
                          << orch::text::escaped(e.what()) << "\n";
            }
        }
    }
    for (auto k : {cs::call_kind::check_invitation, cs::call_kind::invite, cs::call_kind::withdraw,
                   cs::call_kind::send, cs::call_kind::visit}) {
        cs::api_call call;
        call.kind = k;
        // execute()'s upper bound of an invite includes the check it makes when refused, and a
        // withdraw's the check that finds the invitation; the forecast counts the withdraw's
        // check as its own check_invitation call, and the invite's as reservation headroom
        // (below), so one request per call here.
        in.credits[k] = k == cs::call_kind::invite || k == cs::call_kind::withdraw
                            ? orch::engine::credits_upper_bound(call) - 1
                            : orch::engine::credits_upper_bound(call);
    }
    {
        // A follow-up's conversation read, as execute() bounds it (the send with it, less without).
        cs::api_call send;
        send.kind = cs::call_kind::send;
        cs::api_call follow_up = send;
        follow_up.confirm_no_reply = true;
        in.credits[cs::call_kind::get_conversation] =
            orch::engine::credits_upper_bound(follow_up) - orch::engine::credits_upper_bound(send);
        // An invite reserves the check it makes when refused, which the paths do not count.
        cs::api_call invite;
        invite.kind = cs::call_kind::invite;
        in.reserved_beyond[cs::call_kind::invite] =
            orch::engine::credits_upper_bound(invite) - in.credits[cs::call_kind::invite];
    }
    // A quota as the limiter applies it to one sender: the account's own (its override, else the
    // settings'), tightened by the campaign's limits.
    auto tighter = [](std::int64_t a, std::optional<std::int64_t> b) {
        if (!b) {
            return a;
        }
        return a < 0 ? *b : std::min(a, *b);
    };
    auto in_campaign = [&](const std::string& action, std::int64_t& day, std::int64_t& week) {
        if (auto it = c.value.limits.find(action); it != c.value.limits.end()) {
            day = tighter(day, it->second.per_day);
            week = tighter(week, it->second.per_week);
        }
    };
    const std::array quota_actions = {std::tuple{"invite", orch::limits::action::invite, s.invite_per_day, s.invite_per_week},
                                      std::tuple{"send", orch::limits::action::send, s.send_per_day, s.send_per_week},
                                      std::tuple{"visit", orch::limits::action::visit, s.visit_per_day, s.visit_per_week},
                                      std::tuple{"withdraw", orch::limits::action::withdraw, s.withdraw_per_day,
                                                 s.withdraw_per_week}};
    for (auto [action, a, day, week] : quota_actions) {
        in_campaign(action, day, week);
        in.per_day[action] = day;
        in.per_week[action] = week;
    }
    // Checks have no account quota, but a campaign may limit them per sender (the limits gate
    // holds them to it).
    std::int64_t check_day = -1;
    std::int64_t check_week = -1;
    in_campaign("check_invitation", check_day, check_week);
    in.per_day["check_invitation"] = check_day;
    in.per_week["check_invitation"] = check_week;
    // With the senders looked up, each one's overrides (`accounts limits`) count too.
    std::int64_t overridden = 0;
    if (db) try {
        std::map<std::string, orch::engine::quota_overrides> overrides;
        for (const auto& a : db->accounts()) {
            overrides[a.account_id] = a.quotas;
        }
        for (const auto& id : orch::engine::sender_ids(*db, c.value)) {
            const auto account = overrides.find(id);
            cs::estimate_input::sender_quotas own;
            bool any = false;
            for (auto [action, a, day, week] : quota_actions) {
                if (account != overrides.end()) {
                    const auto& o = account->second[static_cast<std::size_t>(a)];
                    any = any || !o.empty();
                    if (o.per_day) {
                        own.account_per_day[action] = *o.per_day;
                    }
                    day = o.per_day.value_or(day);
                    week = o.per_week.value_or(week);
                }
                in_campaign(action, day, week);
                own.per_day[action] = day;
                own.per_week[action] = week;
            }
            own.per_day["check_invitation"] = check_day;
            own.per_week["check_invitation"] = check_week;
            overridden += any ? 1 : 0;
            in.per_sender.push_back(std::move(own));
        }
    } catch (const std::exception& e) {
        // The database answered the account check a moment ago; if it fails now, the forecast
        // goes on with the settings' quotas, as without a database.
        const std::string what = e.what();
        std::cerr << "warning: the senders' own quotas are not looked up: "
                  << orch::text::escaped(what.substr(0, what.find('\n'))) << "\n";
        in.per_sender.clear();
        overridden = 0;
    }
    // New accounts' ramp-up, as the limits gate applies it (none with ramp_up: false).
    {
        const auto limits = orch::engine::limiter_settings(s);
        for (const auto& [name, a] : {std::pair{"invite", orch::limits::action::invite},
                                      std::pair{"send", orch::limits::action::send},
                                      std::pair{"visit", orch::limits::action::visit},
                                      std::pair{"withdraw", orch::limits::action::withdraw}}) {
            const auto& action = limits.actions[static_cast<std::size_t>(a)];
            in.ramp[name] = {action.limit.per_day, action.ramp.start_per_day, action.ramp.step_per_day};
        }
    }
    auto r = cs::estimate(c.value, in);
    // Beyond a century (a quota of nearly nothing) there is no date to give: the clock's range
    // ends some 290 years out.
    const bool finishes = r.calendar_days < 36'500.0;
    // The finish date walks the schedule's working days in its time zone, from the campaign's
    // start (now, or its start_at when later; a day whose hours are over does not count).
    // The duration said is the days from the start to that date: the average over a week
    // (r.calendar_days) can be days off when the working days cluster (a weekend schedule).
    std::string finish_day;
    std::string finish_day_new;   // for senders new to the orchestrator
    int days_to_finish = 0;
    int days_to_finish_new = 0;
    if (finishes) {
        auto from = std::chrono::system_clock::now();
        if (c.value.start_at && *c.value.start_at > from) {
            from = *c.value.start_at;
        }
        finish_day = cs::finish_date(c.value.schedule, from, r.working_days, r.longest_wait, &days_to_finish);
        if (r.calendar_days_new_accounts < 36'500.0) {
            finish_day_new = cs::finish_date(c.value.schedule, from, r.working_days_new_accounts, r.longest_wait,
                                             &days_to_finish_new);
        }
    }
    // With ramp-up slowing new senders, which of these senders are still ramping up (Redis keeps
    // their first day): the headline then gives the figures that apply to them. Unknown without
    // Redis or a database: both figures are given, each said for whom.
    std::optional<orch::engine::apply_facts::quota_today> ramp;
    std::string ramp_unread;  // why the senders' ramp-up was not read, when it was to be
    const bool ramp_matters = finishes && !finish_day_new.empty() && r.working_days_new_accounts > r.working_days + 0.05;
    if (db && ramp_matters && orch::engine::uses_quota_today(s, c.value)) {
        const auto reader = read_quotas_with(s, ramp_unread);
        if (reader.limiter) {
            ramp = orch::engine::senders_quota_today(*reader.limiter, s, c.value, db->accounts(),
                                                     orch::engine::sender_ids(*db, c.value),
                                                     std::chrono::system_clock::now());
            if (!ramp) {
                ramp_unread = "Redis: no answer from " + orch::engine::redacted(s.redis_url);
            }
        }
        if (ramp && ramp->read == 0) {
            ramp.reset();
        }
    }
    const bool all_ramping = ramp && ramp->ramping == ramp->read;
    // An audience search the budget or a cap would hold short of the people asked for, as the
    // apply would (the campaign's spend so far counts when the database is looked up). The
    // forecast above is of the whole audience.
    std::string search_held;
    if (c.value.who.kind == cs::audience::source::search) {
        try {
            search_held = orch::engine::predicted_search_hold(
                c.value, db ? orch::engine::plan_apply(*db, c.value) : orch::engine::apply_plan{});
        } catch (const std::exception&) {
            // A cancelled campaign (no apply would search) or a database that stopped answering.
        }
    }
    // serve's catch-up sweep (every sweep_seconds) reads what the campaign's leads wait for, billed
    // to it and not in the per-lead figures: a pending invitation's check (1 credit each, 10 or
    // fewer; list_sent beyond) and the inbox (1 credit per 10 conversations) while a messaged lead
    // has not replied. The floor is one credit of each per sender and sweep while any lead waits;
    // over the campaign's calendar days it adds up (a trial: a budget of 100 gone in a day of waits).
    // A sender whose sweeps find nothing the deliveries missed is swept less often, down to every
    // sweep_max_seconds: the quiet floor.
    bool invites = false, sends = false;
    for (const auto& st : c.value.steps) {
        invites = invites || st.kind == cs::step_kind::invite;
        sends = sends || st.kind == cs::step_kind::send;
    }
    const std::int64_t sweep_floor = (invites ? 1 : 0) + (sends ? 1 : 0);
    const std::int64_t sweeps_per_day = 86'400 / std::max<std::int64_t>(s.sweep_seconds, 1);
    const std::int64_t sweep_per_day = sweep_floor * sweeps_per_day * static_cast<std::int64_t>(c.value.accounts.size());
    // The most a sweep reads for a sender whose leads' invitations are all pending at once (L of
    // them): a check each up to 10, list_sent's pages of 10 beyond, and an inbox page (a trial
    // measured 11 a sweep for 9 to 18 pending where the floor said 2).
    const auto senders = std::max<std::int64_t>(1, static_cast<std::int64_t>(c.value.accounts.size()));
    const std::int64_t per_sender = (in.leads + senders - 1) / senders;
    // Never below the floor: with no new leads (an apply that keeps the audience) the campaign's
    // own still wait, and a sweep still reads (it said "up to 1" beside "at least 2").
    const std::int64_t sweep_most = std::max(
        sweep_floor,
        (invites ? std::max(std::min<std::int64_t>(per_sender, 10), (per_sender + 9) / 10) : 0) + (sends ? 1 : 0));
    const std::int64_t sweep_most_per_day =
        sweep_most * sweeps_per_day * static_cast<std::int64_t>(c.value.accounts.size());
    const std::int64_t quiet_seconds = std::max(s.sweep_seconds, s.sweep_max_seconds);
    const std::int64_t quiet_sweeps_per_day = 86'400 / std::max<std::int64_t>(quiet_seconds, 1);
    const std::int64_t quiet_per_day =
        sweep_floor * quiet_sweeps_per_day * static_cast<std::int64_t>(c.value.accounts.size());
    // A quota that lets nothing through takes "never" (the estimate's 1e9 days): null in JSON,
    // "never" in the table and the CSV, not a number of days no one can use.
    const auto never = [](double d) { return d >= 1e8; };
    const auto days_json = [&](double d) { return never(d) ? orch::engine::json(nullptr) : orch::engine::json(d); };
    const auto days_text = [&](double d) {
        char out[32];
        std::snprintf(out, sizeof out, "%.1f", d);
        return std::string(never(d) ? "never" : out);
    };
    if (format == "json") {
        orch::engine::json j = {{"campaign", c.value.name},
                                {"leads", in.leads},
                                {"skipped", skips ? orch::engine::json{{"excluded", skips->excluded},
                                                                       {"do_not_contact", skips->do_not_contact},
                                                                       {"enrolled_elsewhere", skips->elsewhere},
                                                                       {"in_this_campaign", skips->already}}
                                                  : orch::engine::json(nullptr)},
                                {"audience_credits", in.audience_credits},
                                {"audience_search",
                                 c.value.who.kind != cs::audience::source::search ? orch::engine::json(nullptr)
                                 : search_kept ? orch::engine::json("kept")
                                 : db          ? orch::engine::json("sent")
                                               : orch::engine::json("not_looked_up")},
                                {"search_overlap",
                                 own_leads > 0 ? orch::engine::json{{"in_this_campaign", own_leads},
                                                                    {"leads_at_least",
                                                                     std::max<std::int64_t>(0, in.leads - own_leads)}}
                                               : orch::engine::json(nullptr)},
                                {"per_lead_credits", {{"min", r.per_lead_min}, {"max", r.per_lead_max}}},
                                {"credits", {{"min", r.credits_min}, {"max", r.credits_max}}},
                                {"budget", r.budget},
                                {"headroom_credits", r.headroom},
                                {"account_cap_short", r.account_cap_short},
                                {"busiest_sender_credits", r.busiest_sender_credits},
                                {"senders_with_own_quotas", overridden},
                                {"within_budget", r.within_budget()},
                                {"account_cap_credits", r.account_cap_credits < 0 ? orch::engine::json(nullptr)
                                                                                  : orch::engine::json(r.account_cap_credits)},
                                {"bottleneck", r.bottleneck},
                                {"working_days", days_json(r.working_days)},
                                {"longest_wait_days", static_cast<double>(r.longest_wait.count()) / 86'400.0},
                                {"calendar_days", days_json(r.calendar_days)},
                                {"finish_around", finishes ? orch::engine::json(finish_day) : orch::engine::json(nullptr)},
                                {"days_to_finish", finishes ? orch::engine::json(days_to_finish) : orch::engine::json(nullptr)},
                                {"new_accounts", {{"bottleneck", r.bottleneck_new_accounts},
                                                  {"working_days", days_json(r.working_days_new_accounts)},
                                                  {"calendar_days", days_json(r.calendar_days_new_accounts)},
                                                  {"finish_around", finish_day_new.empty() ? orch::engine::json(nullptr)
                                                                                           : orch::engine::json(finish_day_new)},
                                                  {"days_to_finish", finish_day_new.empty()
                                                                         ? orch::engine::json(nullptr)
                                                                         : orch::engine::json(days_to_finish_new)}}}};
        // The senders looked up in Redis, and of them those still ramping up (null: not read).
        j["senders_ramping_up"] = ramp ? orch::engine::json{{"read", ramp->read}, {"ramping", ramp->ramping}}
                                       : orch::engine::json(nullptr);
        j["search_held"] = search_held.empty() ? orch::engine::json(nullptr) : orch::engine::json(search_held);
        j["sweep"] = {{"sweep_seconds", s.sweep_seconds},
                      {"sweep_max_seconds", quiet_seconds},
                      {"credits_per_sender_and_sweep_min", sweep_floor},
                      {"credits_per_sender_and_sweep_max", sweep_most},
                      {"credits_per_day_min", sweep_per_day},
                      {"credits_per_day_max", sweep_most_per_day},
                      {"credits_per_day_min_quiet", quiet_per_day}};
        j["actions"] = orch::engine::json::array();
        for (const auto& a : r.actions) {
            j["actions"].push_back({{"action", a.action},
                                    {"calls_max", a.calls_max},
                                    {"per_working_day", a.per_working_day},
                                    {"unlimited_senders", a.unlimited_senders},
                                    {"working_days", days_json(a.working_days)},
                                    {"working_days_new_accounts", days_json(a.working_days_new_accounts)}});
        }
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    if (format == "csv") {
        // The per-action table (the json form has the totals too).
        text_table t{"",
                     {"action", "calls_max", "per_working_day", "working_days", "working_days_new_accounts",
                      "unlimited_senders"},
                     {}};
        for (const auto& a : r.actions) {
            t.rows.push_back({a.action, std::to_string(a.calls_max),
                              a.per_working_day < 0 ? std::string() : std::to_string(a.per_working_day),
                              days_text(a.working_days), days_text(a.working_days_new_accounts),
                              std::to_string(a.unlimited_senders)});
        }
        print_csv(t);
        return 0;
    }
    std::printf("Estimate for '%s': %s, %s\n", orch::text::escaped(c.value.name).c_str(),
                orch::text::counted(in.leads, "lead", "leads").c_str(),
                orch::text::counted(static_cast<std::int64_t>(c.value.accounts.size()), "sender", "senders").c_str());
    if (!db) {
        std::printf("  (senders not looked up: %s)\n",
                    s.database_url.empty() ? "no database configured" : "the database did not answer");
    }
    if (search_kept) {
        std::printf("  (applied already with this audience: an apply now keeps the campaign's leads, sends no "
                    "search and enrolls nobody; `campaign apply --search-again` would search again, billed)\n");
    }
    if (own_leads > 0) {
        std::printf("  (the campaign has %s already: those the search finds again are not enrolled again, so an "
                    "apply now enrolls between %lld and %lld; the figures below are of all %lld)\n",
                    orch::text::counted(own_leads, "lead", "leads").c_str(),
                    static_cast<long long>(std::max<std::int64_t>(0, in.leads - own_leads)),
                    static_cast<long long>(in.leads), static_cast<long long>(in.leads));
    }
    if (skips && skips->total() > 0) {
        std::printf("  (%s in the file; an apply now skips %lld: %lld excluded by the campaign, %lld on the "
                    "do-not-contact list, %lld enrolled by another campaign%s)\n",
                    orch::text::counted(static_cast<std::int64_t>(c.value.who.leads.size()), "person", "people").c_str(),
                    static_cast<long long>(skips->total()), static_cast<long long>(skips->excluded),
                    static_cast<long long>(skips->do_not_contact), static_cast<long long>(skips->elsewhere),
                    skips->already > 0 ? (", " + std::to_string(skips->already) +
                                          " this campaign's leads already (the estimate is of the new ones)")
                                             .c_str()
                                       : "");
    }
    std::string over;
    if (r.credits_max > r.budget) {
        over = " (the costliest case exceeds it: the campaign would pause)";
    } else if (r.credits_max + r.headroom > r.budget) {
        over = " (it covers the costliest case, " + std::to_string(r.credits_max) +
               ", not the last lead's reservation: its invite holds " +
               orch::text::counted(r.headroom, "credit", "credits") +
               " more, for the check it makes when refused, and the ledger would pause the campaign; " +
               std::to_string(r.credits_max + r.headroom) + " covers it)";
    }
    std::printf("  credits      %lld to %lld (audience %lld; per lead %lld to %lld); budget %lld%s\n",
                static_cast<long long>(r.credits_min), static_cast<long long>(r.credits_max),
                static_cast<long long>(in.audience_credits), static_cast<long long>(r.per_lead_min),
                static_cast<long long>(r.per_lead_max), static_cast<long long>(r.budget), over.c_str());
    if (!search_held.empty()) {
        std::printf("  search       %s: the figures here are for all %lld\n", orch::text::escaped(search_held).c_str(),
                    static_cast<long long>(in.leads));
    }
    if (sweep_floor > 0) {
        std::printf("  sweeps       serve's catch-up sweep, every %lld s (sweep_seconds: %lld a day), reads what the "
                    "leads wait for, charged to the campaign and not in the figures above: per sender and sweep while "
                    "any lead waits, %s%s%s; at least %lld credits a day for %s%s, more with a large inbox%s\n",
                    static_cast<long long>(s.sweep_seconds), static_cast<long long>(sweeps_per_day),
                    invites ? "1 credit per pending invitation (10 or fewer; 1 per 10 beyond)" : "",
                    invites && sends ? " and " : "",
                    sends ? "1 per 10 conversations of the inbox while a messaged lead has not replied" : "",
                    static_cast<long long>(sweep_per_day),
                    orch::text::counted(static_cast<std::int64_t>(c.value.accounts.size()), "sender", "senders").c_str(),
                    // Pending invitations are what raise a sweep's reads: a campaign without an
                    // invite step has none to say.
                    invites && sweep_most > sweep_floor
                        ? (", up to about " + std::to_string(sweep_most_per_day) +
                           " while each sender's invitations are all pending (" + std::to_string(sweep_most) +
                           " per sender and sweep)")
                              .c_str()
                        : "",
                    quiet_seconds > s.sweep_seconds
                        ? ("; " + std::to_string(quiet_per_day) + " a day once a sender's sweeps, finding nothing the "
                           "deliveries missed, back off to every " + std::to_string(quiet_seconds) +
                           " s (sweep_max_seconds)").c_str()
                        : "");
    }
    if (r.account_cap_short) {
        std::printf("  account cap  each sender may spend %lld credits (budget_per_account_credits); the busiest may "
                    "need %lld (its share of the leads, its last lead's reservation and the audience search): in "
                    "the costliest case some leads would wait\n",
                    static_cast<long long>(*c.value.budget_per_account_credits),
                    static_cast<long long>(r.busiest_sender_credits));
    }
    // Days to a date, or that the quota lets nothing through.
    const auto lasting = [](bool ends, int days) {
        if (!ends) {
            return std::string("not finishing within a century (a quota lets nothing, or nearly nothing, through)");
        }
        return days == 0 ? std::string("the day it starts") : "about " + orch::text::counted(days, "calendar day", "calendar days");
    };
    std::printf("  %-18s %10s %14s %12s %12s\n", "action", "calls (max)", "per work day", "work days",
                "new senders");
    for (const auto& a : r.actions) {
        std::string per = a.per_working_day < 0 ? "unlimited" : std::to_string(a.per_working_day);
        if (a.per_working_day >= 0 && a.unlimited_senders > 0) {
            per += " + unlimited";  // some senders have no quota for it: their share takes no days
        }
        std::printf("  %-18s %10lld %14s %12s %12s\n", a.action.c_str(), static_cast<long long>(a.calls_max),
                    per.c_str(), days_text(a.working_days).c_str(), days_text(a.working_days_new_accounts).c_str());
    }
    {
        const auto days = std::count(c.value.schedule.days.begin(), c.value.schedule.days.end(), true);
        const auto n = c.value.accounts.size();
        std::printf("  (per work day: a steady week's average, the smaller of %s day quota and its week quota spread "
                    "over the schedule's %s%s; work days: day by day, each up to the day quota and to what the "
                    "rolling week quota leaves, the idle days of a full week included)\n",
                    n == 1 ? "the sender's" : "each sender's",
                    orch::text::counted(days, "working day", "working days").c_str(),
                    n == 1 ? "" : (", summed over the " + std::to_string(n) + " senders").c_str());
        if (overridden > 0) {
            std::printf("  (%s from `accounts limits`; the leads split evenly over the senders, so the slowest one "
                        "sets the work days)\n",
                        orch::text::counted(overridden, "sender has its own quotas", "senders have their own quotas")
                            .c_str());
        }
    }
    const double waits = static_cast<double>(r.longest_wait.count()) / 86'400.0;
    const std::string bottleneck = r.bottleneck.empty() ? "no quota limits; " : "bottleneck " + r.bottleneck + ": ";
    // New senders' slowest action may be another: the ramp-up starts some quotas lower than others.
    const std::string bottleneck_new = r.bottleneck_new_accounts.empty()
                                           ? bottleneck
                                           : "bottleneck " + r.bottleneck_new_accounts + ": ";
    const auto senders_text = [&](std::size_t n) {
        return n == 1 ? std::string("the sender is") : "the " + std::to_string(n) + " senders are";
    };
    if (all_ramping) {
        // Every sender is new or ramping up: the ramped figures are the forecast.
        std::printf("  duration     %s (%s%s working days as %s new to the orchestrator or ramping up, plus %.1f "
                    "days of waits); finishing around %s\n",
                    lasting(true, days_to_finish_new).c_str(), bottleneck_new.c_str(),
                    days_text(r.working_days_new_accounts).c_str(), senders_text(ramp->read).c_str(), waits,
                    finish_day_new.c_str());
        std::printf("  ramped up    %s once past their ramp-up (ramp_up), finishing around %s\n",
                    lasting(true, days_to_finish).c_str(), finish_day.c_str());
        return 0;
    }
    std::printf("  duration     %s%s (%s%s working days, plus %.1f days of waits)%s\n",
                lasting(finishes, days_to_finish).c_str(),
                ramp_matters && !ramp ? " for senders past their ramp-up" : "", bottleneck.c_str(),
                days_text(r.working_days).c_str(), waits, finishes ? ("; finishing around " + finish_day).c_str() : "");
    if (!ramp_unread.empty()) {
        std::printf("  (which senders are still ramping up was not read: %s)\n", orch::text::escaped(ramp_unread).c_str());
    }
    if (ramp && ramp->ramping == 0) {
        std::printf("  (ramp_up: %s past the ramp-up)\n",
                    ramp->read == 1 ? "the sender is" : ("each of the " + std::to_string(ramp->read) + " senders is").c_str());
    } else if (r.working_days_new_accounts > r.working_days + 0.05) {
        std::printf("  new senders  %s for accounts new to the orchestrator (%s%s working days)%s: their day quotas "
                    "start lower and ramp up (ramp_up)%s\n",
                    lasting(!finish_day_new.empty(), days_to_finish_new).c_str(), bottleneck_new.c_str(),
                    days_text(r.working_days_new_accounts).c_str(),
                    finish_day_new.empty() ? "" : (", finishing around " + finish_day_new).c_str(),
                    ramp ? ("; " + std::to_string(ramp->ramping) + " of the " + std::to_string(ramp->read) +
                            (ramp->ramping == 1 ? " senders is" : " senders are") + " new or ramping up")
                               .c_str()
                         : "");
    }
    return 0;
}

// A live budget the apply kept (a note) or replaced with the file's (a warning: an operator's
// `budget set` was undone).
void print_live_budget(const orch::engine::apply_outcome& r, const orch::campaigns::campaign& c) {
    if (const auto text = orch::engine::live_budget_text(r, c); !text.empty()) {
        (r.live_budget_kept ? std::cout : std::cerr) << (r.live_budget_kept ? "note: " : "warning: ") << text << "\n";
    }
}

int cmd_campaign_apply(const settings& s, const std::string& file, bool search_again, bool move_running) {
    orch::engine::store db(s.database_url);
    db.require_current();
    auto c = load_campaign_file(file, &db);
    auto senders = orch::engine::sender_ids(db, c.value);
    // Everything is checked before the audience search is sent (a cancelled campaign is refused
    // here), so an apply that fails bills nothing; an unchanged audience is not searched again.
    const auto plan = orch::engine::plan_apply(db, c.value);
    const bool unchanged = orch::engine::skips_search(c.value, plan, search_again);
    if (unchanged && !move_running) {
        std::cout << "campaign '" << orch::text::escaped(c.value.name) << "' unchanged, version " << plan.version
                  << ": the audience search was not sent again (nothing billed; --search-again sends it)\n";
        return 0;
    }
    if (unchanged || orch::engine::reuses_audience(c.value, plan, search_again)) {
        auto r = orch::engine::apply_definition(db, c.value, c.source, senders, {}, std::nullopt,
                                                std::chrono::system_clock::now(), {}, move_running);
        std::cout << "campaign '" << orch::text::escaped(c.value.name) << "' "
                  << (r.changed ? "updated" : "unchanged") << ", version " << r.version
                  << (r.changed ? ": the audience is unchanged, so its search was not sent again"
                                : ": the audience search was not sent again")
                  << " (nothing billed; --search-again sends it)"
                  << (move_running ? "" : "; running leads keep their version's steps (--move-running moves them); start_at and end_at hold for every lead")
                  << "\n";
        if (const auto moved = orch::engine::moved_running_text(r); !moved.empty()) {
            std::cout << moved << "\n";
        }
        if (!r.paused.empty()) {
            std::cout << "campaign '" << orch::text::escaped(c.value.name) << "' is paused: "
                      << orch::text::escaped(r.paused) << "\n";
        }
        orch::engine::apply_facts facts{r.leads, r.enrolled, r.skipped, r.state, nullptr, false, &r.own_quotas, r.senders};
        std::cout.flush();  // the result lines first, also where both streams go to one file
        for (const auto& w : orch::engine::apply_warnings(c.value, facts, s, std::chrono::system_clock::now())) {
            std::cerr << "warning: " << orch::text::escaped(w) << "\n";
        }
        for (const auto& w : orch::engine::outcome_warnings(r, c.value)) {
            std::cerr << "warning: " << w << "\n";
        }
        print_live_budget(r, c.value);
        return 0;
    }
    if (const auto refused = orch::engine::search_refusal(c.value, plan); !refused.empty()) {
        throw orch::engine::campaign_conflict(refused);
    }
    // A progress bar on the terminal (standard error, only when it is one) for large audiences.
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    if (tty && c.value.who.kind == orch::campaigns::audience::source::search) {
        std::cerr << "searching the audience (" << c.value.who.total_results << " people)..." << std::flush;
    }
    auto [leads, charge, found, in_flight] =
        audience_leads(s, db, c.value, senders.front(), orch::engine::search_room(c.value, plan));
    if (tty && c.value.who.kind == orch::campaigns::audience::source::search) {
        std::cerr << " " << leads.size() << " found\n";
    }
    orch::engine::store::apply_progress bar;
    if (tty && leads.size() > 5'000) {
        bar = [](std::int64_t done, std::int64_t total) {
            constexpr int width = 40;
            const int filled = static_cast<int>(width * done / std::max<std::int64_t>(total, 1));
            std::cerr << "\renrolling [" << std::string(static_cast<std::size_t>(filled), '#')
                      << std::string(static_cast<std::size_t>(width - filled), ' ') << "] " << done << "/" << total
                      << (done == total ? "\n" : "") << std::flush;
        };
    }
    auto r = orch::engine::apply_definition(db, c.value, c.source, senders, leads, charge,
                                            std::chrono::system_clock::now(), bar, move_running);
    std::cout << "campaign '" << orch::text::escaped(c.value.name) << "' " << (r.created ? "created" : (r.changed ? "updated" : "unchanged"))
              << ", version " << r.version << ": " << orch::text::counted(r.leads, "lead", "leads") << ", " << r.enrolled << " enrolled, " << r.skipped
              << " skipped (enrolled by another campaign, on the do-not-contact list or excluded)";
    // The others were enrolled, or skipped, by an earlier apply of this campaign: say so, or the
    // counts of a re-apply do not add up.
    if (const auto earlier = r.leads - r.enrolled - r.skipped; earlier > 0) {
        std::cout << ", " << earlier << " enrolled or skipped by an earlier apply";
    }
    std::cout << "\n";
    if (found) {
        std::cout << "audience search: "
                  << orch::text::counted(static_cast<std::int64_t>(found->people.size()), "person", "people")
                  << " found of " << found->asked << " asked"
                  << (found->available ? " (" + std::to_string(*found->available) + " available)" : std::string())
                  << " in " << found->calls << (found->calls == 1 ? " call" : " calls") << ", "
                  << orch::text::counted(r.charged, "credit", "credits") << ", booked in the campaign's budget\n";
        if (!found->stopped.empty()) {
            std::cout << (found->held ? "audience search held short: " : "audience search stopped early: ")
                      << orch::text::escaped(found->stopped) << "\n";
        }
    }
    if (const auto moved = orch::engine::moved_running_text(r); !moved.empty()) {
        std::cout << moved << "\n";
    }
    if (!r.paused.empty()) {
        std::cout << "campaign '" << orch::text::escaped(c.value.name) << "' is paused: " << orch::text::escaped(r.paused)
                  << "\n";
    }
    // ---- lifecycle: the campaign's state and what to know about it (engine/campaign_lifecycle) ----
    if (r.state == "completed") {
        std::cout << "campaign '" << c.value.name << "' is completed: none of its leads is in progress\n";
    }
    orch::engine::apply_facts facts{r.leads,   r.enrolled, r.skipped, r.state, found ? &found->people : nullptr,
                                    true,      &r.own_quotas, r.senders};
    facts.search_charged = r.charged;
    facts.caps = r.caps;
    if (r.enrolled > 0 && orch::engine::uses_quota_today(s, c.value)) {
        // What the senders have left today, so that the warning says when the first call may go
        // out; unknown (Redis not set or not answering) leaves the warning general.
        std::string no_quotas;
        const auto reader = read_quotas_with(s, no_quotas);
        if (reader.limiter) {
            facts.today = orch::engine::senders_quota_today(*reader.limiter, s, c.value, db.accounts(), senders,
                                                            std::chrono::system_clock::now());
        }
    }
    std::cout.flush();  // the result lines first, also where both streams go to one file
    for (const auto& w : orch::engine::apply_warnings(c.value, facts, s, std::chrono::system_clock::now())) {
        std::cerr << "warning: " << orch::text::escaped(w) << "\n";
    }
    for (const auto& w : orch::engine::outcome_warnings(r, c.value)) {
        std::cerr << "warning: " << w << "\n";
    }
    print_live_budget(r, c.value);
    return 0;
}

int cmd_campaign_list(const settings& s, const std::string& format) {
    auto db = open_store(s);
    text_table t{"", {"campaign", "state", "version", "enrollments", "live", "pause_reason"}, {}};
    json list = json::array();
    for (const auto& c : db->campaigns()) {
        t.rows.push_back({c.name, c.state, std::to_string(c.version), std::to_string(c.enrollments),
                          std::to_string(c.live), c.pause_reason});
        list.push_back({{"name", c.name}, {"state", c.state}, {"version", c.version}, {"enrollments", c.enrollments},
                        {"live", c.live}, {"pause_reason", c.pause_reason}});
    }
    print_sections(format, {t}, {"campaigns"}, "", json{{"campaigns", list}});
    return 0;
}

// One campaign: its state, version, budget and caps, its steps with the leads at each (by
// status), and the funnel. Sections: summary (the main one: one row of fields), steps, funnel.
int cmd_campaign_show(const settings& s, const std::string& name, const std::string& format,
                      const std::string& section) {
    namespace ledger = orch::engine::ledger;
    auto db = open_store(s);
    pqxx::read_transaction tx(db->connection());
    auto row = tx.exec_params(std::string(orch::schema::query("admin/campaign")), name);
    if (row.empty()) {
        throw usage_error(orch::cli::no_campaign_named(name));
    }
    const auto& c = row[0];
    const auto campaign_id = c[0].as<std::int64_t>();
    const int version = c[4].as<int>();
    json summary = {{"name", c[1].as<std::string>()},    {"state", c[2].as<std::string>()},
                    {"pause_reason", c[3].as<std::string>()}, {"version", version},
                    {"created_at", c[5].as<std::string>()}, {"updated_at", c[6].as<std::string>()},
                    {"enrollments", c[7].as<std::int64_t>()}, {"live", c[8].as<std::int64_t>()}};
    json budget = nullptr;
    for (const auto& b : ledger::campaign_budgets(tx, name)) {
        budget = {{"credits", b.limits ? json(b.limits->total) : json(nullptr)},
                  {"per_day", b.limits && b.limits->per_day ? json(*b.limits->per_day) : json(nullptr)},
                  {"per_account", b.limits && b.limits->per_account ? json(*b.limits->per_account) : json(nullptr)},
                  {"available", b.available},
                  {"reserved", b.reserved},
                  {"spent", b.spent},
                  {"today", nullptr}};  // the overview's, below
    }
    // The steps of the current version, in the file's order, with the leads at each by status.
    json definition = json::object();
    auto v = tx.exec_params(std::string(orch::schema::query("admin/version")), campaign_id, version);
    if (!v.empty()) {
        definition = json::parse(v[0][0].as<std::string>(), nullptr, false);
    }
    static const std::vector<std::string> statuses = {"ready", "calling", "waiting", "done", "replied", "failed",
                                                      "cancelled"};
    // By step id and the step's kind in the lead's version: leads kept on an older version where
    // the step had another kind are not shown under the current one's.
    using step_key = std::pair<std::string, std::string>;
    std::map<step_key, std::map<std::string, std::int64_t>> at;
    std::map<step_key, std::int64_t> replied_after;  // done leads with a reply after their last step
    std::int64_t replied_after_all = 0;
    for (const auto& r : tx.exec_params(std::string(orch::schema::query("reports/step_counts")), name)) {
        const step_key key{r[0].as<std::string>(), r[1].as<std::string>()};
        at[key][r[2].as<std::string>()] = r[3].as<std::int64_t>();
        replied_after[key] += r[4].as<std::int64_t>();
        replied_after_all += r[4].as<std::int64_t>();
    }
    json steps = json::array();
    // The funnel counts a reply that came after the sequence ended (status done) as replied; the
    // table shows statuses, so its heading says how many such done leads there are.
    text_table steps_t{"steps of '" + name + "' (leads at each step, by status" +
                           (replied_after_all == 0
                                ? std::string(")")
                                : "; " + orch::text::counted(replied_after_all, "done lead", "done leads") +
                                      " replied after the last step, counted as replied in the funnel)"),
                       {"step", "kind"},
                       {}};
    for (const auto& st : statuses) {
        steps_t.columns.push_back(st);
    }
    std::set<step_key> defined;
    auto add_step = [&](const step_key& key, const std::string& label, bool older) {
        const auto& [id, kind] = key;
        json counts = json::object();
        std::vector<std::string> r = {label, kind};
        for (const auto& st : statuses) {
            const auto n = at[key][st];
            counts[st] = n;
            r.push_back(std::to_string(n));
        }
        steps.push_back({{"id", id},
                         {"kind", kind},
                         {"older_version", older},
                         {"leads", counts},
                         {"done_then_replied", replied_after[key]}});
        steps_t.rows.push_back(std::move(r));
    };
    if (definition.is_object() && definition.contains("steps") && definition["steps"].is_array()) {
        for (const auto& step : definition["steps"]) {
            const step_key key{step.value("id", ""), step.value("kind", "")};
            defined.insert(key);
            add_step(key, key.first, false);
        }
    }
    // Leads past the last step (the machine clears a finished lead's step: id "") and leads at a
    // step only an older version has, or had of another kind, after the current version's steps:
    // without these rows a finished lead was counted at no step.
    for (const auto& [key, by_status] : at) {
        if (defined.count(key) == 0) {
            add_step(key, key.first.empty() ? "(ended)" : key.first + " (older version)", !key.first.empty());
        }
    }
    // lifecycle: the campaign's dates (null when not set)
    if (auto o = orch::engine::campaign_overview(tx, name)) {
        summary["start_at"] = (*o)["start_at"];
        summary["end_at"] = (*o)["end_at"];
        // Today's use of the day cap (the whole UTC day, as the cap counts it), as `budget show`.
        if (const json& ob = (*o)["budget"]; budget.is_object() && ob.is_object()) {
            budget["today"] = ob.value("today", json(nullptr));
        }
    }
    tx.commit();
    auto f = db->funnel(name);
    json funnel = {{"found", f.found},       {"skipped", f.skipped}, {"checked", f.checked}, {"invited", f.invited},
                   {"accepted", f.accepted}, {"messaged", f.messaged}, {"replied", f.replied}, {"failed", f.failed},
                   {"live", f.live},         {"credits", f.credits}};
    summary["budget"] = budget;
    json doc = {{"summary", summary}, {"steps", steps}, {"funnel", funnel}};
    text_table summary_t{"campaign '" + name + "'", {"field", "value"}, {}};
    for (const auto& key : {"name", "state", "pause_reason", "version", "created_at", "updated_at", "enrollments", "live",
                            "start_at", "end_at"}) {
        summary_t.rows.push_back({key, cell(summary[key])});
    }
    for (const auto& key : {"credits", "per_day", "per_account", "available", "reserved", "spent"}) {
        summary_t.rows.push_back({std::string("budget.") + key, budget.is_null() ? "" : cell(budget[key])});
    }
    if (!budget.is_null() && budget["today"].is_object()) {
        const json& t = budget["today"];
        summary_t.rows.push_back(
            {"budget.today", orch::engine::day_cap_use_text(t) + " (" + t["day"].get<std::string>() + ", UTC)"});
    }
    summary_t.rows.push_back({"steps", std::to_string(defined.size())});
    text_table funnel_t{"funnel", {"stage", "count"}, {}};
    for (const auto& key : {"found", "checked", "invited", "accepted", "messaged", "replied", "failed", "skipped", "live",
                            "credits"}) {
        funnel_t.rows.push_back({key, cell(funnel[key])});
    }
    print_sections(format, {summary_t, steps_t, funnel_t}, {"summary", "steps", "funnel"}, section, doc);
    return 0;
}

// pause / resume / cancel with the admin API's rules and messages (change_campaign_state): a
// forbidden move (resuming or pausing a cancelled campaign) changes nothing and exits 2.
int cmd_campaign_state(const settings& s, const std::string& name, const std::string& verb) {
    orch::engine::store db(s.database_url);
    db.require_current();
    auto o = orch::engine::change_campaign_state(db, name, verb);
    if (!o.found) {
        throw usage_error(orch::cli::no_campaign_named(name));
    }
    if (o.conflict) {
        throw usage_error(orch::engine::state_conflict_message(verb, orch::text::escaped(name), o) +
                          "; nothing changed");
    }
    std::cout << "campaign '" << orch::text::escaped(name) << "' is " << o.to
              << (o.changed ? "" : " (it already was; nothing changed)") << "\n";
    if (!o.warning.empty()) {
        std::cout << "note: " << orch::text::escaped(o.warning) << "\n";
    }
    return 0;
}

// ---- campaign versions | diff (engine/campaign_lifecycle.hpp) ----
int cmd_campaign_versions(const settings& s, const std::string& name, const std::string& format) {
    orch::engine::store db(s.database_url);
    db.require_current();
    pqxx::read_transaction tx(db.connection());
    auto v = orch::engine::campaign_versions_list(tx, name);
    if (!v) {
        throw usage_error(orch::cli::no_campaign_named(name));
    }
    if (format == "json") {
        std::cout << v->dump(2) << "\n";
        return 0;
    }
    text_table t{"", {"version", "created_at", "enrollments", "current", "digest"}, {}};
    for (const auto& r : (*v)["versions"]) {
        // The whole digest in csv; its first 12 characters tell versions apart on a terminal.
        const auto digest = r["digest"].get<std::string>();
        t.rows.push_back({cell(r["version"]), cell(r["created_at"]), cell(r["enrollments"]),
                          r["current"].get<bool>() ? "yes" : (format == "csv" ? "no" : ""),
                          format == "csv" ? digest : digest.substr(0, 12)});
    }
    if (format == "csv") {
        print_csv(t);
    } else {
        print_aligned(t);
    }
    return 0;
}

int cmd_campaign_diff(const settings& s, const std::string& name, const std::vector<int>& versions) {
    if (versions.size() == 1) {
        throw usage_error("campaign diff: give two versions (V1 V2), or none for the previous and the current one");
    }
    orch::engine::store db(s.database_url);
    db.require_current();
    pqxx::read_transaction tx(db.connection());
    auto d = orch::engine::campaign_diff(tx, name, versions.empty() ? std::nullopt : std::optional<int>(versions[0]),
                                         versions.empty() ? std::nullopt : std::optional<int>(versions[1]));
    if (!d.found) {
        throw usage_error(orch::cli::no_campaign_named(name));
    }
    if (!d.error.empty()) {
        throw usage_error(d.error);
    }
    if (d.text.empty()) {
        std::cout << "versions " << d.from << " and " << d.to << " of '" << orch::text::escaped(name)
                  << "' have the same definition\n";
        return 0;
    }
    std::cout << d.text;
    return 0;
}

// Events that passed verification but could not be read (engine/intake.hpp), newest first.
int cmd_events_quarantine(const settings& s, std::int64_t limit, const std::string& format) {
    orch::engine::store db(s.database_url);
    json list = db.quarantined_events(limit);
    if (format == "json") {
        std::cout << json{{"quarantined", list}}.dump(2) << "\n";
        return 0;
    }
    if (format == "csv") {
        text_table t{"", {"quarantine_id", "received_at", "account_id", "channel", "source_id", "reason", "body_bytes",
                          "body_base64"}, {}};
        for (const auto& e : list) {
            t.rows.push_back({cell(e["quarantine_id"]), cell(e["received_at"]), cell(e["account_id"]), cell(e["channel"]),
                              cell(e["source_id"]), cell(e["reason"]), cell(e["body_bytes"]), cell(e["body_base64"])});
        }
        print_csv(t);
        return 0;
    }
    if (list.empty()) {
        std::cout << "no quarantined events\n";
        return 0;
    }
    for (const auto& e : list) {
        std::cout << e["received_at"].get<std::string>() << "  #" << e["quarantine_id"].get<std::int64_t>() << "  "
                  << orch::text::escaped(e["account_id"].get<std::string>()) << "  "
                  << e["channel"].get<std::string>() << "  " << orch::text::escaped(e["source_id"].get<std::string>())
                  << "\n  reason: " << orch::text::escaped(e["reason"].get<std::string>()) << "\n  body ("
                  << e["body_bytes"].get<std::int64_t>() << " bytes"
                  << (e["body_text"].is_string() ? "): " + orch::text::escaped(e["body_text"].get<std::string>())
                                                 : ", base64, not UTF-8): " + e["body_base64"].get<std::string>())
                  << "\n";
    }
    return 0;
}

int cmd_report_funnel(const settings& s, const std::string& name, const std::string& format) {
    auto db = open_store(s);
    if (!db->campaign_exists(name)) {
        throw usage_error(orch::cli::no_campaign_named(name));
    }
    auto f = db->funnel(name);
    std::vector<std::pair<std::string, std::int64_t>> rows = {
        {"found", f.found},       {"checked", f.checked}, {"invited", f.invited}, {"accepted", f.accepted},
        {"messaged", f.messaged}, {"replied", f.replied}, {"failed", f.failed},   {"skipped", f.skipped},
        {"live", f.live},         {"credits", f.credits}};
    json j = json::object();
    text_table t{"funnel of '" + name + "'", {"stage", "count"}, {}};
    for (const auto& [k, v] : rows) {
        j[k] = v;
        t.rows.push_back({k, std::to_string(v)});
    }
    print_sections(format, {t}, {"funnel"}, "", j);
    return 0;
}

// ---- reports over the views of migration 0004 (schema/queries/reports/*.sql) ----
struct report_section {
    std::string title;                 // table heading and JSON key
    std::string query;                 // reports/<name>, one parameter: the campaign name
    std::vector<std::string> columns;  // names of the result columns, in order
};

// Runs each section for the campaign and prints them as tables, CSV (a blank line between
// sections) or one JSON object of arrays. Numbers stay numbers in JSON.
int print_report(const settings& s, const std::string& name, const std::string& format,
                 const std::vector<report_section>& sections, const std::string& section) {
    auto db = open_store(s);
    if (!db->campaign_exists(name)) {
        throw usage_error(orch::cli::no_campaign_named(name));
    }
    pqxx::nontransaction tx(db->connection());
    json all = json::object();
    std::vector<text_table> tables;
    std::vector<std::string> names;
    for (const auto& sec : sections) {
        auto rows = tx.exec_params(std::string(orch::schema::query(sec.query)), name);
        json arr = json::array();
        text_table t{sec.title + " of '" + name + "'", sec.columns, {}};
        for (const auto& r : rows) {
            json o = json::object();
            std::vector<std::string> cells;
            for (std::size_t i = 0; i < sec.columns.size(); ++i) {
                const auto& f = r[static_cast<pqxx::row::size_type>(i)];
                std::string v = f.is_null() ? "" : f.c_str();
                auto parsed = json::parse(v, nullptr, false);
                o[sec.columns[i]] = f.is_null() ? json(nullptr) : (!v.empty() && parsed.is_number()) ? parsed : json(v);
                // Rates are fractions in JSON and percentages for people (table) and spreadsheets (csv).
                const bool rate = sec.columns[i].size() > 5 &&
                                  sec.columns[i].compare(sec.columns[i].size() - 5, 5, "_rate") == 0;
                cells.push_back(rate ? percent(o[sec.columns[i]]) : cell(o[sec.columns[i]]));
            }
            arr.push_back(std::move(o));
            t.rows.push_back(std::move(cells));
        }
        all[sec.title] = std::move(arr);
        tables.push_back(std::move(t));
        names.push_back(sec.title);
    }
    print_sections(format, tables, names, section, all);
    return 0;
}

int cmd_report_accounts(const settings& s, const std::string& name, const std::string& format,
                        const std::string& section) {
    return print_report(s, name, format,
                        {{"accounts", "reports/rates_by_account",
                          {"account", "enrollments", "invited", "accepted", "messaged", "replied", "acceptance_rate",
                           "reply_rate"}},
                         {"variants", "reports/rates_by_variant", {"variant", "messaged", "replied", "reply_rate"}}},
                        section);
}

int cmd_report_timeline(const settings& s, const std::string& name, const std::string& format,
                        const std::string& section) {
    return print_report(
        s, name, format,
        {{"days", "reports/daily_activity", {"day", "invited", "accepted", "messaged", "replied"}},
         {"time_to_accept", "reports/time_to_accept",
          {"accepted", "under_1h", "under_1d", "under_3d", "under_7d", "over_7d", "p50_seconds", "p90_seconds"}},
         {"rate_limit_hits", "reports/rate_limit_hits", {"account", "day", "hits"}}},
        section);
}

// ---- budget show ----
// Every campaign's budget and balances, or one campaign's with its spend per action, sender
// account and day. Also checks the ledger's invariants (a pair assertion over the writers').
json budget_json(const orch::engine::ledger::campaign_budget_row& c) {
    json j = {{"campaign", c.campaign},       {"state", c.state},       {"pause_reason", c.pause_reason},
              {"available", c.available},     {"reserved", c.reserved}, {"spent", c.spent},
              {"overrun", c.overrun},         {"shortfall", c.shortfall}};
    j["budget"] = c.limits ? json(c.limits->total) : json(nullptr);
    j["per_account"] = c.limits && c.limits->per_account ? json(*c.limits->per_account) : json(nullptr);
    j["per_day"] = c.limits && c.limits->per_day ? json(*c.limits->per_day) : json(nullptr);
    return j;
}

std::string cap_text(const json& v) { return v.is_null() ? "-" : std::to_string(v.get<std::int64_t>()); }

int cmd_budget_show(const settings& s, const std::string& name, const std::string& format,
                    const std::string& section) {
    namespace ledger = orch::engine::ledger;
    orch::engine::store db(s.database_url);
    db.require_current();
    pqxx::read_transaction tx(db.connection());
    auto rows = ledger::campaign_budgets(tx, name);
    if (!name.empty() && rows.empty()) {
        throw usage_error(orch::cli::no_campaign_named(name));
    }
    for (const auto& problem : ledger::check(tx)) {
        spdlog::error("ledger invariant broken: {}", problem);
    }
    json out = json::array();
    auto now = std::chrono::system_clock::now();
    for (const auto& c : rows) {
        json j = budget_json(c);
        // The caps' use: today's per-day cap and each sender's per-account cap.
        json caps = orch::engine::cap_use_json(tx, c.campaign_id, c.limits ? c.limits->per_day : std::nullopt,
                                               c.limits ? c.limits->per_account : std::nullopt, now);
        j["today"] = caps["today"];
        j["accounts"] = caps["accounts"];
        out.push_back(std::move(j));
    }
    // One campaign: its spend per action (the audience search as search_people too), sender and day.
    static const std::vector<const char*> dims = {"action", "account", "day"};
    json spend = name.empty() ? json::object() : orch::engine::spend_json(tx, rows[0].campaign_id);
    // --section names one table in every format (csv prints the budgets unless named; table and
    // json print all unless named).
    static const std::vector<std::string> sections = {"budgets", "accounts", "by_action", "by_account", "by_day"};
    if (!section.empty()) {
        if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
            throw usage_error("--section: unknown section '" + orch::text::escaped(section) +
                              "'; one of budgets, accounts, by_action, by_account, by_day");
        }
        if (section != "budgets" && name.empty()) {
            throw usage_error("--section " + section + " needs a CAMPAIGN");
        }
    }
    const auto shown = [&](const std::string& which) { return section.empty() || section == which; };
    if (format == "json") {
        json j = name.empty() ? json{{"campaigns", out}} : out[0];
        if (!name.empty()) {
            j["spend"] = spend;
        }
        if (!section.empty()) {
            j = section == "budgets"    ? (name.empty() ? json{{"campaigns", out}} : json{{"budget", out[0]}})
                : section == "accounts" ? json{{"accounts", out[0]["accounts"]}}
                                        : json{{section, spend[section]}};
        }
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    if (format == "csv") {
        // One table: the budgets (the main one), or with CAMPAIGN --section accounts|by_action|
        // by_account|by_day, that campaign's cap use or spend.
        std::vector<text_table> tables;
        std::vector<std::string> names = {"budgets"};
        text_table budgets{"", {"campaign", "state", "budget", "per_account", "per_day", "available", "reserved",
                                "spent", "overrun", "shortfall", "pause_reason"}, {}};
        for (const auto& c : out) {
            budgets.rows.push_back({cell(c["campaign"]), cell(c["state"]), cell(c["budget"]), cell(c["per_account"]),
                                    cell(c["per_day"]), cell(c["available"]), cell(c["reserved"]), cell(c["spent"]),
                                    cell(c["overrun"]), cell(c["shortfall"]), cell(c["pause_reason"])});
        }
        tables.push_back(std::move(budgets));
        if (!name.empty()) {
            text_table accounts{"", {"account", "per_account", "reserved", "spent", "available"}, {}};
            for (const auto& a : out[0]["accounts"]) {
                accounts.rows.push_back({cell(a["account"]), cell(a["per_account"]), cell(a["reserved"]),
                                         cell(a["spent"]), cell(a["available"])});
            }
            tables.push_back(std::move(accounts));
            names.push_back("accounts");
            for (const char* dim : dims) {
                text_table t{"", {dim, "calls", "pending", "posted_calls", "voided", "reserved_pending",
                                  "reserved_posted", "posted"}, {}};
                for (const auto& r : spend[std::string("by_") + dim]) {
                    t.rows.push_back({cell(r[dim]), cell(r["calls"]), cell(r["pending"]), cell(r["posted_calls"]),
                                      cell(r["voided"]), cell(r["reserved_pending"]), cell(r["reserved_posted"]),
                                      cell(r["posted"])});
                }
                tables.push_back(std::move(t));
                names.push_back(std::string("by_") + dim);
            }
        } else if (!section.empty() && section != "budgets") {
            throw usage_error("--section " + orch::text::escaped(section) + " needs a CAMPAIGN");
        }
        print_sections("csv", tables, names, section, json());
        return 0;
    }
    auto num = [](const json& v) { return v.is_number() ? v.dump() : std::string(); };
    text_table budgets{"", {"campaign", "state", "budget", "available", "reserved", "spent", "overrun", "shortfall",
                            "caps / paused because"}, {}};
    for (const auto& c : out) {
        std::string note = "per account " + cap_text(c["per_account"]) + ", per day " + cap_text(c["per_day"]);
        if (c["today"].is_object()) {
            const json& t = c["today"];
            note += " (today " + orch::engine::day_cap_use_text(t) + ")";
        }
        if (!c["pause_reason"].get<std::string>().empty()) {
            note += "; " + c["pause_reason"].get<std::string>();
        }
        budgets.rows.push_back({c["campaign"].get<std::string>(), c["state"].get<std::string>(), cap_text(c["budget"]),
                                num(c["available"]), num(c["reserved"]), num(c["spent"]), num(c["overrun"]),
                                num(c["shortfall"]), note});
    }
    if (shown("budgets")) {
        print_aligned(budgets);
        // Overrun reads as overspending; what it counts is said once some campaign has one.
        if (std::any_of(out.begin(), out.end(), [](const json& c) { return c.value("overrun", 0) > 0; })) {
            std::printf("overrun: credits posted beyond what was reserved for them (the audience search and serve's "
                        "reads reserve nothing; a call charged above its reservation counts too); shortfall: the "
                        "part of it the budget could not cover\n");
        }
    }
    if (!name.empty() && !out[0]["accounts"].empty() && shown("accounts")) {
        text_table t{"per-account cap " + cap_text(out[0]["per_account"]), {"account", "reserved", "spent", "left"}, {}};
        for (const auto& a : out[0]["accounts"]) {
            t.rows.push_back({a["account"].get<std::string>(), num(a["reserved"]), num(a["spent"]), num(a["available"])});
        }
        std::cout << "\n";
        print_aligned(t);
    }
    for (const char* dim : dims) {
        if (name.empty()) {
            break;
        }
        if (!shown(std::string("by_") + dim)) {
            continue;
        }
        // The columns named as in JSON and CSV (the table's "posted" once counted calls where
        // JSON's counts credits, a trial): calls by state, then credits.
        text_table t{std::string("spend by ") + dim + " (calls: pending, posted_calls, voided; credits: "
                                                      "reserved_pending, reserved_posted, posted)",
                     {dim, "calls", "pending", "posted_calls", "voided", "reserved_pending", "reserved_posted", "posted"},
                     {}};
        for (const auto& r : spend[std::string("by_") + dim]) {
            t.rows.push_back({r[dim].is_string() ? r[dim].get<std::string>() : r[dim].dump(), num(r["calls"]),
                              num(r["pending"]), num(r["posted_calls"]), num(r["voided"]), num(r["reserved_pending"]),
                              num(r["reserved_posted"]), num(r["posted"])});
        }
        std::cout << "\n";
        print_aligned(t);
    }
    return 0;
}

// ---- budget set ----
// A live change of one campaign's budget: the total and the optional caps ("none" removes one).
// Applying the campaign's file again later sets the file's values (the file is the source of
// truth at apply), which the output says.
// nullopt: the flag was not given; an empty inner optional: "none" (the cap removed).
std::optional<std::optional<std::int64_t>> parse_cap(const std::string& flag, const std::optional<std::string>& text,
                                                     bool none_allowed) {
    if (!text) {
        return std::nullopt;
    }
    if (none_allowed && *text == "none") {
        return std::optional<std::int64_t>{};
    }
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec == std::errc::result_out_of_range && end == text->data() + text->size() && v >= 0 &&
        text->front() != '-') {
        // A whole number too large for 64 bits: refused by the budget's own limit, as one that fits.
        v = std::numeric_limits<std::int64_t>::max();
        ec = std::errc{};
    }
    if (ec != std::errc{} || end != text->data() + text->size() || v < 1) {
        throw usage_error(flag + ": \"" + *text + "\" is not a positive whole number" +
                          (none_allowed ? " (or 'none')" : " (a campaign always has a budget)"));
    }
    // Said with the flag, and with the other flags' problems (the store holds the limit too).
    if (v > orch::engine::budget_update::credits_max) {
        throw usage_error(flag + ": \"" + *text + "\" cannot be above " +
                          std::to_string(orch::engine::budget_update::credits_max) + " credits");
    }
    return std::optional<std::int64_t>{v};
}

int cmd_budget_set(const settings& s, const std::string& name, const std::optional<std::string>& credits,
                   const std::optional<std::string>& per_day, const std::optional<std::string>& per_account) {
    orch::engine::budget_update u;
    // Every bad flag in one refusal, as the admin API lists every bad field of its body.
    std::string problems;
    const auto parsed = [&](const std::string& flag, const std::optional<std::string>& text, bool none_allowed) {
        try {
            return parse_cap(flag, text, none_allowed);
        } catch (const usage_error& e) {
            problems += (problems.empty() ? "" : "; ") + std::string(e.what());
            return std::optional<std::optional<std::int64_t>>{};
        }
    };
    if (auto v = parsed("--credits", credits, false)) {
        u.credits = **v;
    }
    u.per_day = parsed("--per-day", per_day, true);
    u.per_account = parsed("--per-account", per_account, true);
    if (!problems.empty()) {
        throw usage_error("budget set: " + problems + "; nothing changed");
    }
    if (!u.credits && !u.per_day && !u.per_account) {
        throw usage_error("budget set: give --credits, --per-day or --per-account");
    }
    orch::engine::store db(s.database_url);
    db.require_current();
    std::optional<orch::engine::budget_set_outcome> r;
    try {
        r = db.update_campaign_budget(name, u, std::chrono::system_clock::now());
    } catch (const orch::engine::budget_update_error& e) {
        throw usage_error(std::string("budget set: ") + e.what() + "; nothing changed");
    }
    if (!r) {
        throw usage_error(orch::cli::no_campaign_named(name));
    }
    auto cap = [](const std::optional<std::int64_t>& c) { return c ? std::to_string(*c) : std::string("none"); };
    std::printf("campaign %s: budget %lld credits, per day %s, per account %s; %lld available\n", name.c_str(),
                static_cast<long long>(r->total), cap(r->per_day).c_str(), cap(r->per_account).c_str(),
                static_cast<long long>(r->available));
    if (r->resumed) {
        std::printf("resumed: it was paused for its budget\n");
    }
    const bool day_used_up = r->today.is_object() && r->today.value("available", std::int64_t{0}) <= 0;
    if (r->today.is_object()) {
        std::printf("day cap today (%s, UTC): %s\n", r->today.value("day", std::string()).c_str(),
                    orch::engine::day_cap_use_text(r->today).c_str());
    }
    if (r->per_account) {
        // A per-account cap never resets: a sender at it sends nothing more for this campaign
        // until the cap is raised (the day cap's line above says the same of today).
        std::int64_t full = 0;
        std::string which;
        for (const auto& a : r->accounts) {
            if (a.value("available", std::int64_t{0}) <= 0) {
                which += (full++ > 0 ? ", " : "") + a.value("account", std::string()) + " (" +
                         std::to_string(a.value("reserved", std::int64_t{0}) + a.value("spent", std::int64_t{0})) +
                         " used)";
            }
        }
        if (full > 0) {
            std::printf("per-account cap: %s used it up, so nothing more goes out through %s for this campaign until "
                        "the cap is raised: %s\n",
                        orch::text::counted(full, "sender has", "senders have").c_str(), full == 1 ? "it" : "them",
                        which.c_str());
        }
    }
    if (r->woken > 0) {
        std::printf("%lld leads waiting for a daily or per-account cap are due again%s\n", static_cast<long long>(r->woken),
                    day_used_up ? " (today's day cap has nothing left: those it refuses wait for the next UTC day again)"
                                : "");
    }
    if (r->committed > 0 && r->total <= r->committed) {
        std::printf("warning: %s\n", orch::engine::budget_below_text("the budget", r->committed).c_str());
    }
    std::printf("note: the next `campaign apply` keeps this budget unless its file changes the budget it gives; write it into the file too\n");
    return 0;
}

// A one-shot command interrupted (SIGINT, SIGTERM, SIGHUP) while it waits in the operators' line
// leaves it before it dies, so the commands behind it go at their places rather than after the
// 15 s its ticket would stay (its destructors do not run when a signal kills it). The handler
// posts a semaphore (async-signal-safe) and gives the three signals their default action back,
// so a second signal kills at once; a thread leaves the line, says what an audience search had
// sent, and raises the signal again: the command still dies by it, as before (exit status 128 + n
// in a shell). A signal the caller ignores (nohup, a background job of a script) stays ignored.
// The long-running commands install their own handlers.
sem_t g_interrupted;
volatile std::sig_atomic_t g_interrupt_signal = 0;
constexpr std::array<int, 3> interrupt_signals{SIGINT, SIGTERM, SIGHUP};
extern "C" void on_interrupt(int sig) {
    g_interrupt_signal = sig;
    for (const int s : interrupt_signals) {
        std::signal(s, SIG_DFL);
    }
    sem_post(&g_interrupted);
}

void leave_the_line_when_interrupted() {
    if (sem_init(&g_interrupted, 0, 0) != 0) {
        return;  // the default actions stay: a ticket expires by itself
    }
    std::thread([] {
        while (sem_wait(&g_interrupted) != 0) {
        }
        orch::limits::line_ticket::leave_all();
        if (const int pages = g_search_pages_sent.load(); pages > 0) {
            std::cerr << "interrupted: the audience search had sent " << orch::text::counted(pages, "page", "pages")
                      << ", which the API bills; nothing was stored\n";
        } else if (g_search_running.load()) {
            std::cerr << "interrupted: the audience search had sent no page yet; nothing was stored or billed\n";
        }
        if (const auto row = g_search_row.load(); row != 0) {
            try {
                pqxx::connection conn(g_search_row_database);
                pqxx::nontransaction(conn).exec_params(std::string(orch::schema::query("credits/search_end")), row);
            } catch (const std::exception&) {
                // the row stops counting once the apply's session ends with the process (migration 0043)
            }
        }
        std::raise(g_interrupt_signal);
    }).detach();
    for (const int sig : interrupt_signals) {
        struct sigaction now {};
        if (sigaction(sig, nullptr, &now) == 0 && now.sa_handler != SIG_IGN) {
            std::signal(sig, on_interrupt);
        }
    }
}

// ---- long-running ----
// The signal handler only sets a flag (async-signal-safe); a watcher thread turns it into a
// soft stop, then a hard exit if the stop takes longer than stop_timeout_ms (what is still in
// flight then is left to lease expiry and reconciliation).
volatile std::sig_atomic_t g_signalled = 0;
extern "C" void on_signal(int) { g_signalled = 1; }

void install_stop(std::function<void()> stop, std::int64_t stop_timeout_ms) {
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    std::thread([stop = std::move(stop), stop_timeout_ms] {
        while (g_signalled == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        spdlog::info("stopping: finishing the work in flight (at most {} ms)", stop_timeout_ms);
        stop();
        std::this_thread::sleep_for(std::chrono::milliseconds(stop_timeout_ms));
        spdlog::warn("stop timeout reached; exiting with work in flight (leases will expire)");
        std::_Exit(3);
    }).detach();
}

// A worker takes a Redis token before every call: without Redis it could only log errors, so
// it checks Redis once at start and stops with one message when it does not answer.
void require_redis(const settings& s) {
    namespace limits = orch::limits;
    auto ls = orch::engine::limiter_settings(s);
    ls.connect_timeout_ms = 2'000;
    if (auto problems = limits::validate(ls); !problems.empty()) {
        throw usage_error("Redis settings: " + problems.front());
    }
    limits::limiter probe(ls);
    auto day = limits::day_in_zone(std::chrono::system_clock::now(), "UTC");
    if (!probe.status("worker-start-probe", *day)) {
        throw usage_error("Redis does not answer at " + orch::engine::redacted(s.redis_url) +
                          ": the worker needs it for the rate limits; start Redis (or fix REDIS_URL) and run the "
                          "worker again");
    }
}

int cmd_worker(const settings& s, bool exit_when_idle) {
    require_redis(s);
    orch::engine::worker w(s);
    install_stop([&w] { w.request_stop(); }, s.stop_timeout_ms);
    return w.run(exit_when_idle);
}

int cmd_serve(const settings& s) {
    orch::engine::intake in(s);
    install_stop([&in] { in.request_stop(); }, s.stop_timeout_ms);
    return in.run();
}

// Every value the command line takes is text, a path's aside (a file name may be any bytes): a
// value that is not UTF-8 is refused at parse, exit 2 naming its option, where it reached
// PostgreSQL or the JSON library and failed there (exit 1, with their error).
void require_text_values(CLI::App& app) {
    static const CLI::Validator utf8(
        [](std::string& value) {
            auto p = orch::text::check_text(value);
            return p ? "the value is not UTF-8 text (" + orch::text::at_byte(*p) + ")" : std::string();
        },
        "", "utf8");
    for (CLI::Option* o : app.get_options()) {
        // get_type_name() adds the validators' names: "PATH:FILE" for --config.
        if (o->get_type_size_max() == 0 || o->get_type_name().starts_with("PATH") || o->get_name() == "FILE") {
            continue;  // a flag, or a path
        }
        o->check(utf8);
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        require_text_values(*sub);
    }
}

}  // namespace

int main(int argc, char** argv) {
    spdlog::set_default_logger(spdlog::stderr_color_mt("orchestrator"));
    // A database that accepts connections and never answers (a frozen server, a stalled proxy)
    // would hold every new connection forever: libpq waits without limit unless told. Its own
    // variable is the default for each connection whose database_url sets no connect_timeout, so
    // a URL or an environment that sets one still wins. A failed connection is retried or said
    // like any other.
    ::setenv("PGCONNECT_TIMEOUT", "10", /*overwrite=*/0);
    orch::api::escape_log_messages();
    CLI::App app{"orchestrator: runs declarative multi-step outreach campaigns through the Outreach API"};
    app.set_version_flag("--version", std::string("orchestrator ") + ORCH_VERSION);
    app.require_subcommand(1);
    // Settings flags may follow the subcommand (`orchestrator worker --lease-seconds 5`).
    app.fallthrough();
    global_options g;
    add_setting_flags(app, g);

    std::function<int()> action;
    auto need = [](bool db, bool redis, bool api) {
        settings_needs n;
        n.database = db;
        n.redis = redis;
        n.api = api;
        return n;
    };

    app.add_subcommand("migrate", "apply the schema migrations (idempotent)")->callback([&] {
        action = [&] { return cmd_migrate(load(g, need(true, false, false))); };
    });

    bool exit_when_idle = false;
    auto* worker = app.add_subcommand("worker", "run campaigns until SIGTERM");
    worker->add_flag("--exit-when-idle", exit_when_idle, "stop once no active campaign has live leads");
    worker->callback([&] { action = [&] { return cmd_worker(load(g, need(true, true, true)), exit_when_idle); }; });

    app.add_subcommand("serve", "run the webhook receiver and event intake until SIGTERM")->callback([&] {
        action = [&] { return cmd_serve(load(g, need(true, true, true))); };
    });

    auto* campaign = app.add_subcommand("campaign", "campaign definitions and their state");
    campaign->require_subcommand(1);
    std::string file, name, format = "table", section;
    // --format on every listing command, and --section where a command has several tables.
    auto add_format = [&format](CLI::App* sub, std::vector<std::string> formats = {"table", "json", "csv"}) {
        std::string list;
        for (const auto& f : formats) {
            list += (list.empty() ? "" : "|") + f;
        }
        sub->add_option("--format", format, "output format: " + list)
            ->check(CLI::IsMember(formats))
            ->type_name("FORMAT")
            ->capture_default_str();
    };
    auto add_section = [&section](CLI::App* sub, const std::string& sections) {
        sub->add_option("--section", section,
                        "the table to print (csv prints one: the first unless named; table and json print all unless "
                        "named): " + sections)
            ->type_name("NAME");
    };
    auto* validate = campaign->add_subcommand("validate", "check a campaign file (with a database set: its accounts too, and what an apply now would warn of)");
    validate->add_option("FILE", file, "the campaign file (YAML or JSON)")->required()->type_name("PATH");
    bool validate_search_again = false;
    validate->add_flag("--search-again", validate_search_again,
                       "say whether an apply with --search-again would send the audience search (with a database)");
    validate->callback([&] { action = [&] { return cmd_campaign_validate(g, file, validate_search_again); }; });
    auto* estimate = campaign->add_subcommand(
        "estimate", "forecast a campaign file's credits and duration (cost model, quotas, working hours)");
    estimate->add_option("FILE", file, "the campaign file (YAML or JSON)")->required()->type_name("PATH");
    add_format(estimate);
    estimate->callback([&] { action = [&] { return cmd_campaign_estimate(g, file, format); }; });
    auto* apply = campaign->add_subcommand("apply", "store a campaign file as a new version and enroll its audience");
    apply->add_option("FILE", file, "the campaign file (YAML or JSON)")->required()->type_name("PATH");
    bool search_again = false;
    bool move_running = false;
    apply->add_flag("--search-again", search_again,
                    "send the audience search again though the audience is the current version's (it bills "
                    "credits; enrolls the people it finds that are new)");
    apply->add_flag("--move-running", move_running,
                    "move the live leads of older versions to this one where their step is in it with the same "
                    "kind (a lead in a call stays; a wait its step set keeps its end)");
    bool apply_dry_run = false;
    apply->add_flag("--dry-run", apply_dry_run,
                    "store, enroll and bill nothing: check the file and say what an apply now would do and warn "
                    "of, as `campaign validate` does (with --search-again and --move-running as given)");
    apply->callback([&] {
        action = [&] {
            if (apply_dry_run) {
                return cmd_campaign_validate(g, file, search_again, move_running, true);
            }
            return cmd_campaign_apply(load(g, need(true, false, true)), file, search_again, move_running);
        };
    });
    auto* clist = campaign->add_subcommand("list", "campaigns with their state");
    add_format(clist);
    clist->callback([&] { action = [&] { return cmd_campaign_list(load(g, need(true, false, false)), format); }; });
    for (auto [verb, what] : {std::pair{"pause", "pause an active campaign (its leads are parked)"},
                              {"resume", "resume a paused campaign"},
                              {"cancel", "cancel an active or paused campaign (its live enrollments end)"}}) {
        auto* sub = campaign->add_subcommand(verb, what);
        sub->add_option("NAME", name, "the campaign's name")->required()->type_name("TEXT");
        std::string v = verb;
        sub->callback([&, v] { action = [&, v] { return cmd_campaign_state(load(g, need(true, false, false)), name, v); }; });
    }
    auto* show = campaign->add_subcommand("show", "a campaign's state, version, budget, steps (leads at each) and funnel");
    show->add_option("NAME", name, "the campaign's name")->required()->type_name("TEXT");
    add_format(show);
    add_section(show, "summary, steps, funnel");
    show->callback([&] {
        action = [&] { return cmd_campaign_show(load(g, need(true, false, false)), name, format, section); };
    });
    // ---- lifecycle: versions, diff ----
    auto* versions = campaign->add_subcommand("versions", "the stored versions of a campaign");
    versions->add_option("NAME", name)->required();
    versions->add_option("--format", format)->check(CLI::IsMember({"table", "json", "csv"}));
    versions->callback([&] { action = [&] { return cmd_campaign_versions(load(g, need(true, false, false)), name, format); }; });
    std::vector<int> diff_versions;
    auto* diff = campaign->add_subcommand(
        "diff", "a unified diff of two versions' definitions (default: the previous and the current one)");
    diff->add_option("NAME", name)->required();
    diff->add_option("VERSIONS", diff_versions, "V1 V2")->expected(0, 2)->check(CLI::Range(1, 1'000'000));
    diff->callback([&] { action = [&] { return cmd_campaign_diff(load(g, need(true, false, false)), name, diff_versions); }; });

    auto* accounts = app.add_subcommand("accounts", "connected accounts");
    accounts->require_subcommand(1);
    std::string token, country = "US", email, password, label;
    auto* connect = accounts->add_subcommand("connect", "log an account in through the API and store it");
    auto* token_opt = connect->add_option("--login-token", token, "the platform session token")->type_name("TEXT");
    connect->add_option("--country", country, "country of the proxy")->type_name("CODE")->capture_default_str();
    // One way to log in: a token beside an email would leave which one the API used to chance.
    auto* email_opt = connect->add_option("--email", email, "the account's login email (with --password)");
    auto* password_opt = connect->add_option("--password", password, "the account's password (with --email)");
    email_opt->type_name("TEXT");
    password_opt->type_name("TEXT");
    token_opt->excludes(email_opt)->excludes(password_opt);
    connect->add_option("--label", label, "a name campaign files may use instead of the account id")->type_name("TEXT");
    connect->callback([&] {
        action = [&] {
            if (token.empty() && (email.empty() || password.empty())) {
                throw usage_error("accounts connect needs --login-token, or --email and --password");
            }
            // A label is a name campaign files use: no control or bidirectional characters.
            if (auto p = orch::text::check_name(label)) {
                throw usage_error("--label is not a valid name: " + orch::text::at_byte(*p));
            }
            return cmd_accounts_connect(load(g, need(true, false, true)), token, country, email, password, label);
        };
    });
    std::string time_zone;
    auto* list = accounts->add_subcommand("list", "stored accounts with their quotas used and left, and cooldowns");
    add_format(list);
    add_section(list, "accounts, quotas");
    list->add_option("--time-zone", time_zone,
                     "read the quota counters of this zone's day (IANA name) instead of each account's quota day")
        ->type_name("TZ");
    list->callback([&] {
        action = [&] { return cmd_accounts_list(load(g, need(true, false, false)), format, time_zone, section); };
    });
    std::string limits_account;
    limits_request limits_req;
    auto* acct_limits = accounts->add_subcommand(
        "limits", "show or set an account's own quotas per action (override the settings' defaults)");
    acct_limits->add_option("ACCOUNT", limits_account, "account id or label")->required()->type_name("TEXT");
    for (auto a : orch::engine::quota_actions) {
        std::string act = orch::limits::to_string(a);
        for (std::string field : {"per_day", "per_week"}) {
            std::string flag = "--" + act + (field == "per_day" ? "-per-day" : "-per-week");
            std::string key = act + "." + field;
            acct_limits->add_option_function<std::string>(
                flag, [&limits_req, key](const std::string& v) { limits_req.values[key] = v; },
                "this account's " + act + " quota per " + (field == "per_day" ? "day" : "rolling week") +
                    " (0.." + std::to_string(orch::engine::quota_value_max) + "; default: unchanged)")
                ->type_name("INT");
        }
    }
    acct_limits->add_option_function<std::string>(
        "--time-zone", [&limits_req](const std::string& v) { limits_req.time_zone = v; },
        "the time zone of the account's quota day (IANA name): its day quotas start again at midnight there, "
        "for every campaign on it (default: the zone of the first campaign applied with it)")
        ->type_name("TZ");
    acct_limits->add_option("--clear", limits_req.clear, "drop the account's override of ACTION (or all): the default applies")
        ->type_name("ACTION")
        ->allow_extra_args(false);  // one action per --clear: a following ACCOUNT stays positional
    add_format(acct_limits);
    acct_limits->callback([&] {
        action = [&] {
            return cmd_accounts_limits(load(g, need(true, false, false)), limits_account, limits_req, format);
        };
    });
    accounts->add_subcommand("sync", "refresh accounts and their status from the API")->callback([&] {
        action = [&] { return cmd_accounts_sync(load(g, need(true, false, true))); };
    });

    auto* report = app.add_subcommand("report", "reports");
    report->require_subcommand(1);
    auto* funnel = report->add_subcommand("funnel", "found, checked, invited, accepted, messaged, replied, failed");
    funnel->add_option("CAMPAIGN", name, "the campaign's name")->required()->type_name("TEXT");
    add_format(funnel);
    funnel->callback([&] { action = [&] { return cmd_report_funnel(load(g, need(true, false, false)), name, format); }; });
    auto* rep_accounts = report->add_subcommand("accounts", "acceptance and reply rates per sender account and message variant");
    rep_accounts->add_option("CAMPAIGN", name, "the campaign's name")->required()->type_name("TEXT");
    add_format(rep_accounts);
    add_section(rep_accounts, "accounts, variants");
    rep_accounts->callback(
        [&] { action = [&] { return cmd_report_accounts(load(g, need(true, false, false)), name, format, section); }; });
    auto* rep_spend = report->add_subcommand("spend", "credits: budget, reserved vs posted, per action, account and day");
    rep_spend->add_option("CAMPAIGN", name, "the campaign's name")
        ->required()
        ->type_name("TEXT")
        ->check(orch::cli::not_empty("a campaign name"));
    add_format(rep_spend);
    add_section(rep_spend, "budgets, accounts, by_action, by_account, by_day (csv)");
    rep_spend->callback(
        [&] { action = [&] { return cmd_budget_show(load(g, need(true, false, false)), name, format, section); }; });
    auto* rep_timeline = report->add_subcommand("timeline", "activity per day, time to accept, rate-limit hits");
    rep_timeline->add_option("CAMPAIGN", name, "the campaign's name")->required()->type_name("TEXT");
    add_format(rep_timeline);
    add_section(rep_timeline, "days, time_to_accept, rate_limit_hits");
    rep_timeline->callback(
        [&] { action = [&] { return cmd_report_timeline(load(g, need(true, false, false)), name, format, section); }; });

    auto* config = app.add_subcommand("config", "the configuration file");
    config->require_subcommand(1);
    config->add_subcommand("example", "print a configuration file with every setting, documented, at its default")
        ->callback([&] {
            action = [] {
                std::cout << orch::engine::example_config();
                return 0;
            };
        });

    auto* budget = app.add_subcommand("budget", "credit budgets (the ledger)");
    budget->require_subcommand(1);
    std::string budget_campaign;
    auto* budget_show = budget->add_subcommand("show", "budgets, available, reserved vs posted; one campaign: spend per action, account, day");
    budget_show->add_option("CAMPAIGN", budget_campaign, "one campaign's name (default: every campaign)")
        ->type_name("TEXT")
        ->check(orch::cli::not_empty("a campaign name"));
    add_format(budget_show);
    add_section(budget_show, "budgets, accounts, by_action, by_account, by_day (csv; all but budgets need CAMPAIGN)");
    budget_show->callback([&] {
        action = [&] { return cmd_budget_show(load(g, need(true, false, false)), budget_campaign, format, section); };
    });

    std::string set_credits, set_per_day, set_per_account;
    auto* budget_set = budget->add_subcommand(
        "set", "change a campaign's budget now (raising it resumes a campaign paused for its budget); "
               "applying its file again sets the file's values");
    budget_set->add_option("CAMPAIGN", budget_campaign, "the campaign's name")->required()->type_name("TEXT");
    budget_set->add_option("--credits", set_credits, "the campaign's budget (default: unchanged)")->type_name("INT");
    budget_set->add_option("--per-day", set_per_day, "credits per UTC day, or none (default: unchanged)")
        ->type_name("INT|none");
    budget_set->add_option("--per-account", set_per_account, "credits per sender account, or none (default: unchanged)")
        ->type_name("INT|none");
    budget_set->callback([&] {
        action = [&] {
            // Given or not, by the count: an empty value given is a mistake, not "unchanged".
            auto given = [&](const char* flag, const std::string& v) {
                return budget_set->count(flag) > 0 ? std::optional<std::string>(v) : std::nullopt;
            };
            return cmd_budget_set(load(g, need(true, false, false)), budget_campaign, given("--credits", set_credits),
                                  given("--per-day", set_per_day), given("--per-account", set_per_account));
        };
    });

    auto* events = app.add_subcommand("events", "event intake");
    events->require_subcommand(1);
    std::int64_t quarantine_limit = 50;
    auto* quarantine = events->add_subcommand(
        "quarantine", "events that passed verification but could not be read, kept raw (newest first)");
    quarantine->add_option("--limit", quarantine_limit, "how many (INT, 1..500, default 50)")
        ->check(CLI::Range(1, 500));
    quarantine->add_option("--format", format)->check(CLI::IsMember({"table", "json", "csv"}));
    quarantine->callback([&] {
        action = [&] { return cmd_events_quarantine(load(g, need(true, false, false)), quarantine_limit, format); };
    });

    // dnc add|remove|list|import, leads list|show|stop|retry|skip|move (dnc_leads.hpp).
    orch::cli::add_dnc_and_leads_commands(app, action, [&] { return load(g, need(true, false, false)); });
    // inbox list|show|reply|mark, campaign watch (inbox_watch.hpp).
    orch::cli::add_inbox_and_watch_commands(app, action, [&] { return load(g, need(true, false, false)); });

    // Every subcommand's help points at the settings, which are the top level's flags.
    std::function<void(CLI::App&)> point_at_settings = [&](CLI::App& a) {
        for (CLI::App* sub : a.get_subcommands({})) {
            sub->footer("Settings (--database-url, --worker-lanes, ...) may follow the subcommand: "
                        "`orchestrator --help` lists them.");
            point_at_settings(*sub);
        }
    };
    point_at_settings(app);
    // CLI11's own messages quote what was typed: through terminal_error as well.
    // Two of its wordings are mended: the arguments it did not expect are listed in the order
    // typed (its message lists them backwards), and an empty value a set refuses is shown as "".
    app.failure_message([](const CLI::App* a, const CLI::Error& e) {
        std::string msg = CLI::FailureMessage::simple(a, e);
        if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
            const auto rest = a->remaining(true);
            std::string typed;
            for (const auto& r : rest) {
                typed += (typed.empty() ? "" : " ") + r;
            }
            msg = std::string(rest.size() == 1 ? "This argument was not expected: " : "These arguments were not expected: ") +
                  typed + "\nRun with --help for more information.\n";
        }
        if (auto at = msg.find(":  not in {"); at != std::string::npos) {
            msg.replace(at, 3, ": \"\" ");
        }
        // CLI11's range check ("--interval: Value abc not in range 1 to 3600"): every range of these
        // commands is of whole numbers, which is what the value must be.
        if (auto at = msg.find(": Value "); at != std::string::npos) {
            const auto value_at = at + 8;
            const auto range_at = msg.find(" not in range ", value_at);
            const auto to_at = range_at == std::string::npos ? std::string::npos : msg.find(" to ", range_at + 14);
            const auto end = to_at == std::string::npos ? std::string::npos : msg.find('\n', to_at);
            if (end != std::string::npos) {
                msg = msg.substr(0, at) + ": '" + msg.substr(value_at, range_at - value_at) +
                      "' is not a whole number from " + msg.substr(range_at + 14, to_at - range_at - 14) + " to " +
                      msg.substr(to_at + 4, end - to_at - 4) + msg.substr(end);
            }
        }
        // An option of one value typed more than once ("--account a --account b"): which one was
        // meant is not for us to guess.
        static constexpr std::string_view at_most = ": At Most 1 required but received ";
        if (auto at = msg.find(at_most); dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr &&
                                          at != std::string::npos) {
            const auto end = msg.find('\n', at);
            const std::string times = msg.substr(at + at_most.size(), end - at - at_most.size());
            msg = msg.substr(0, at) + " is given " + times + " times: give it once" +
                  (end == std::string::npos ? std::string() : msg.substr(end));
        }
        // A command missing ("campaign") or mistyped ("campaign lisst", left over where a
        // subcommand was required): name what was typed, the nearest command, and the list.
        if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && msg.find("subcommand") != std::string::npos) {
            const CLI::App* at = a;
            while (!at->get_subcommands().empty()) {
                at = at->get_subcommands().front();
            }
            std::vector<std::string> names;
            std::string listed;
            for (const auto* sub : at->get_subcommands([](const CLI::App* c) { return !c->get_name().empty(); })) {
                names.push_back(sub->get_name());
                listed += (listed.empty() ? "" : ", ") + sub->get_name();
            }
            const std::string where = at == a ? std::string() : at->get_name() + " ";
            const std::string list = "the commands of '" + (at == a ? std::string("orchestrator") : at->get_name()) +
                                     "': " + listed + "\nRun with --help for more information.\n";
            // CLI11 leaves a word a subcommand could not take with the command above it.
            const auto rest = a->remaining(true);
            if (!rest.empty() && !rest.front().empty() && rest.front().front() != '-') {
                msg = "unknown command '" + where + rest.front() + "'" +
                      orch::text::did_you_mean(rest.front(), names) + "\n" + list;
            } else {
                msg = (where.empty() ? std::string("a command is required") : "'" + at->get_name() + "' needs a command") +
                      "\n" + list;
            }
        }
        return orch::text::terminal_error(msg);
    });

    require_text_values(app);
    // A setting's flag written `--name=` gives it an empty value, as `--name ""` does (CLI11 reads
    // it as a missing value), so the settings say what an empty value means for it.
    std::vector<std::string> args;
    bool options = true;  // until "--"
    for (int i = 1; i < argc; ++i) {
        std::string arg(argv[i]);
        options = options && arg != "--";
        if (options && arg.size() > 3 && arg.starts_with("--") && arg.back() == '=') {
            std::string name = arg.substr(2, arg.size() - 3);
            std::replace(name.begin(), name.end(), '-', '_');
            const auto& docs = orch::engine::setting_docs();
            if (std::any_of(docs.begin(), docs.end(), [&name](const auto& d) { return d.name == name; })) {
                arg.pop_back();
                args.push_back(arg);
                args.emplace_back();
                continue;
            }
        }
        args.push_back(std::move(arg));
    }
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.name(argc > 0 ? argv[0] : "orchestrator");  // as parse(argc, argv) names it, for --help
    try {
        app.parse(args);
    } catch (const CLI::ParseError& e) {
        // Help answers 0; a mistake in the command line is the caller's, exit 2 as every other
        // (CLI11's own codes, 105-109, would mean nothing to a script).
        return app.exit(e) == 0 ? 0 : 2;
    }
    // Every error is printed through terminal_error: a value a message quotes (a name, an option,
    // the API's text) cannot reach the terminal as a control sequence, nor hide a character.
    using orch::text::terminal_error;
    leave_the_line_when_interrupted();
    try {
        return action ? action() : 0;
    } catch (const usage_error& e) {
        std::cerr << terminal_error(e.what()) << "\n";
        return 2;
    } catch (const orch::engine::store_error& e) {
        std::cerr << "database: " << terminal_error(e.what()) << "\n";
        return 1;
    } catch (const orch::engine::failure& f) {
        // The engine's taxonomy (engine/result.hpp): the caller's mistakes exit 2, the rest 1.
        using orch::engine::error_category;
        switch (f.category()) {
        case error_category::conflict:
        case error_category::unprocessable:
            std::cerr << terminal_error(f.what()) << "; nothing changed\n";
            return 2;
        case error_category::invalid_input:
        case error_category::unsupported_media:
        case error_category::not_found:
            std::cerr << terminal_error(f.what()) << "\n";
            return 2;
        default:
            std::cerr << "error: " << terminal_error(f.what()) << "\n";
            return 1;
        }
    } catch (const std::exception& e) {
        std::cerr << "error: " << terminal_error(e.what()) << "\n";
        return 1;
    }
}
