// Typed requests and results of every endpoint and action of the Outreach API (spec
// /v2/..., /v1/..., /messages/send), plus the webhook event payload.
//
// Parsing is tolerant where the real service is inconsistent (api-facts 7): invitation ids as
// number or string (above 2^53, never through double), camelCase and snake_case spellings,
// timestamps with or without a zone or as epoch milliseconds, both shapes of post reactions,
// fields that are null or missing (empty string / nullopt). It is strict where a wrong value
// would mislead: such an answer becomes error_kind::malformed_response (see each parser).
//
// Every result keeps the raw `data` object in `raw`, so fields this header does not name are
// still reachable.
#pragma once

#include "engine/outreach/result.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orch::outreach {

using json = nlohmann::json;
using time_point = std::chrono::system_clock::time_point;

// ---------------------------------------------------------------------------------------------
// Common

// `metadata` of a V2 envelope. Absent fields stay empty.
struct call_metadata {
    std::string action;
    std::string account_id;
    std::optional<std::int64_t> credits_consumed; // strict: an integer >= 0 when present
    std::optional<time_point> timestamp;          // with or without Z, any fraction digits
};

// Base of V2 results: the envelope's metadata and the raw `data` object.
struct reply_base {
    call_metadata meta;
    json raw = json::object();
};

// Base of V1 results (`{status, data, message}`): the detail `message` and the raw `data`.
struct v1_reply_base {
    std::string status_message;
    json raw = json::object();
};

// Any V2 action whose result fields are not documented: the data object only.
struct action_reply : reply_base {};
// Any V1 call whose result fields are not documented.
struct v1_reply : v1_reply_base {};

// A person as lists show them (sender, recipient, participant).
struct person_ref {
    std::string name;        // full name (built from first/last when only those are sent)
    std::string first_name;
    std::string last_name;
    std::string headline;
    std::string profile_url; // profile_url | network_url
    std::string profile_picture_url; // profile_picture_url | profile_picture
};

// Offset pagination (list_invitations, list_sent, list_connections).
struct offset_pagination {
    std::optional<std::int64_t> offset;
    std::optional<std::int64_t> count;
    std::optional<std::int64_t> next_offset;
    std::optional<bool> has_more;
    std::optional<std::int64_t> results_per_page;
    std::optional<std::int64_t> pages_fetched;
};

// Page-range / cursor pagination (reactions, hiring companies).
struct page_pagination {
    std::optional<std::int64_t> start_page;
    std::optional<std::int64_t> end_page;
    std::optional<std::int64_t> results_per_page;
    std::optional<std::int64_t> pages_fetched;
    std::optional<bool> has_more;
    std::string next_cursor;
};

// ---------------------------------------------------------------------------------------------
// Accounts, login, checkpoint, credits

enum class platform { network, messaging };
std::string_view to_string(platform p);

// POST /v2/login: either login_token, or email + password.
struct login_params {
    outreach::platform platform = platform::network;
    std::string country;     // two-letter code
    std::string login_token;
    std::string email;
    std::string password;
};

struct login_result : reply_base {
    std::string account_id;           // strict: required, non-empty
    std::string status;               // "connected" | "checkpoint_required" (strict: required)
    std::string challenge_type;       // "code_challenge" | "app_challenge" when a checkpoint is required
    bool checkpoint_required() const { return status == "checkpoint_required"; }
};

// POST /v2/checkpoint. `code` is empty for an app_challenge.
struct checkpoint_params {
    std::string account_id;
    std::string code;
};

struct checkpoint_result : reply_base {
    std::string account_id;
    std::string status;
};

struct list_accounts_params {
    std::optional<std::int64_t> limit;  // 1..500, API default 50
    std::optional<std::int64_t> offset; // API default 0
};

struct account_info {
    std::string account_id;           // strict: required
    std::string platform;
    std::string account_name;
    std::optional<bool> is_active;
    std::string status;               // "active"/"inactive" (list) or "connected"/... (details)
    std::string country;
    std::optional<time_point> created_at;
    std::optional<time_point> updated_at;
    json raw = json::object();
};

struct accounts_page : reply_base {
    std::vector<account_info> items;
    std::optional<std::int64_t> total;
    std::optional<std::int64_t> limit;
    std::optional<std::int64_t> offset;
};

