#include "engine/inbox.hpp"
#include "engine/executor.hpp"
#include "engine/secret_box.hpp"

#include "api/text.hpp"
#include "engine/admin_input.hpp"
#include "engine/config.hpp"
#include "engine/dnc.hpp"
#include "engine/ledger.hpp"
#include "engine/limits/limits.hpp"
#include "engine/limits_gate.hpp"
#include "engine/outreach/client.hpp"
#include "engine/time_format.hpp"
#include "engine/outreach/types.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"

#include <openssl/evp.h>
#include <pqxx/pqxx>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <charconv>
#include <limits>

namespace orch::engine::inbox {

using admin_input::bad_request;
using admin_input::unprocessable;
using admin_input::int_param;
using admin_input::required_object_body;

namespace {

std::string q(std::string_view name) { return std::string(schema::query(name)); }

json opt_text(const pqxx::field& f) { return f.is_null() ? json(nullptr) : json(f.as<std::string>()); }

bool campaign_exists(pqxx::connection& conn, const std::string& name) {
    return guarded("campaigns/exists", [&] {
        pqxx::nontransaction tx(conn);
        return tx.exec_params1(q("campaigns/exists"), name)[0].as<bool>();
    });
}


// What a stored message event says: its text, sender's name and when it was written, as the API
// gave it (the event's time, else its wrapper's; for a message the catch-up sweep found, the
// inbox's), parsed as the intake read it. `written_at` is null when the event gives no time.
struct message_view {
    std::string text;
    std::string sender_name;
    json written_at = nullptr;
    json conversation_id = nullptr;  // the conversation the API named, when it did
};
// A message stored this long after it was written was found late (a catch-up sweep after a gap):
// the conversation places it by when it was written (the dashboard says "written …" of it, by
// the same minute).
constexpr auto late_stored = std::chrono::minutes(1);

// Whether a message written at `written_at` (an ISO time, or null) and stored at `stored` was
// stored late_stored after it was written: the inbox's `written_late`, which the CLI and the
// dashboard say "written …" by (the rule lives here only).
bool written_late(const json& written_at, std::chrono::system_clock::time_point stored) {
    if (!written_at.is_string()) {
        return false;
    }
    const auto written = parse_iso8601(written_at.get<std::string>());
    return written && *written + late_stored < stored;
}

message_view message_of(const std::string& payload) {
    message_view m;
    auto ev = outreach::parse_webhook_event(std::string_view(payload));
    if (ev) {
        m.text = ev->message_text;
        m.sender_name = ev->sender_name;
        if (!ev->conversation_id.empty()) {
            m.conversation_id = ev->conversation_id;
        }
        if (auto at = ev->happened_at()) {
            m.written_at = iso8601_ms(*at);
        }
    }
    return m;
}

// A reply as listed: the columns of inbox/list and inbox/event (0..7) and the two counts.
json reply_summary(const pqxx::row& r) {
    auto m = message_of(r[3].as<std::string>());
    json j = {{"id", r[0].as<std::int64_t>()},
              {"account_id", r[1].as<std::string>()},
              {"received_at", r[2].as<std::string>()},
              {"written_at", m.written_at},
              {"written_late", written_late(m.written_at, parse_iso8601(r[2].as<std::string>())
                                                              .value_or(std::chrono::system_clock::time_point{}))},
              {"text", m.text},
              {"sender_name", m.sender_name},
              {"conversation_id", m.conversation_id},
              {"mark", opt_text(r[4])},
              {"lead_id", r[5].as<std::int64_t>() > 0 ? json(r[5].as<std::int64_t>()) : json(nullptr)},
              {"profile_url", r[6].as<std::string>().empty() ? json(nullptr) : json(r[6].as<std::string>())},
              {"campaign", r[7].as<std::string>().empty() ? json(nullptr) : json(r[7].as<std::string>())}};
    return j;
}

json reply_json(const pqxx::row& r) {
    return {{"id", r[0].as<std::int64_t>()},
            {"idempotency_key", r[1].as<std::string>()},
            {"reply_to", r[2].as<std::int64_t>()},
            {"account_id", r[3].as<std::string>()},
            {"campaign", r[4].as<std::string>()},
            {"lead_id", r[5].as<std::int64_t>()},
            {"profile_url", r[6].as<std::string>()},
            {"text", r[7].as<std::string>()},
            {"state", r[8].as<std::string>()},
            {"reason", r[9].as<std::string>()},
            {"tries", r[10].as<std::int64_t>()},
            {"credits", r[11].as<std::int64_t>()},
            {"requested_by", r[12].as<std::string>()},
            {"created_at", r[13].as<std::string>()},
            {"sent_at", opt_text(r[14])},
            {"finished_at", opt_text(r[15])},
            {"not_before", r[16].as<std::string>()}};
}

std::optional<json> reply_by_id(pqxx::transaction_base& tx, std::int64_t id) {
    auto r = tx.exec_params(q("inbox/reply"), id);
    if (r.empty()) {
        return std::nullopt;
    }
    return reply_json(r[0]);
}

}  // namespace

json list(pqxx::connection& conn, const list_filter& f) {
    return guarded("inbox/list", [&] {
        pqxx::nontransaction tx(conn);
        json items = json::array();
        std::int64_t last = 0;
        auto rows = tx.exec_params(q("inbox/list"), f.campaign, f.account, f.cursor, f.limit + 1);
        for (const auto& r : rows) {
            if (static_cast<std::int64_t>(items.size()) == f.limit) {
                break;
            }
            json j = reply_summary(r);
            j["manual_replies"] = r[8].as<std::int64_t>();
            j["last_reply_state"] = r[9].as<std::string>().empty() ? json(nullptr) : json(r[9].as<std::string>());
            last = r[0].as<std::int64_t>();
            items.push_back(std::move(j));
        }
        json next = static_cast<std::int64_t>(rows.size()) > f.limit ? json(last) : json(nullptr);
        return json{{"replies", items}, {"next_cursor", next}};
    });
}

std::optional<json> show(pqxx::connection& conn, std::int64_t event_id) {
    return guarded("inbox/show", [&]() -> std::optional<json> {
        pqxx::read_transaction tx(conn);
        auto ev = tx.exec_params(q("inbox/event"), event_id);
        if (ev.empty() || ev[0][15].as<std::string>() != "message") {
            return std::nullopt;
        }
        const auto& e = ev[0];
        json reply = reply_summary(e);
        reply["marked_by"] = e[16].as<std::string>().empty() ? json(nullptr) : json(e[16].as<std::string>());
        reply["marked_at"] = opt_text(e[17]);
        // Stored unread with no lead, and stored again by the catch-up sweep under its lead.
        reply["copy_of"] = e[18].as<std::int64_t>() > 0 ? json(e[18].as<std::int64_t>()) : json(nullptr);
        reply["campaign_state"] = e[10].as<std::string>().empty() ? json(nullptr) : json(e[10].as<std::string>());
        reply["account_connected"] = e[11].as<bool>();
        json conversation = json::array();
        const auto lead = e[5].as<std::int64_t>();
        if (lead == 0) {
            // No lead to read the stored conversation of: the message itself (it printed nothing, a
            // trial).
            conversation.push_back({{"direction", "in"},
                                    {"at", reply["received_at"]},
                                    {"text", reply["text"]},
                                    {"event_id", event_id},
                                    {"written_at", reply["written_at"]},
                                    {"written_late", reply["written_late"]}});
        }
        if (lead > 0) {
            // Ordered by when each was stored (the API's times may have whole seconds only, and
            // come from another clock than our sends'), but a message of theirs stored more than
            // late_stored after it was written (found by a catch-up sweep after a gap) by when it
            // was written: after ours that answered it, it read as a reply to ours.
            std::vector<std::pair<std::chrono::system_clock::time_point, json>> items;
            for (const auto& m : tx.exec_params(q("inbox/conversation"), lead, e[1].as<std::string>())) {
                const bool in = m[0].as<std::string>() == "in";
                json item = {{"direction", in ? "in" : "out"}, {"at", m[2].as<std::string>()}};
                auto at = parse_iso8601(m[2].as<std::string>()).value_or(std::chrono::system_clock::time_point{});
                if (in) {
                    auto v = message_of(m[1].as<std::string>());
                    item["text"] = v.text;
                    item["event_id"] = m[5].as<std::int64_t>();
                    item["written_at"] = v.written_at;
                    item["written_late"] = written_late(v.written_at, at);
                    if (item["written_late"].get<bool>()) {
                        at = *parse_iso8601(v.written_at.get<std::string>());
                    }
                } else {
                    item["text"] = m[1].as<std::string>();
                    item["step"] = m[4].as<std::string>();
                }
                items.emplace_back(at, std::move(item));
            }
            std::stable_sort(items.begin(), items.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
            for (auto& [at, item] : items) {
                conversation.push_back(std::move(item));
            }
        }
        json manual = json::array();
        for (const auto& r : tx.exec_params(q("inbox/replies_of"), event_id)) {
            if (auto j = reply_by_id(tx, r[0].as<std::int64_t>())) {
                manual.push_back(std::move(*j));
            }
        }
        return json{{"reply", reply}, {"conversation", conversation}, {"manual_replies", manual}};
    });
}

live_outcome live_conversation(pqxx::connection& conn, const settings& cfg, std::int64_t event_id) {
    live_outcome out;
    std::string account, profile, campaign_name;
    std::int64_t campaign_id = 0;
    guarded("inbox/live", [&] {
        pqxx::nontransaction tx(conn);
        auto ev = tx.exec_params(q("inbox/event"), event_id);
        if (ev.empty() || ev[0][15].as<std::string>() != "message") {
            out.status = 404;
            out.message = "no such reply: " + std::to_string(event_id);
            return 0;
        }
        account = ev[0][1].as<std::string>();
        profile = ev[0][6].as<std::string>();
        campaign_name = ev[0][7].as<std::string>();
        campaign_id = ev[0][9].as<std::int64_t>();
        return 0;
    });
    if (out.status != 200) {
        return out;
    }
    if (campaign_id == 0 || profile.empty()) {
        out.status = 409;
        out.message = "reply " + std::to_string(event_id) + " is from no campaign lead: reading its conversation has no "
                      "budget to charge";
        return out;
    }
    // The read is charged without a reservation, at up to its most (100 messages: 10 credits):
    // it is made only when the campaign has that much left in its budget, today's day cap and its
    // cap on the account, so that it cannot go past them. Before, it read and billed a campaign
    // with nothing left (a trial).
    const std::int64_t most =
        outreach::estimate_v2("messages", "get_conversation", outreach::json{{"count", 100}}).credits;
    std::int64_t left = 0;
    guarded("inbox/live", [&] {
        pqxx::read_transaction tx(conn);
        left = ledger::read_allowance(tx, campaign_id, account, std::chrono::system_clock::now());
        return 0;
    });
    if (left < most) {
        out.status = 409;
        out.message = "campaign " + campaign_name + " has " + std::to_string(left < 0 ? 0 : left) +
                      (left == 1 ? " credit" : " credits") + " left in its budget or caps, and reading the "
                      "conversation may cost up to " + std::to_string(most) + ": not read (raise it with `budget set`)";
        return out;
    }
    // The key's request bucket and the cooldowns, as serve's own calls take them.
    limits::limiter limiter(limiter_settings(cfg));
    limits::check c;
    c.account_id = account;
    c.what = limits::action::get_conversation;
    c.day = limits::day_in_zone(std::chrono::system_clock::now(), "UTC").value_or(limits::local_day{});
    auto v = limiter.take(c);
    if (!v.allowed && v.why != limits::reason::bad_input) {
        out.status = 503;
        out.message = std::string("the API's rate limit holds the read (") + std::string(limits::to_string(v.why)) +
                      "): try again in " + std::to_string((v.retry_after.count() + 999) / 1000) + " s";
        return out;
    }
    boost::asio::io_context io;
    auto made = outreach::client::make(io.get_executor(), api_client_settings(cfg, 1));
    if (!made) {
        out.status = 503;
        out.message = "the API is not configured: " + outreach::describe(made.error());
        return out;
    }
    auto api = std::move(*made);
    outreach::get_conversation_params p;
    p.profile_url = profile;
    p.count = 100;  // `most` above is this read's
    auto call = [&]() -> boost::asio::awaitable<outreach::result<outreach::conversation_page>> {
        co_return co_await api.get_conversation(account, p);
    };
    auto fut = boost::asio::co_spawn(io, call(), boost::asio::use_future);
    io.run();
    auto r = fut.get();
    api.shutdown();
    if (!r && r.error().what_to_do == outreach::disposition::give_up) {
        return out;  // no conversation with the person (yet): nothing to show, nothing charged
    }
    if (!r) {
        if (r.error().code == "RATE_LIMITED") {
            std::optional<std::chrono::milliseconds> ra;
            if (r.error().retry_after_s) {
                ra = std::chrono::seconds(*r.error().retry_after_s);
            }
            (void)limiter.rate_limited(c, limits::scope::key, ra);
        }
        out.status = 503;
        out.message = "the API did not give the conversation: " + outreach::describe(r.error());
        if (r.error().may_have_been_charged) {
            // Its answer was lost after it reached the API, which most likely billed it: booked
            // at its most, as every lost read is, so that the budget counts it.
            guarded("inbox/live", [&] {
                pqxx::work tx(conn);
                ledger::charge(tx, {campaign_id, account, "get_conversation", most}, std::chrono::system_clock::now());
                tx.commit();
                return 0;
            });
            out.credits = most;
            out.message += " (its answer was lost after the request was sent: booked at its most, " +
                           std::to_string(most) + (most == 1 ? " credit)" : " credits)");
        }
        return out;
    }
    if (v.key_streak || v.account_streak) {
        limiter.succeeded(c, v);
    }
    out.credits = r->meta.credits_consumed.value_or(0);
    if (out.credits > 0) {
        guarded("inbox/live", [&] {
            pqxx::work tx(conn);
            ledger::charge(tx, {campaign_id, account, "get_conversation", out.credits}, std::chrono::system_clock::now());
            tx.commit();
            return 0;
        });
    }
    // Newest first from the API: shown oldest first, as the stored conversation.
    for (auto it = r->messages.rbegin(); it != r->messages.rend(); ++it) {
        json m = {{"direction", it->from_me.value_or(false) ? "out" : "in"},
                  {"at", it->at ? json(iso8601_ms(*it->at)) : json(nullptr)},
                  {"text", it->text},
                  {"sender", it->sender_name}};
        out.conversation.push_back(std::move(m));
    }
    return out;
}

std::optional<json> get_reply(pqxx::connection& conn, std::int64_t reply_id) {
    return guarded("inbox/reply", [&] {
        pqxx::nontransaction tx(conn);
        return reply_by_id(tx, reply_id);
    });
}

std::string check(const reply_request& r) {
    // Every field's problem (the first of each), in one message.
    admin_input::problems found;
    const auto add = [&found](std::string p) { found.add(std::move(p)); };
    if (r.event_id <= 0) {
        add("the reply id must be a positive integer");
    }
    add([&r]() -> std::string {
        if (auto p = orch::text::check_text(r.text)) {
            return "'text': " + orch::text::at_byte(*p);
        }
        if (r.text.find_first_not_of(" \t\r\n") == std::string::npos) {
            return "'text' is empty";
        }
        // Characters, not bytes: count the UTF-8 lead bytes.
        std::size_t chars = 0;
        for (std::size_t i = 0; i < r.text.size(); ++i) {
            const auto c = static_cast<unsigned char>(r.text[i]);
            chars += (c & 0xC0) != 0x80 ? 1 : 0;
            if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') {
                return "'text' holds a control character other than a line break or tab (" +
                       orch::text::code_point_name(c) + " at character " + std::to_string(chars) + ")";
            }
        }
        if (chars > text_max) {
            return "'text' is longer than " + std::to_string(text_max) + " characters (" + std::to_string(chars) + ")";
        }
        return {};
    }());
    if (r.idempotency_key.size() > key_max) {
        add("the idempotency key is longer than " + std::to_string(key_max) + " bytes");
    } else if (auto p = orch::text::check_name(r.idempotency_key)) {
        add("the idempotency key: " + p->what);
    }
    if (r.requested_by.size() > 200) {
        add("'requested_by' is longer than 200 characters");
    } else if (auto p = orch::text::check_name(r.requested_by)) {
        add("'requested_by': " + p->what);
    }
    return found.joined();
}

std::string key_of(const reply_request& r) {
    if (!r.idempotency_key.empty()) {
        return "client:" + r.idempotency_key;
    }
    return "derived:" + std::to_string(r.event_id) + ":" + sha256_hex(r.text);
}

reply_outcome request_reply(pqxx::connection& conn, const reply_request& req) {
    return guarded("inbox/request_reply", [&] {
        reply_outcome out;
        const std::string key = key_of(req);
        pqxx::work tx(conn);
        auto same_key = [&]() -> std::optional<reply_outcome> {
            auto k = tx.exec_params(q("inbox/by_key"), key);
            if (k.empty()) {
                return std::nullopt;
            }
            reply_outcome o;
            if (k[0][1].as<std::int64_t>() != req.event_id || k[0][2].as<std::string>() != req.text) {
                o.what = reply_outcome::kind::conflict;
                o.message = "the idempotency key was already used for another reply (id " +
                            std::to_string(k[0][0].as<std::int64_t>()) + ")";
                return o;
            }
            o.what = reply_outcome::kind::existing;
            o.reply = *reply_by_id(tx, k[0][0].as<std::int64_t>());
            return o;
        };
        if (auto o = same_key()) {
            return *o;
        }
        auto ev = tx.exec_params(q("inbox/event"), req.event_id);
        if (ev.empty() || ev[0][15].as<std::string>() != "message") {
            out.what = reply_outcome::kind::not_found;
            out.message = "no such reply: " + std::to_string(req.event_id);
            return out;
        }
        const auto& e = ev[0];
        auto refuse = [&out](std::string why) {
            out.what = reply_outcome::kind::conflict;
            out.message = std::move(why);
            return out;
        };
        const auto lead = e[5].as<std::int64_t>();
        const auto enrollment = e[8].as<std::int64_t>();
        if (lead == 0 || enrollment == 0) {
            return refuse("reply " + std::to_string(req.event_id) +
                          " is from no campaign lead on account " + e[1].as<std::string>() +
                          ": the inbox answers the conversations of campaign leads (their budget pays for it)");
        }
        if (auto d = tx.exec_params(q("inbox/dnc_of"), lead); !d.empty()) {
            return refuse("the person is on the do-not-contact list (entry " + std::to_string(d[0][0].as<std::int64_t>()) +
                          ")");
        }
        if (e[10].as<std::string>() == "cancelled") {
            return refuse("campaign '" + e[7].as<std::string>() + "' is cancelled: its leads are not contacted");
        }
        if (!e[11].as<bool>()) {
            return refuse("account " + e[1].as<std::string>() + " is unavailable (status " + e[12].as<std::string>() +
                          "): log it in again (`orchestrator accounts connect`)");
        }
        auto ins = tx.exec_params(q("inbox/insert"), key, req.event_id, enrollment, e[9].as<std::int64_t>(),
                                  e[1].as<std::string>(), lead, req.text, req.requested_by);
        if (ins.empty()) {
            // Another request under the same key won the race: that one is the reply.
            if (auto o = same_key()) {
                tx.commit();
                return *o;
            }
            // Not seen from this transaction either (not expected under read committed): said,
            // not read past.
            return refuse("another request with the same Idempotency-Key is being stored: send it again to get its "
                          "answer");
        }
        out.reply = *reply_by_id(tx, ins[0][0].as<std::int64_t>());
        tx.commit();
        out.what = reply_outcome::kind::created;
        return out;
    });
}

mark_outcome mark_not_interested(pqxx::connection& conn, std::int64_t event_id, const std::string& by) {
    mark_outcome out;
    std::string profile;
    guarded("inbox/mark", [&] {
        pqxx::nontransaction tx(conn);
        auto ev = tx.exec_params(q("inbox/event"), event_id);
        if (ev.empty() || ev[0][15].as<std::string>() != "message") {
            out.message = "no such reply: " + std::to_string(event_id);
            return 0;
        }
        out.found = true;
        profile = ev[0][6].as<std::string>();
        if (profile.empty()) {
            // The intake keeps the sender's profile in the payload when no lead matched it.
            auto parsed = outreach::parse_webhook_event(std::string_view(ev[0][3].as<std::string>()));
            if (parsed) {
                profile = parsed->sender_profile_url;
            }
        }
        return 0;
    });
    if (!out.found) {
        return out;
    }
    if (profile.empty()) {
        out.message = "reply " + std::to_string(event_id) + " names no sender profile to put on the do-not-contact list";
        return out;
    }
    dnc::input in;
    in.profile_url = profile;
    in.reason = std::string(not_interested_reason) + " " + std::to_string(event_id);
    if (auto why = dnc::check(in); !why.empty()) {
        out.message = "the sender's profile cannot be listed: " + why;
        return out;
    }
    auto added = dnc::add(conn, {in}, by);
    out.added = !added.added.empty();
    out.stopped = added.cancelled;
    out.in_flight = added.in_flight;
    if (out.added) {
        out.entry_id = added.added.front().id;
    } else if (!added.duplicates.empty()) {
        out.entry_id = added.duplicates.front().existing_id;
    }
    guarded("inbox/mark", [&] {
        pqxx::work tx(conn);
        tx.exec_params(q("inbox/mark"), event_id, "not_interested", by);
        tx.commit();
        return 0;
    });
    return out;
}

// ---- REST ----

namespace {

std::int64_t id_segment(const std::string& s, const char* what) {
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || end != s.data() + s.size() || n <= 0) {
        throw bad_request(std::string(what) + " in the path must be a positive integer, got '" + s + "'");
    }
    return n;
}

// The string field `key` ("" when absent or null); another type is a 422 naming the field.
std::string string_field(const json& j, const std::string& key) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        return {};
    }
    if (!it->is_string()) {
        throw unprocessable("'" + key + "' must be a string, got " + it->dump());
    }
    return it->get<std::string>();
}

