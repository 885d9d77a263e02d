// The sandbox's whole mutable state. It lives on the single network thread (one io_context,
// STYLE B3), so no member is locked. Each area (world, network, messages, webhooks) owns its
// part; the request pipeline in service.cpp owns keys, accounts and the records.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace orch::sandbox {

using json = nlohmann::json;
using sys_clock = std::chrono::system_clock;
using time_point = sys_clock::time_point;

// ---------------------------------------------------------------------------------------------
// The simulated world (world.cpp). Immutable after generation; people and companies are
// addressed by their index.
using person_id = std::uint32_t;
using company_id = std::uint32_t;

struct experience_item {
    company_id company;
    std::string title;
    std::string description;
    std::string start_date; // M/YYYY
    std::string end_date;   // empty when current
};

struct education_item {
    std::string school;
    std::string school_url;
    std::string degree;
    std::string field_of_study;
    std::string start_year;
    std::string end_year;
};

struct person {
    person_id id = 0;
    std::string public_id;      // "ada-lovelace-3f2a1b"
    std::string first_name;
    std::string last_name;
    std::string headline;
    std::string title;          // current job title
    std::string location;       // "Paris, Ile-de-France, France"
    std::string country;        // "FR"
    std::string industry;
    std::string summary;
    company_id company = 0;     // current company
    std::vector<company_id> past_companies;
    std::vector<education_item> education;
    std::vector<std::string> skills;
    std::string email;          // empty when not public
    std::string phone;
    std::string website;
    std::uint64_t urn_number = 0; // digits of the opaque member urn
    // Lower-cased (fold_lower, world.hpp) copy for keyword search.
    std::string search_text;    // names, headline, title, company name, location, industry, skills
    // Added by world.cpp: location parts, career and picture.
    std::string city;
    std::string region;
    std::string country_name;   // "France"
    std::string function;       // "Sales", "Engineering", ...
    std::string seniority;      // intern | entry | senior | manager | director | vp | cxo
    std::vector<experience_item> experience; // current position first, then newest to oldest
    std::string profile_picture_url; // empty when the person has none
};

// One address of a company (its headquarters or another office).
struct company_office {
    std::string city;
    std::string region;
    std::string country;        // "FR"
    std::string country_name;
    std::string line1;
    std::string line2;          // empty when none
    std::string postal_code;
};

struct company {
    company_id id = 0;
    std::string name;
    std::string universal_name; // URL slug
    std::string description;
    std::string tagline;
    std::string website;
    std::string domain;
    std::string industry;
    int employee_count = 0;
    int size_start = 0;
    int size_end = 0;           // 0: open-ended
    std::string country;
    std::string city;
    std::string region;
    std::string organization_type;
    int followers = 0;
    int founded_year = 0;
    bool funded = false;
    std::uint64_t urn_number = 0;
    std::string search_text;
    // Added by world.cpp: the detailed company record and fold_lower'ed search keys.
    std::string sector;         // broad group of the industry ("Technology", ...)
    std::string size_range;     // "11-50", "10001+"
    std::vector<company_office> offices; // headquarters first
    std::vector<std::string> specialties;
    std::string logo_url;
    std::string cover_image_url; // empty when none
    std::string call_to_action;  // VIEW_WEBSITE | LEARN_MORE | empty (none)
    std::string default_locale;  // language code
    bool verified = false;
    bool page_mailbox = false;
    std::string name_key;
    std::string industry_key;
    std::string sector_key;
    std::string location_key;
};

// ---------------------------------------------------------------------------------------------
// Keys, accounts, relations and conversations.

struct key_state {
    std::string key;
    std::int64_t credits = 0;             // remaining
    std::int64_t charged_total = 0;       // every credit ever charged
    std::map<std::string, std::int64_t> charged_by_action;
    // Token bucket of the per-key request rate.
    double tokens = 0.0;
    time_point tokens_at{};
    // A forced burst of RATE_LIMITED answers (control interface).
    time_point burst_until{};
    std::int64_t burst_retry_after_s = -1; // -1: no Retry-After header during the burst
};

enum class relation_state {
    none,
    pending_sent,     // the account invited the person
    pending_received, // the person invited the account
    connected,
    withdrawn,        // the account withdrew its pending invitation
    declined          // the account declined the person's invitation
};