struct account_reply : reply_base {
    account_info account;
};

struct credits_result : reply_base {
    std::int64_t credits = 0;         // strict: an integer
};

// ---------------------------------------------------------------------------------------------
// Profiles (/v2/profiles)

struct experience_item {
    std::string company;
    std::string title;
    std::string description;
    std::string start_date;           // "M/YYYY"
    std::string end_date;             // empty when current
};

struct education_item {
    std::string school;
    std::string degree;
    std::string field_of_study;
    std::string start_date;
    std::string end_date;
};

struct profile_record {
    std::string public_id;            // public_id | public_identifier
    std::string first_name;
    std::string last_name;
    std::string headline;
    std::string location;
    std::string summary;
    std::string industry;
    std::string profile_url;          // profile_url | network_url
    std::string profile_urn;          // profile_urn | entity_urn | entityUrn
    std::string profile_picture_url;
    std::string email;                // empty when unavailable
    std::string phone;
    std::string website;
    std::optional<std::int64_t> member_distance;
    std::vector<experience_item> experience;
    std::vector<education_item> education;
    std::vector<std::string> skills;
    json raw = json::object();
};

struct profile_reply : reply_base {
    profile_record profile;
};

// get: exactly one of the three identifiers.
struct get_profile_params {
    std::string profile_url;
    std::string identifier;           // public id
    std::string profile_urn;
};

struct profile_url_params {
    std::string profile_url;
};

struct contact_info : reply_base {
    std::string email;
    std::string phone;
    std::string website;
    std::vector<std::string> emails;  // when the API lists several
    std::vector<std::string> phones;
};

struct visit_result : reply_base {
    std::string profile_url;
    std::optional<bool> visited;
};

// search_people (api-facts 2.1). Multi-value filters are arrays.
struct search_people_params {
    std::string keyword;
    std::string first_name;
    std::string last_name;
    std::string title;
    std::string company_name;
    std::vector<std::string> company_url;
    std::vector<std::string> past_company;
    std::vector<std::string> location;
    std::vector<std::string> school_url;
    std::vector<std::string> industry;
    std::vector<std::string> network;  // F, S, O
    std::string connection_of;
    std::string follower_of;
    std::optional<bool> fetch_invitation_state;
    std::optional<std::int64_t> total_results; // 1..50000, API default 10
    std::optional<std::int64_t> start_page;
    std::optional<std::int64_t> end_page;
    json extra = json::object();       // further params, merged as given
};

struct person_hit {
    std::string public_id;
    std::string first_name;
    std::string last_name;
    std::string headline;
    std::string location;
    std::string profile_picture_url;
    std::string profile_url;           // network_url | profile_url | url
    std::string invitation_state;      // vocabulary differs by version (CONNECTED, PENDING, CAN_INVITE, ...)
    std::optional<std::int64_t> member_distance;
    json raw = json::object();
};

struct people_page : reply_base {
    std::vector<person_hit> results;   // strict: an array when present
    std::optional<std::int64_t> total_results;
    std::optional<std::int64_t> total_available_results;
    // A server that caps the people per call (api-facts 2.1 shows no pagination object; V1 had
    // pages of 50 and has_next_page): whether more exist, and the page to continue from.
    std::optional<bool> has_more;
    std::optional<std::int64_t> next_start_page;
};

struct search_companies_params {
    std::string keyword;
    std::vector<std::string> location;
    std::vector<std::string> industry;
    std::vector<std::string> company_size;
    std::optional<std::int64_t> total_results;
    std::optional<std::int64_t> start_page;
    std::optional<std::int64_t> end_page;
    json extra = json::object();
};

// Company record (spec "Company record, detailed"; also the basic {url, title, description}).
struct company_record {
    std::string name;                  // name | title
    std::string universal_name;
    std::string description;
    std::string tagline;
    std::string website_url;
    std::string industry;
    std::optional<std::int64_t> employee_count;
    std::optional<std::int64_t> employee_range_start;
    std::optional<std::int64_t> employee_range_end; // nullopt: open-ended
    std::string headquarter_country;
    std::string headquarter_city;
    std::string logo_url;
    std::string organization_type;
    std::optional<std::int64_t> followers_count;
    std::optional<bool> verified;
    std::string company_url;           // company_url | url
    std::string network_url;           // info-by-domain only
    std::string searched_domain;       // info-by-domain only
    std::optional<bool> is_funded;     // funding.isFunded (enriched searches)
    std::optional<std::int64_t> funding_total_rounds;
    json raw = json::object();
};

