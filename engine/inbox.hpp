// orch::engine inbox: the replies inbox (migration 0018), shared by the admin API (/v1/inbox), the
// dashboard's Inbox page and the CLI (`orchestrator inbox list|show|reply|mark`).
//
// A reply is a `message` event of the intake (engine/intake.hpp), shown with the campaign of the
// lead's enrollment on the receiving account. Its conversation is what the engine knows of it:
// the lead's messages (events) and ours (sends that went out, step calls and manual replies).
//
// Answering: request_reply() writes a manual reply's durable intent, unique per idempotency key
// (the client's, else one derived from the event and the text, so the same answer to the same
// reply asked twice is one reply). It refuses, changing nothing, a reply that names no campaign
// lead, a person or company on the do-not-contact list, a cancelled campaign and an unavailable
// (disconnected) account. `serve` sends it (engine/inbox_sender.hpp) with a step's guarantees.
//
// Marking a reply "not interested" puts the person on the do-not-contact list (engine/dnc.hpp,
// which also stops their live leads) and records the mark on the reply.
#pragma once

#include "engine/config.hpp"

#include <nlohmann/json.hpp>
#include <pqxx/connection>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace orch::engine::inbox {

using json = nlohmann::json;

inline constexpr std::size_t text_max = 8000;  // characters of a manual reply (the API documents none)
inline constexpr std::size_t key_max = 200;    // bytes of a client's idempotency key
inline constexpr const char* not_interested_reason = "not interested (inbox reply)";

struct list_filter {
    std::string campaign;  // "" for any
    std::string account;   // "" for any
    std::int64_t cursor = 0;  // an event id: replies older than it (0: from the newest)
    std::int64_t limit = 50;
};

// {"replies": [...], "next_cursor": id or null}. Throws store_error.
json list(pqxx::connection& conn, const list_filter& f);

// {"reply": ..., "conversation": [...], "manual_replies": [...]}; nullopt: no such reply.
std::optional<json> show(pqxx::connection& conn, std::int64_t event_id);

// The conversation as the API has it (get_conversation, newest 100 messages, oldest first): what
// was written outside the engine too. The call takes the key's request bucket and honours the
// cooldowns (limits::limiter, as serve's own calls do) and is charged to the campaign of the
// reply's lead (ledger::charge); a reply of no campaign lead is refused (nothing to bill). Runs
// the call on an io_context of its own: blocking, bounded by api_timeout_ms.
struct live_outcome {
    int status = 200;        // 200, 404 (no such reply), 409 (no campaign lead), 503 (rate, API)
    std::string message;     // when not 200
    json conversation = json::array();
    std::int64_t credits = 0;
};
live_outcome live_conversation(pqxx::connection& conn, const settings& cfg, std::int64_t event_id);

// One manual reply as the API shows it; nullopt: none.
std::optional<json> get_reply(pqxx::connection& conn, std::int64_t reply_id);

struct reply_request {
    std::int64_t event_id = 0;
    std::string text;
    std::string idempotency_key;  // "" to derive one from the event and the text
    std::string requested_by;
};

// What is wrong with a request's own fields ("" when nothing), naming the field.
std::string check(const reply_request& r);

// The key a request is stored under.
std::string key_of(const reply_request& r);

struct reply_outcome {
    enum class kind { created, existing, not_found, conflict } what = kind::created;
    std::string message;  // not_found, conflict: why (nothing changed)
    json reply;           // created, existing: the manual reply
};

// Writes the intent (precondition: check(r) is ""). Throws store_error.
reply_outcome request_reply(pqxx::connection& conn, const reply_request& r);

struct mark_outcome {
    bool found = false;
    std::string message;          // !found, or a refusal (a reply that names no person)
    bool added = false;           // a new do-not-contact entry (false: the person was listed)
    std::int64_t entry_id = 0;
    std::int64_t stopped = 0;     // live leads stopped
    std::int64_t in_flight = 0;   // in a call, stopped by their worker
};

// Marks a reply "not interested": the sender's profile on the do-not-contact list, the mark on
// the reply. Throws store_error.
mark_outcome mark_not_interested(pqxx::connection& conn, std::int64_t event_id, const std::string& by);

// ---- the REST side (/v1/inbox), run on a database thread of the admin endpoint ----

struct rest_reply {
    int status = 200;
    json body;
    std::string allow;  // 405: the methods the path takes
};

// GET  /v1/inbox?campaign=&account=&cursor=&limit=
// GET  /v1/inbox/{event_id}[?live=true]   live: the conversation read from the API (see above)
// POST /v1/inbox/{event_id}/reply   {"text", "idempotency_key"?, "requested_by"?} (or the
//                                   Idempotency-Key header): 202 queued, 200 an existing reply
// POST /v1/inbox/{event_id}/mark    {"mark": "not_interested", "by"?}
// GET  /v1/manual-replies/{id}           one manual reply (poll it after a 202)
// `seg` are the path's segments from "v1" (v1 inbox ... or v1 manual-replies ID); bad input throws engine::bad_request (400) or
// engine::unprocessable (422).
// `cfg`: the live read's API and Redis settings (GET /v1/inbox/{id}?live=true).
rest_reply handle(pqxx::connection& conn, const settings& cfg, const std::string& method, const std::vector<std::string>& seg,
                  const std::map<std::string, std::string>& params, const std::string& body,
                  const std::string& idempotency_header);

}  // namespace orch::engine::inbox