struct relation {
    relation_state state = relation_state::none;
    std::uint64_t invitation_id = 0;  // 19 digits, > 2^53 on purpose
    std::string shared_secret;        // received invitations
    std::string note;                 // invitation note
    time_point invited_at{};
    time_point connected_at{};
    bool will_accept = false;         // drawn when the invitation is sent
};

struct chat_message {
    std::string entity_urn;
    std::string text;
    bool from_account = true;         // false: from the person
    time_point at{};
    std::string media;                // empty when none
};

struct conversation {
    std::string id;                   // opaque urn
    person_id with = 0;
    std::vector<chat_message> messages; // oldest first
    int unread = 0;
    time_point last_seen_at{};
    bool reply_pending = false;       // a simulated reply is scheduled (messages.cpp)
};

struct account_state {
    std::string id;                   // "acc_<16 hex>"
    std::string key;                  // owning API key
    std::string platform = "network"; // network | messaging
    std::string login_token;          // empty for e-mail logins
    std::string email;
    std::string country;
    std::string name;                 // display name
    std::string status = "connected"; // connected | checkpoint_required | disconnected
    bool active = true;               // false after a forced disconnection until re-login
    std::string challenge_type;       // while checkpoint_required
    time_point created_at{};
    time_point updated_at{};
    person self;                      // the account owner's own profile (get_me)
    std::unordered_map<person_id, relation> relations;
    std::deque<time_point> invitations_sent_at;     // for the weekly cap; oldest first
    std::unordered_map<person_id, std::size_t> conversation_by_person;
    std::vector<conversation> conversations;
    std::map<std::string, int> requests_today;      // action -> count, reset each UTC day
    std::int64_t requests_day = -1;                 // UTC day number of requests_today
    std::int64_t monitoring_charged_day = -1;       // UTC day last charged for monitoring
};

// ---------------------------------------------------------------------------------------------
// Events and webhooks (webhooks.cpp).

// Live delivery machinery of a webhook (SSE subscribers, the deliverer's backoff timer); defined
// in webhook_runtime.hpp so this header stays free of Asio.
struct webhook_runtime;

struct stored_event {
    std::string event_id;             // 24 hex chars, increasing
    std::string account_id;
    std::uint64_t sequence = 0;       // 1, 2, ... in publication order (numeric poll cursors)
    std::string type;                 // message | accepted_invitation | disconnection (whatever the dialect)
    json payload;                     // the event as emitted, in the dialect's envelope (dialect.hpp)
    std::string person;               // the profile URL of whom it is about, when known (control only)
    time_point created_at{};
};

struct webhook_state {
    std::string id;                   // "wh_<16 hex>"
    std::string account_id;
    std::string key;
    std::string url;                  // empty: hosted mode
    std::vector<std::string> events;  // filter; "all" matches every type
    bool active = true;
    std::string secret;               // empty: deliveries unsigned
    time_point created_at{};
    time_point updated_at{};
    std::deque<std::string> hosted_event_ids; // hosted mode: retained events, oldest first
    // Custom mode delivery queue, drained by one coroutine per webhook (keeps order).
    std::deque<std::shared_ptr<const stored_event>> outbox;
    bool delivering = false;
    std::uint64_t generation = 0;     // bumped on delete so a running deliverer stops
    std::shared_ptr<webhook_runtime> runtime; // created with the webhook (webhooks.cpp)
};

// ---------------------------------------------------------------------------------------------
// Records the control interface exposes to tests.

struct request_record {
    std::int64_t at_ms = 0;           // unix ms when the request was answered
    time_point arrived{};             // when it reached the pipeline (Retry-After windows)
    std::int64_t latency_ms = 0;      // the latency the sandbox applied to it
    std::string key;
    std::string method;
    std::string path;
    std::string account_id;
    std::string action;
    int status = 0;
    std::string error_code;
    std::int64_t credits = 0;
};

struct invitation_record {
    std::string account_id;
    std::string profile_url;
    std::uint64_t invitation_id = 0;
    int requests = 0;                 // invite calls for this (account, person)
    int sent = 0;                     // invitations actually created
    time_point first_at{};
    time_point last_at{};
    std::string outcome;              // pending | accepted | withdrawn
};

struct message_record {
    std::string account_id;
    std::string profile_url;
    std::string text;
    time_point at{};
    std::string kind = "network";    // network (V2 send) | messaging (POST /messages/send)
    std::string to{};                // messaging: the recipient's number, digits without '+'
};

} // namespace orch::sandbox