struct companies_page : reply_base {
    std::vector<company_record> results;
    std::optional<std::int64_t> total_results;
    std::optional<std::int64_t> total_available_results;
};

struct company_params {
    std::string company_url;
};

struct company_reply : reply_base {
    company_record company;
};

// profiles/get_reactions (V2 replacement of V1 profile reactions): reactions made BY a profile.
struct profile_reactions_v2_params {
    std::string profile_url;
    std::optional<std::int64_t> count;
    std::string cursor;
};

struct profile_reaction {
    std::string reaction_id;
    std::string reaction_type;         // LIKE, CELEBRATE, ...
    std::string reaction_target;       // POST | COMMENT
    std::string reaction_time;         // relative ("8h")
    std::string reactor_profile_url;
    std::string post_urn;
    std::string post_url;
    std::string post_content;
    std::string post_author_name;
    std::string comment_content;
    json raw = json::object();
};

struct profile_reactions_page : reply_base {
    std::vector<profile_reaction> reactions;
    std::optional<std::int64_t> total_results;
    std::string profile_url;
    page_pagination pagination;
};

// ---------------------------------------------------------------------------------------------
// Network (/v2/network)

struct invite_params {
    std::string profile_url;           // or identifier
    std::string identifier;
    std::string message;               // optional note
};

struct invite_result : reply_base {
    std::string invitation_urn;
    std::optional<std::uint64_t> invitation_id; // when sent, or from the urn's digits
    std::string profile_urn;
    std::string first_name;
    std::string last_name;
    std::string headline;
    std::string public_identifier;
    std::string profile_picture_url;
};

enum class invitation_state { accepted, pending, no_invitation };
enum class invitation_type { none, connected, sent, received };
std::string_view to_string(invitation_state s);
std::string_view to_string(invitation_type t);

// check_invitation. Strict: invitation_state and invitation_type must be in their enums and
// invitation_id must be an exact unsigned integer (number or digit string) or null.
struct invitation_status : reply_base {
    invitation_state state = invitation_state::no_invitation;
    invitation_type type = invitation_type::none;
    std::optional<std::uint64_t> invitation_id;
    std::optional<std::int64_t> member_distance; // may be null
    std::string message;
};

struct withdraw_params {
    std::uint64_t invitation_id = 0;   // sent as a decimal string, as documented
};

struct withdraw_result : reply_base {
    bool withdrawn = true;             // strict: a boolean when present; absent counts as true (success envelope)
    std::optional<std::uint64_t> invitation_id;
};

struct list_invitations_params {
    std::optional<std::int64_t> count;
    std::optional<std::int64_t> offset;
    std::string invitation_type;       // CONNECTION (default), ORGANIZATION, CONTENT_SERIES
};

struct invitation_item {
    std::string entity_urn;
    std::string shared_secret;         // received invitations
    std::optional<std::uint64_t> invitation_id; // the field, or the urn's numeric tail
    std::string invitation_type;
    std::string sent_time;             // relative ("5d")
    std::optional<std::int64_t> sent_time_days;
    person_ref person;                 // sender (received) or recipient (sent)
    json raw = json::object();
};

struct invitations_page : reply_base {
    std::vector<invitation_item> invitations;
    std::optional<std::int64_t> total_results;
    std::optional<std::int64_t> total_available_results;
    offset_pagination pagination;
};

struct invitation_ref_params {
    std::string shared_secret;
    std::string entity_urn;
};

struct accept_result : reply_base {};

struct decline_result : reply_base {
    std::string status;
    std::string message;
};

struct list_connections_params {
    std::optional<std::int64_t> count;
    std::optional<std::int64_t> offset;
};

struct connection_item {
    person_ref person;
    std::string job_title;
    std::optional<time_point> connected_at;
    json raw = json::object();
};

struct connections_page : reply_base {
    std::vector<connection_item> connections;
    std::optional<std::int64_t> total_results;
    std::optional<std::int64_t> total_available_results;
    offset_pagination pagination;
};