rest_reply err(int status, const std::string& message) {
    return {status, {{"error", {{"status", status}, {"message", message}}}}, {}};
}
rest_reply not_allowed(const std::string& allow) {
    auto r = err(405, "method not allowed; allowed: " + allow);
    r.allow = allow;
    return r;
}

}  // namespace

rest_reply handle(pqxx::connection& conn, const settings& cfg, const std::string& method, const std::vector<std::string>& seg,
                  const std::map<std::string, std::string>& params, const std::string& body,
                  const std::string& idempotency_header) {
    const bool get = method == "GET" || method == "HEAD";
    const bool post = method == "POST";
    // seg: v1 inbox ...
    if (seg.size() == 2) {
        if (!get) {
            return not_allowed("GET");
        }
        admin_input::only_params(params, {"campaign", "account", "cursor", "limit"});
        list_filter f;
        // A filter names a campaign or an account that exists (an account by id or label): a
        // misspelt one is a 404, as /v1/budget's, not an empty inbox that reads as "no replies".
        if (auto it = params.find("campaign"); it != params.end()) {
            if (it->second.empty()) {
                throw bad_request("query parameter 'campaign' is empty");
            }
            // A name that cannot be one (an invisible character) is said as such, not as a 404
            // whose message would show the name as another's.
            if (auto p = orch::text::check_name(it->second)) {
                throw bad_request("query parameter 'campaign' is not a valid name: " + orch::text::at_byte(*p));
            }
            f.campaign = it->second;
            if (!campaign_exists(conn, f.campaign)) {
                return err(404, "no campaign '" + orch::text::escaped_clipped(f.campaign, 200) + "'");
            }
        }
        if (auto it = params.find("account"); it != params.end()) {
            if (it->second.empty()) {
                throw bad_request("query parameter 'account' is empty");
            }
            if (auto p = orch::text::check_name(it->second)) {
                throw bad_request("query parameter 'account' is not a valid name: " + orch::text::at_byte(*p));
            }
            auto found = store::resolve_account(conn, it->second);
            if (!found) {
                return err(404, "no account '" + orch::text::escaped_clipped(it->second, 200) + "' (an account id or label)");
            }
            f.account = found->account_id;
        }
        f.limit = int_param(params, "limit", 50, 1, 500);
        f.cursor = int_param(params, "cursor", 0, 0, std::numeric_limits<std::int64_t>::max());
        return {200, list(conn, f), {}};
    }
    if (seg[1] == "manual-replies") {
        if (!get) {
            return not_allowed("GET");
        }
        const auto id = id_segment(seg[2], "the manual reply id");
        auto r = get_reply(conn, id);
        if (!r) {
            return err(404, "no such manual reply: " + std::to_string(id));
        }
        return {200, {{"manual_reply", *r}}, {}};
    }
    if (seg.size() == 3) {
        if (!get) {
            return not_allowed("GET");
        }
        const auto id = id_segment(seg[2], "the reply id");
        bool live = false;
        admin_input::only_params(params, {"live"});
        for (const auto& [k, v] : params) {
            if (v != "true" && v != "false") {
                throw bad_request("query parameter 'live' must be true or false, got '" + v + "'");
            }
            live = v == "true";
        }
        auto s = show(conn, id);
        if (!s) {
            return err(404, "no such reply: " + std::to_string(id));
        }
        if (live) {
            auto l = live_conversation(conn, cfg, id);
            if (l.status != 200) {
                return err(l.status, l.message);
            }
            (*s)["live_conversation"] = l.conversation;
            (*s)["live_credits"] = l.credits;
        }
        return {200, *s, {}};
    }
    if (seg.size() == 4 && seg[3] == "reply") {
        if (!post) {
            return not_allowed("POST");
        }
        const auto id = id_segment(seg[2], "the reply id");
        const std::string shape = "{\"text\": \"...\", \"idempotency_key\"?: \"...\", \"requested_by\"?: \"...\"}";
        // Every problem of the body, in one answer.
        admin_input::problems found;
        auto j = required_object_body(body, shape, &found);   // empty: a 400, as on every route that needs a body
        found.unknown_fields(j, {"text", "idempotency_key", "requested_by"});
        reply_request r;
        r.event_id = id;
        found.note([&] { r.text = string_field(j, "text"); });
        found.note([&] { r.idempotency_key = string_field(j, "idempotency_key"); });
        if (!idempotency_header.empty()) {
            if (!r.idempotency_key.empty() && r.idempotency_key != idempotency_header) {
                found.add("the Idempotency-Key header and 'idempotency_key' differ");
            }
            r.idempotency_key = idempotency_header;
        }
        found.note([&] { r.requested_by = string_field(j, "requested_by"); });
        if (r.requested_by.empty()) {
            r.requested_by = "admin-api";
        }
        if (!j.contains("text")) {
            found.add("'text' is required: {\"text\": \"...\"}");
        } else if (j["text"].is_null()) {
            found.add("'text' must be a string, got null: {\"text\": \"...\"}");
        } else if (j["text"].is_string()) {
            if (auto why = check(r); !why.empty()) {
                found.add(why);
            }
        }
        found.check();
        auto o = request_reply(conn, r);
        switch (o.what) {
        case reply_outcome::kind::not_found:
            return err(404, o.message);
        case reply_outcome::kind::conflict:
            return err(409, o.message + "; nothing changed");
        case reply_outcome::kind::existing:
            return {200, {{"manual_reply", o.reply}, {"duplicate", true}}, {}};
        case reply_outcome::kind::created:
            break;
        }
        return {202, {{"manual_reply", o.reply}, {"duplicate", false}}, {}};
    }
    if (seg.size() == 4 && seg[3] == "mark") {
        if (!post) {
            return not_allowed("POST");
        }
        const auto id = id_segment(seg[2], "the reply id");
        const std::string shape = "{\"mark\": \"not_interested\", \"by\"?: \"...\"}";
        admin_input::problems found;
        auto j = required_object_body(body, shape, &found);   // empty: a 400, as on every route that needs a body
        found.unknown_fields(j, {"mark", "by"});
        std::string mark;
        const bool read = found.note([&] { mark = string_field(j, "mark"); });
        // The CLI's spelling too (inbox mark ID not-interested).
        if (read && mark != "not_interested" && mark != "not-interested") {
            found.add("'mark' must be \"not_interested\" (or \"not-interested\"), got " +
                      (j.contains("mark") ? j["mark"].dump() : "nothing"));
        }
        std::string by;
        found.note([&] { by = string_field(j, "by"); });
        if (by.size() > 200 || orch::text::check_name(by)) {
            found.add("'by' must be at most 200 characters without control characters");
        }
        found.check();
        if (by.empty()) {
            by = "admin-api";
        }
        auto o = mark_not_interested(conn, id, by);
        if (!o.found) {
            return err(404, o.message);
        }
        if (!o.message.empty()) {
            return err(409, o.message + "; nothing changed");
        }
        return {200,
                {{"reply", id},
                 {"mark", "not_interested"},
                 {"dnc_entry", o.entry_id},
                 {"added", o.added},
                 {"stopped_leads", o.stopped},
                 {"in_flight_leads", o.in_flight}},
                {}};
    }
    return err(404, "no such path: /" + [&] {
        std::string p;
        for (const auto& s : seg) {
            p += (p.empty() ? "" : "/") + s;
        }
        return p;
    }());
}

}  // namespace orch::engine::inbox
