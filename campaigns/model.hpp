// orch::campaigns model: a validated campaign definition (what a campaign file means once the
// loader has accepted it). Pure data, no I/O. The loader (loader.hpp) is the only producer of a
// `campaign` from user input; `to_json`/`campaign_from_json` round-trip the canonical form that
// the store keeps per campaign version, so a worker runs exactly what was applied.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orch::campaigns {

using json = nlohmann::json;
using time_point = std::chrono::system_clock::time_point;
using seconds = std::chrono::seconds;

// The kinds of step a campaign can chain. Each maps to at most one API call (see machine.hpp).
enum class step_kind {
    check_invitation,  // read-only: branch on ACCEPTED / PENDING / NO_INVITATION
    invite,            // side effect: connection invitation, optional note template
    wait_accepted,     // park until accepted_invitation or the timeout
    send,              // side effect: message, one of `variants`
    delay,             // park for `duration`
    visit,             // side effect (visible to the person): profile visit
    withdraw,          // side effect: withdraw the pending invitation
    end,               // finish the sequence (status done)
};
// The step kind as written in campaign files ("check_invitation", "wait_accepted", ...).
const char* to_string(step_kind k);
std::optional<step_kind> step_kind_from_string(std::string_view name);

// A message text (or invitation note) with {{field}} placeholders; `{{field|default}}` gives a
// default for a field that may be missing. Parsed by the loader, rendered by render() in
// loader.hpp.
struct text_template {
    std::string source;
};

struct message_variant {
    std::string name;          // "A", "B", ... recorded per lead for the reports
    text_template text;
};

struct step {
    std::string id;            // unique within the campaign
    step_kind kind = step_kind::end;
    std::string next;          // successor for kinds without branches; "" means end
    // check_invitation branches (step ids; "" means end)
    std::string on_accepted;
    std::string on_pending;
    std::string on_no_invitation;
    // invite
    std::optional<text_template> note;
    // wait_accepted
    seconds timeout{0};
    std::string on_timeout;    // step id taken when the wait times out ("" = end)
    // delay
    seconds duration{0};
    // send: one or more variants; a lead gets one deterministically (choose_variant)
    std::vector<message_variant> variants;
};

// Working hours in the campaign's IANA time zone. days[0] is Monday. A side-effecting or
// read-only API step only runs inside [start_minute, end_minute) of an enabled day.
struct schedule {
    std::string time_zone = "UTC";
    std::array<bool, 7> days{true, true, true, true, true, false, false};
    int start_minute = 9 * 60;
    int end_minute = 18 * 60;
};

// Per-account quotas for one action ("invite", "send", "visit", "withdraw", "check_invitation",
// "search"); absent values fall back to the engine's defaults.
struct action_limit {
    std::optional<std::int64_t> per_day;
    std::optional<std::int64_t> per_week;
};

struct audience {
    enum class source { search, file };
    source kind = source::search;
    json search = json::object();        // search_people params (keyword, title, location, ...)
    std::int64_t total_results = 25;     // how many people the search asks for
    std::string file;                    // CSV or JSON file of profile URLs (path as written)
    // Leads read from the file by the loader (the loader reads no files itself: the caller
    // passes the file's text, see loader.hpp). Each has "profile_url" plus extra columns.
    std::vector<std::map<std::string, std::string>> leads;
    // Template fields every lead has, and those that may be missing (the loader derives both
    // from the source: search hits or the file's columns).
    std::vector<std::string> fields_always;
    std::vector<std::string> fields_optional;
};

// What happens to a lead whose sender account is disconnected or inactive.
enum class on_account_unavailable { wait, reassign };

struct campaign {
    std::string name;                            // unique campaign name (the apply key)
    std::vector<std::string> accounts;           // sender account ids, at least one
    audience who;
    struct schedule schedule;
    std::map<std::string, action_limit> limits;  // per action, per account
    std::int64_t budget_credits = 0;             // > 0
    // Optional caps inside the budget (each <= budget_credits): credits per UTC day, and per
    // sender account over the campaign's life. Absent: no such cap.
    std::optional<std::int64_t> budget_per_day_credits;
    std::optional<std::int64_t> budget_per_account_credits;
    bool stop_on_reply = true;
    on_account_unavailable unavailable = on_account_unavailable::wait;
    int max_attempts = 5;                        // transient failures per step before failing
    std::vector<step> steps;                     // steps[0] is the entry step
    // Optional dates (campaign file: ISO 8601 with a zone). No lead is worked before start_at;
    // at end_at the campaign stops (paused with reason "ended", its leads parked).
    std::optional<time_point> start_at;
    std::optional<time_point> end_at;
    // People this campaign never contacts (the file's `exclude:`), beside the global do-not-contact
    // list: profile URLs (as written; the engine compares canonical forms) and company names
    // (compared with a lead's `company` field ignoring case). Checked at enrollment; a new version
    // that adds one stops the person's live lead in this campaign.
    struct exclusions {
        std::vector<std::string> profile_urls;
        std::vector<std::string> companies;
    } exclude;
};

// An instant written as ISO 8601 with a zone: "2026-12-01T09:00:00Z", "2026-12-01T09:00+01:00",
// seconds and fractions optional. nullopt with `error` set when it is not one.
std::optional<time_point> parse_instant(const std::string& text, std::string& error);
// UTC, to the second: "2026-12-01T08:00:00Z" (the canonical form's).
std::string format_instant(time_point t);

// Canonical JSON form (stable key order) stored per campaign version; from_json trusts its
// input (it was produced by to_json) and asserts on shape errors.
json to_json(const campaign& c);
campaign campaign_from_json(const json& j);

// Lookup by id; nullptr when absent.
const step* find_step(const campaign& c, const std::string& id);

// Canonical form of a profile URL, the key that deduplicates leads across campaigns and matches
// the do-not-contact list and events: no scheme, no "www.", no query or fragment, no trailing
// slash, and one spelling per character: a %XX of an unreserved character (letter, digit,
// - . _ ~) decoded, any other %XX and every byte beyond ASCII written %xx, all in lower case. So
// ".../in/José", ".../in/jos%C3%A9" and ".../in/%4Aos%c3%a9/" are one person (migration 0030
// moved the stored keys to this spelling).
std::string canonical_profile_url(std::string_view url);

// `url` after its "https://" or "http://", in any case; nullopt when it has neither (not a web
// URL: the loader refuses it; canonical_profile_url keeps it whole).
std::optional<std::string_view> after_web_scheme(std::string_view url);

// Why a profile URL named by an operator (an `exclude:` entry, a do-not-contact entry) cannot be
// a profile's: its canonical form has no host with a dot and a path after it, or its path is the
// profile prefix alone ("https://host/in/", which names no one). nullopt when it can be; the
// message follows the URL ("'…' is not a profile URL …").
std::optional<std::string> profile_url_shape_problem(std::string_view url);

// Why a profile URL or a company named by an operator (an audience row, `exclude:`, a
// do-not-contact entry) cannot be compared as written: a space of any kind in a URL, a control,
// direction or invisible character, a space or joiner at an end, in the text or, for a URL,
// percent-encoded in it (jo%E2%80%8Bhn is "jo\u200bhn"; %20 stays a URL's space). Such an entry would match no lead while
// reading as one. `where` is the byte offset in the text as given; `what` says which, and that
// it was percent-encoded. nullopt when there is none.
struct text_problem {
    std::size_t where = 0;
    std::string what;
};
std::optional<text_problem> profile_url_text_problem(std::string_view url);
std::optional<text_problem> company_text_problem(std::string_view company);

}  // namespace orch::campaigns