struct recommendations_params {
    std::optional<std::int64_t> count;
};

// ---------------------------------------------------------------------------------------------
// Messages (/v2/messages)

struct media_file {
    std::string filename;
    std::string data_base64;
};

// send: one media at most is used, in the priority media_link > media_file > media_path.
struct send_message_params {
    std::string profile_url;
    std::string message_text;
    std::string media_link;
    std::optional<outreach::media_file> media_file;
    std::string media_path;
    bool has_media() const { return !media_link.empty() || media_file.has_value() || !media_path.empty(); }
};

struct send_message_result : reply_base {
    std::string entity_urn;            // entityUrn | entity_urn
    std::string conversation_id;
    std::optional<time_point> delivered_at; // deliveredAt: ISO string or epoch-ms integer
};

struct list_inbox_params {
    std::optional<std::int64_t> count;
    std::string category;
    std::string cursor;
};

struct inbox_conversation {
    std::string conversation_id;
    person_ref participant;
    std::string last_message_text;
    std::optional<time_point> last_message_at;
    std::string last_message_sender_name;
    std::optional<bool> last_message_from_me;
    std::optional<std::int64_t> unread;
    std::string type;
    json raw = json::object();
};

struct inbox_page : reply_base {
    std::vector<inbox_conversation> conversations;
    std::optional<std::int64_t> total_results;
    std::string next_cursor;
};

struct get_conversation_params {
    std::string conversation_id;       // or profile_url
    std::string profile_url;
    std::optional<std::int64_t> count;
    std::string cursor;
};

struct conversation_message {
    std::string text;
    std::optional<time_point> at;      // timestamp: epoch ms or ISO
    std::string sender_name;
    std::string sender_profile_url;
    std::string message_type;          // TEXT, SYSTEM
    std::string entity_urn;
    std::optional<bool> from_me;
    json raw = json::object();
};

struct conversation_page : reply_base {
    std::optional<std::int64_t> total_message_count;
    std::optional<std::int64_t> unread_count;
    std::optional<time_point> last_seen_at;
    std::vector<conversation_message> messages; // newest first, as the API sends them
    std::string next_cursor;
};

// ---------------------------------------------------------------------------------------------
// Content (/v2/content). Parameters beyond create_company are not documented: each struct has
// the obvious target fields plus `extra`, merged into params as given.

// A file: a URL, or {filename, data (base64)}.
struct post_file {
    std::string url;
    std::string filename;
    std::string data_base64;
    std::string alt_text;              // only for items of `files`
};

struct create_post_params {
    std::string message;
    std::optional<post_file> file;
    std::optional<post_file> thumbnail;
    std::vector<post_file> files;
    json extra = json::object();
};

struct create_company_post_params {
    std::string company_url;           // required
    std::string message;
    std::optional<post_file> file;
    std::optional<post_file> thumbnail;
    std::vector<post_file> files;
    json extra = json::object();
};

struct post_created : reply_base {
    std::string post_url;
    std::string post_urn;
};

struct content_search_params {
    std::string keyword;
    std::optional<std::int64_t> total_results;
    json extra = json::object();
};

struct feed_params {
    std::optional<std::int64_t> count;
    json extra = json::object();
};

struct post_target_params {
    std::string post_url;
    json extra = json::object();
};

struct react_params {
    std::string post_url;
    std::string reaction_type;         // LIKE, CELEBRATE, SUPPORT, ...
    json extra = json::object();
};

struct comment_params {
    std::string post_url;
    std::string message;
    json extra = json::object();
};

struct answer_comment_params {
    std::string post_url;
    std::string comment_urn;
    std::string message;
    json extra = json::object();
};

struct post_list_params {
    std::string post_url;
    std::optional<std::int64_t> total_results;
    std::optional<std::int64_t> start_page;
    std::optional<std::int64_t> end_page;
    json extra = json::object();
};

struct time_spent_params {
    std::string post_url;
    std::optional<std::int64_t> duration_s;
    json extra = json::object();
};

// A reaction ON a post, in either documented shape: {reaction_type, created_time, actor{...}}
// or the flat sample {type, name, subtitle, profile_url, actor_urn}.
struct post_reaction {
    std::string reaction_type;
    std::string created_time;
    std::string name;
    std::string profile_url;
    std::string profile_picture;
    std::string title;                 // actor.title | subtitle
    std::string connection_degree;
    std::string actor_urn;
    json raw = json::object();
};

struct post_reactions_page : reply_base {
    std::vector<post_reaction> reactions;
    std::optional<std::int64_t> total_results;
    std::optional<std::int64_t> total_available_results;
    page_pagination pagination;
};

// ---------------------------------------------------------------------------------------------
// Recruiter (/v2/recruiter) and mail (/v2/mail or /v2/enrich): parameters not documented.

struct recruiter_params {
    std::string job_id;                // get_candidates, close_job
    std::string profile_url;           // get_cv
    json extra = json::object();
};

struct publish_job_params {
    std::string title;
    std::string company;
    std::string location;
    std::string description;
    json extra = json::object();
};

struct find_email_params {
    std::string first_name;
    std::string last_name;
    std::string company_name;          // or domain
    std::string domain;
    json extra = json::object();
};

struct email_params {
    std::string email;
    json extra = json::object();
};

struct email_lookup : reply_base {
    std::string email;
    std::optional<bool> valid;
    std::string status;
    std::string profile_url;           // reverse lookup
};

// ---------------------------------------------------------------------------------------------
// V2 webhooks

struct webhook_create_params {
    std::string account_id;
    std::string url;                   // empty: hosted mode (stream + polling)
    std::vector<std::string> events;   // message_received, accepted_invitation, all (API default all)
    bool enable_signature = false;     // custom mode only
};

struct webhook_info {
    std::string webhook_id;            // webhook_id | id (strict: required)
    std::string account_id;
    std::string url;
    std::vector<std::string> events;
    std::optional<bool> is_active;
    std::optional<bool> signature_enabled;
    std::string stream_url;
    std::string events_url;
    json raw = json::object();
};

struct webhook_created : reply_base {
    webhook_info webhook;
    std::string secret;                // shown once, when signing is on
};

struct webhook_reply : reply_base {
    webhook_info webhook;
};

struct webhook_list : reply_base {
    std::vector<webhook_info> webhooks;
};

struct webhook_update_params {
    std::optional<std::string> url;
    std::optional<std::vector<std::string>> events;
    std::optional<bool> is_active;
};

struct webhook_monitoring : reply_base {
    std::string webhook_id;
    std::string account_id;
    std::optional<bool> monitoring;
};

struct rotated_secret : reply_base {
    std::string webhook_id;
    std::string secret;                // strict: required
    std::string signature_scheme;
};

// The payload of a webhook event (api-facts 1.2-1.5), tolerant of the documented shape and of
// the third-party shapes (event.data.*, event.sender.*, event.new_connections[]).
enum class event_type { message, accepted_invitation, disconnection, unknown };
std::string_view to_string(event_type t);

struct new_connection {
    std::string profile_url;
    std::string public_identifier;
    std::string first_name;
    std::string last_name;
    std::string name;
    std::optional<std::uint64_t> invitation_id;
};

struct webhook_event {
    std::string account_id;
    std::string account_name;
    std::optional<time_point> timestamp;   // when the API emitted it
    std::optional<time_point> occurred_at; // event.timestamp: when it happened on the platform
    event_type type = event_type::unknown;
    std::string type_name;                 // the type as sent (event.type, type, event, ...)
    std::string event_id;                  // the body's own id (event_id / id), empty when none
    // message
    std::string message_text;
    std::string sender_name;
    std::string sender_profile_url;
    std::string conversation_id;
    std::string message_id;
    std::optional<time_point> delivered_at;
    // accepted_invitation: one or more
    std::vector<new_connection> connections;
    // disconnection
    std::string reason;
    json raw = json::object();             // the whole wrapper

    // When it happened as the event says: its own time, else the wrapper's; none when neither.
    std::optional<time_point> happened_at() const { return occurred_at ? occurred_at : timestamp; }
};

// Parses a webhook delivery body / an SSE event's data / a polled item's `event`, in any known
// envelope (see parse_event_wrapper in detail/parse.cpp). Malformed: not a JSON object, no type
// anywhere, or an acceptance that names nobody.
result<webhook_event> parse_webhook_event(std::string_view raw_body);
result<webhook_event> parse_webhook_event(const json& wrapper);

struct poll_events_params {
    std::string since;                 // ISO 8601; empty: from the start of retention
    std::string after;                 // an event_id: only later events (sandbox and third-party clients)
    std::string cursor;                // a previous page's next_cursor (opaque or numeric)
    std::optional<std::int64_t> limit; // 1..200, API default 50
};

struct polled_event {
    std::string event_id;              // strict: required
    std::optional<time_point> created_at;
    webhook_event event;
};

struct events_page : reply_base {
    std::vector<polled_event> items;   // oldest first
    std::optional<bool> has_more;
    std::string next_after;            // the last item's event_id, for the next poll's `after`
    std::string next_cursor;           // next_cursor as text (a string or an integer); "" when none
    // Items whose event could not be read: kept raw, with the reason, for the quarantine.
    struct unreadable {
        std::string event_id;
        std::string reason;
        json raw;
    };
    std::vector<unreadable> unreadable_items;
};

// One message of the SSE stream (GET /v2/webhooks/{id}/stream).
struct stream_event {
    std::string name;                  // SSE `event:` ("connected", "webhook", ...); "message" when absent
    std::string id;                    // SSE `id:`; empty when the server sends none
    // Whether the event had an `id:` line of its own. Without one, `id` is the last id the
    // stream knew (SSE keeps it: an earlier event's, or the Last-Event-ID the stream resumed
    // from), which names no event of its own: a stream that never sends ids gives every event
    // the resumed position.
    bool id_sent = false;
    std::string data;                  // joined `data:` lines
    // Parsed for every event but `connected`, whether named `webhook` or after its type; when
    // the data is not a readable event, `event` is empty and `problem` says why.
    std::optional<webhook_event> event;
    std::string problem;
};

// ---------------------------------------------------------------------------------------------
// V1 data endpoints ({status, data})

struct company_info_params {
    std::string company_url;
};

struct company_domain_params {
    std::string domain;
};

struct company_v1_reply : v1_reply_base {
    company_record company;
};

struct data_company_search_params {
    std::string keyword;               // required
    std::vector<std::string> industry;
    std::vector<std::string> location;
    std::vector<std::string> employee_range;
    std::optional<std::int64_t> total_results; // 1..50000, default 10
    std::optional<bool> enrich;
};

struct data_company_search_result : v1_reply_base {
    std::optional<std::int64_t> total_results; // all matches
    std::vector<company_record> companies;     // basic {url, title, description} or detailed
    std::optional<bool> enriched;
    std::optional<bool> funded_only;           // funded search
};

struct data_profile_search_params {
    std::vector<std::string> keyword;
    std::vector<std::string> job_title;
    std::vector<std::string> industry;
    std::vector<std::string> school;
    std::vector<std::string> location;
    std::vector<std::string> current_company;
    std::optional<std::int64_t> total_results;
};

struct search_hit {
    std::string url;
    std::string title;
    std::string description;
};

struct data_profile_search_result : v1_reply_base {
    std::optional<std::int64_t> total_results;
    std::vector<search_hit> profiles;
};

struct enrich_profile_params {
    std::string first_name;
    std::string last_name;
    std::string company_name;
};

struct profile_enrichment : v1_reply_base {
    std::string searched_first_name;
    std::string searched_last_name;
    std::string searched_company_name;
    bool found = false;                // network_profile present
    std::string network_url;
    std::string profile_title;
    std::string profile_description;
    std::optional<profile_record> full_profile;
};

struct profile_reactions_params {
    std::string profile_url;
    std::string proxy_country;         // default FR
    std::optional<std::int64_t> total_results;
    std::optional<std::int64_t> start_page;
    std::optional<std::int64_t> end_page;
    std::string cursor;
};

struct profile_reactions_result : v1_reply_base {
    std::vector<profile_reaction> reactions;
    std::optional<std::int64_t> total_results;
    std::string profile_url;
    std::string entity_urn;
    std::string profile_urn;
    page_pagination pagination;
};

struct post_reactions_params {
    std::string post_url;
    std::string login_token;
    std::string country;               // default FR
    std::optional<std::int64_t> total_results; // ignored in pagination mode
    std::optional<std::int64_t> start_page;
    std::optional<std::int64_t> end_page;
};

struct post_reactions_result : v1_reply_base {
    std::vector<post_reaction> reactions;
    std::optional<std::int64_t> total_results;
    std::optional<std::int64_t> total_available_results;
    page_pagination pagination;
};

struct job_filter {
    std::vector<std::string> job_title;
    std::optional<bool> job_title_include_all;
    std::vector<std::string> job_title_excluded;
    std::string location;
    std::optional<bool> is_remote;
    std::string job_type;              // fulltime, parttime, internship, contract
    std::optional<std::int64_t> hours_old;
    std::optional<std::int64_t> total_results;
    std::optional<bool> fetch_description; // API default true
    std::optional<bool> enrich_company;    // API default false
    std::optional<std::int64_t> start_page;
    std::optional<std::int64_t> end_page;
};

struct hiring_companies_params {
    job_filter filter;
    json job_description = nullptr;    // type not stated: passed as given when not null
    std::string country;               // default france
    std::vector<std::string> site_names; // board_network, board_general
};

struct company_jobs_params {
    std::vector<std::string> company_names; // required
    job_filter filter;
};

struct job_posting {
    std::string job_title;
    std::string location;
    std::string job_type;
    std::string job_seniority;
    std::string job_board;
    std::string job_board_url;
    std::string date_posted;
    std::optional<std::string> description; // null when descriptions are off
    std::optional<bool> is_remote;
    std::optional<double> salary_min;
    std::optional<double> salary_max;
    std::string salary_currency;
    std::vector<std::string> sectors;
    json raw = json::object();
};

struct hiring_company {
    std::string name;
    std::string website;
    std::string network_url;
    std::string indeed_url;
    std::string tagline;
    std::string description;
    std::string industry;
    std::optional<std::int64_t> employee_count;
    std::optional<std::int64_t> followers_count;
    std::optional<std::int64_t> jobs_count;
    std::vector<job_posting> jobs;
    json raw = json::object();
};

struct hiring_companies_result : v1_reply_base {
    std::vector<hiring_company> companies;
    page_pagination pagination;        // top-level `pagination`
    std::optional<std::int64_t> credits_cost;
    std::optional<std::int64_t> credits_remaining;
    std::optional<std::int64_t> nb_companies;
    std::optional<std::int64_t> nb_jobs;
};

// ---------------------------------------------------------------------------------------------
// Messaging send (POST /messages/send) and V1 webhook accounts

struct messaging_quote {
    std::string message_id;
    std::string text;
    std::int64_t timestamp_ms = 0;
    bool from_me = false;
};

struct messaging_send_params {
    std::string account_id;
    std::string to;                    // international number without '+'
    std::string message;
    std::optional<messaging_quote> quote; // all four quoted_* fields go together
};

struct messaging_send_result : v1_reply_base {
    std::string status;
};

struct webhook_account_create_params {
    outreach::platform platform = platform::network;
    std::string account_name;
    std::string webhook_url;
    std::string login_token;           // network
    std::string phone_number;          // messaging
    std::string qr_webhook_url;        // messaging, defaults to webhook_url
    std::string country;
};

struct webhook_account {
    std::string id;                    // strict: required
    std::string platform;              // platform | plateforme
    std::string account_name;
    std::string webhook_url;
    std::optional<bool> is_active;
    std::optional<bool> is_authenticated;
    std::optional<bool> needs_qr;
    std::string country;
    std::string login_token;
    std::string phone_number;
    std::string qr_webhook_url;
    std::optional<time_point> created_at;
    std::optional<time_point> updated_at;
    json raw = json::object();
};

struct webhook_account_reply : v1_reply_base {
    webhook_account account;
};

struct webhook_account_list : v1_reply_base {
    std::vector<webhook_account> accounts;
};

struct webhook_account_update_params {
    std::optional<std::string> account_name;
    std::optional<std::string> webhook_url;
    std::optional<std::string> qr_webhook_url;
    std::optional<std::string> login_token;
    std::optional<std::string> country;
};

struct webhook_account_stopped : v1_reply_base {
    std::string account_id;
    std::optional<bool> is_active;
};

} // namespace orch::outreach
