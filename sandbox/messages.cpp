// /v2/messages: sending to connections, the inbox and conversations of an account, and the
// simulated people who reply after a delay.
//
// Conversations live in account.conversations (index kept in conversation_by_person); each
// holds its messages oldest first. Every message the account actually sends is also appended
// to svc.message_records(), so tests can count duplicates.
#include "sandbox/dialect.hpp"
#include "sandbox/network_detail.hpp"
#include "sandbox/service.hpp"

#include "engine/time_format.hpp"

#include <algorithm>
#include <charconv>

namespace orch::sandbox {

namespace {

using detail::full_name;
using detail::in_quotes;
using detail::profile_picture_url;
using detail::unix_ms;

// Salts keep the deterministic draws of different purposes independent of each other.
constexpr std::uint64_t reply_salt = 0x7265706c'790001ULL;
constexpr std::uint64_t reply_text_salt = 0x74657874'0002ULL;
constexpr std::uint64_t cursor_salt = 0x63757273'6f720003ULL;

constexpr const char* reply_texts[] = {
    "Thanks for reaching out!",
    "Hi, thanks for the message. What did you have in mind?",
    "Sounds interesting. Could you tell me a bit more?",
    "Happy to chat. Does a call next week work for you?",
    "Thanks, but this is not a priority for us right now.",
    "Could you send me more details by e-mail?",
    "Good timing, we were just discussing this. Let's talk.",
    "I'm not the right person for this, but I can forward it to my colleague.",
};

const relation* find_relation(const account_state& account, person_id who) {
    auto it = account.relations.find(who);
    return it == account.relations.end() ? nullptr : &it->second;
}

bool is_connection(const account_state& account, person_id who) {
    const relation* rel = find_relation(account, who);
    return rel != nullptr && rel->state == relation_state::connected;
}

conversation* conversation_with(account_state& account, person_id who) {
    auto it = account.conversation_by_person.find(who);
    return it == account.conversation_by_person.end() ? nullptr : &account.conversations[it->second];
}

// The conversation with `who`, created empty (with a fresh opaque id) on first use.
conversation& open_conversation(service& svc, account_state& account, person_id who) {
    if (conversation* existing = conversation_with(account, who)) {
        return *existing;
    }
    conversation c;
    c.id = "urn:li:conversation:" + svc.new_id("2-");
    c.with = who;
    account.conversations.push_back(std::move(c));
    account.conversation_by_person[who] = account.conversations.size() - 1;
    return account.conversations.back();
}

// ---------------------------------------------------------------------------------------------
// Replies of the simulated person

void deliver_reply(service& svc, account_state& account, person_id who, const std::string& text) {
    const person& p = svc.world().at(who);
    conversation& conv = open_conversation(svc, account, who);
    chat_message m;
    m.entity_urn = "urn:li:message:" + svc.new_id("");
    m.text = text;
    m.from_account = false;
    m.at = svc.now();
    conv.messages.push_back(m);
    ++conv.unread;
    // api-facts 1.1: subscribers filter on message_received, but event.type is "message".
    svc.publish_event(account, "message",
                      message_event_body(svc.cfg(), {text, full_name(p), world::profile_url(p), conv.id, m.entity_urn}),
                      world::profile_url(p));
}

// Draws, from the account, the person and how many messages the account sent so far, whether
// the person answers this message; at most one answer is pending per conversation.
void maybe_schedule_reply(service& svc, account_state& account, conversation& conv) {
    if (conv.reply_pending) {
        return;
    }
    const person& p = svc.world().at(conv.with);
    auto sent =
        std::count_if(conv.messages.begin(), conv.messages.end(), [](const chat_message& m) { return m.from_account; });
    std::string draw_key = account.id + "|" + p.public_id + "|" + std::to_string(sent);
    if (unit_from_hash(hash64(draw_key, svc.cfg().seed ^ reply_salt)) >= svc.cfg().reply_probability) {
        return;
    }
    std::string text = reply_texts[hash64(draw_key, svc.cfg().seed ^ reply_text_salt) % std::size(reply_texts)];
    conv.reply_pending = true;
    auto delay_ms = svc.rng().between(svc.cfg().reply_delay_ms_min, svc.cfg().reply_delay_ms_max);
    svc.schedule_after(std::chrono::milliseconds(delay_ms), [&svc, account_id = account.id, who = conv.with, text] {
        account_state* a = svc.find_account(account_id);
        conversation* c = a == nullptr ? nullptr : conversation_with(*a, who);
        if (c == nullptr) {
            return;
        }
        c->reply_pending = false;
        deliver_reply(svc, *a, who, text);
    });
}

// ---------------------------------------------------------------------------------------------
// Parameters naming a conversation

struct conversation_target {
    const person* who = nullptr;
    conversation* conv = nullptr; // null when there is no conversation with `who` yet
};

// conversation_id, or profile_url (alias network_url); when both are given they must agree.
conversation_target target_params(action_context& ctx) {
    conversation_target out;
    out.who = detail::person_from_url_params(ctx.svc, ctx.params, {"profile_url", "network_url"});
    auto id = optional_string(ctx.params, "conversation_id");
    if (id) {
        auto it = std::find_if(ctx.account.conversations.begin(), ctx.account.conversations.end(),
                               [&](const conversation& c) { return c.id == *id; });
        if (it == ctx.account.conversations.end()) {
            throw invalid_params("params.conversation_id " + in_quotes(*id) + " is not a conversation of this account");
        }
        if (out.who != nullptr && out.who->id != it->with) {
            throw invalid_params("params.conversation_id and params.profile_url name different people");
        }
        out.who = &ctx.svc.world().at(it->with);
    }
    if (out.who == nullptr) {
        throw invalid_params("params.profile_url (or its alias params.network_url, or params.conversation_id) is "
                             "required");
    }
    out.conv = conversation_with(ctx.account, out.who->id);
    return out;
}

// ---------------------------------------------------------------------------------------------
// send

bool is_base64(const std::string& data) {
    std::size_t len = 0;
    std::size_t padding = 0;
    for (char c : data) {
        if (c == '\r' || c == '\n' || c == ' ') {
            continue;
        }
        bool symbol = std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '-' || c == '_';
        if ((symbol && padding > 0) || (!symbol && c != '=')) {
            return false;
        }
        padding += c == '=' ? 1 : 0;
        ++len;
    }
    return len > 0 && padding <= 2 && (len - padding) % 4 != 1;
}

std::string media_file_param(const json& file) {
    if (!file.is_object()) {
        throw invalid_params(std::string("params.media_file must be an object {data, filename}, got ") +
                             detail::json_type_name(file));
    }
    for (const char* field : {"data", "filename"}) {
        auto it = file.find(field);
        if (it == file.end() || it->is_null()) {
            throw invalid_params(std::string("params.media_file.") + field + " is required");
        }
        if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
            throw invalid_params(std::string("params.media_file.") + field + " must be a non-empty string, got " +
                                 (it->is_string() ? "an empty string" : detail::json_type_name(*it)));
        }
    }
    if (!is_base64(file["data"].get<std::string>())) {
        throw invalid_params("params.media_file.data must be base64");
    }
    return "file:" + file["filename"].get<std::string>();
}

// The one media a message carries (priority media_link > media_file > media_path, api-facts
// 2.11); every media parameter given is validated.
std::optional<std::string> media_param(const json& params) {
    std::optional<std::string> out;
    auto link = optional_string(params, "media_link");
    if (link && !link->starts_with("https://") && !link->starts_with("http://")) {
        throw invalid_params("params.media_link must be an http(s) URL, got " + in_quotes(*link));
    }
    auto file = params.find("media_file");
    std::optional<std::string> file_media;
    if (file != params.end() && !file->is_null()) {
        file_media = media_file_param(*file);
    }
    auto path = optional_string(params, "media_path");
    if (path && path->empty()) {
        throw invalid_params("params.media_path must not be empty");
    }
    if (link) {
        out = *link;
    } else if (file_media) {
        out = file_media;
    } else if (path) {
        out = "path:" + *path;
    }
    return out;
}

json send(action_context& ctx) {
    conversation_target target = target_params(ctx);
    const person& p = *target.who;
    std::string text = optional_string(ctx.params, "message_text").value_or("");
    auto media = media_param(ctx.params);
    if (text.empty() && !media) {
        throw invalid_params("params.message_text is required (it may be empty only with media_link, media_file or "
                             "media_path)");
    }
    auto max_chars = static_cast<std::size_t>(ctx.svc.cfg().message_max_chars);
    if (detail::utf8_length(text) > max_chars) {
        throw invalid_params("params.message_text is " + std::to_string(detail::utf8_length(text)) +
                             " characters long; the limit is " + std::to_string(max_chars));
    }
    if (!is_connection(ctx.account, p.id)) {
        throw channel_error("recipient is not a connection: " + world::profile_url(p));
    }
    ctx.charge(media ? 2 : 1);

    conversation& conv = open_conversation(ctx.svc, ctx.account, p.id);
    chat_message m;
    m.entity_urn = "urn:li:message:" + ctx.svc.new_id("");
    m.text = text;
    m.from_account = true;
    m.at = ctx.now;
    m.media = media.value_or("");
    conv.messages.push_back(m);
    ctx.svc.message_records().push_back(message_record{ctx.account.id, world::profile_url(p), text, ctx.now});
    ctx.side_effect = true;
    maybe_schedule_reply(ctx.svc, ctx.account, conv);
    // camelCase on purpose: the documented result of send (api-facts 2.11).
    return json{{"entityUrn", m.entity_urn}, {"conversation_id", conv.id}, {"deliveredAt", iso8601_ms(ctx.now)}};
}

// ---------------------------------------------------------------------------------------------
// list_inbox

json person_card(const person& p) {
    return json{{"name", full_name(p)},
                {"headline", p.headline},
                {"profile_url", world::profile_url(p)},
                {"profile_picture", profile_picture_url(p)}};
}

// Position of a conversation in the inbox: newest activity first, then the newest conversation.
struct inbox_position {
    std::int64_t last_ms = 0;
    std::size_t index = 0;
    bool operator<(const inbox_position& o) const {
        return last_ms != o.last_ms ? last_ms > o.last_ms : index > o.index;
    }
};

std::uint64_t cursor_check(const service& svc, const account_state& account, const inbox_position& pos) {
    return hash64(account.id + "|" + std::to_string(pos.last_ms) + "|" + std::to_string(pos.index),
                  svc.cfg().seed ^ cursor_salt) &
           0xffffffffULL;
}

// An inbox cursor is the position of the last conversation returned, with a check so that a
// made-up or foreign cursor is refused rather than silently misread.
std::string encode_inbox_cursor(const service& svc, const account_state& account, const inbox_position& pos) {
    return hex(static_cast<std::uint64_t>(pos.last_ms), 16) + hex(pos.index, 8) +
           hex(cursor_check(svc, account, pos), 8);
}

inbox_position decode_inbox_cursor(const service& svc, const account_state& account, const std::string& text) {
    auto bad =
        invalid_params("params.cursor is not a cursor returned by list_inbox for this account: " + in_quotes(text));
    auto field = [&](std::size_t from, std::size_t len) {
        std::uint64_t v = 0;
        const char* first = text.data() + from;
        auto [end, ec] = std::from_chars(first, first + len, v, 16);
        if (ec != std::errc{} || end != first + len) {
            throw bad;
        }
        return v;
    };
    if (text.size() != 32) {
        throw bad;
    }
    inbox_position pos{static_cast<std::int64_t>(field(0, 16)), static_cast<std::size_t>(field(16, 8))};
    if (pos.index >= account.conversations.size() || field(24, 8) != cursor_check(svc, account, pos)) {
        throw bad;
    }
    return pos;
}

// INBOX lists every conversation; UNREAD those with unread messages; ARCHIVE is always empty
// (nothing is archived in the sandbox).
std::string inbox_category(const json& params) {
    std::string category = optional_string(params, "category").value_or("INBOX");
    std::transform(category.begin(), category.end(), category.begin(), [](unsigned char c) { return std::toupper(c); });
    if (category != "INBOX" && category != "UNREAD" && category != "ARCHIVE") {
        throw invalid_params("params.category must be INBOX, UNREAD or ARCHIVE, got " + in_quotes(category));
    }
    return category;
}

json inbox_item(const account_state& account, const conversation& conv, const person& p) {
    const chat_message& last = conv.messages.back();
    json sender = person_card(last.from_account ? account.self : p);
    sender["is_me"] = last.from_account;
    return json{{"conversation_id", conv.id},
                {"participant", person_card(p)},
                {"last_message", json{{"text", last.text}, {"time", unix_ms(last.at)}, {"sender", sender}}},
                {"unread", conv.unread},
                {"type", "normal"}};
}

json list_inbox(action_context& ctx) {
    auto count = static_cast<std::size_t>(optional_int(ctx.params, "count", 1, 100).value_or(20));
    std::string category = inbox_category(ctx.params);
    auto cursor = optional_string(ctx.params, "cursor");
    std::optional<inbox_position> after;
    if (cursor && !cursor->empty()) {
        after = decode_inbox_cursor(ctx.svc, ctx.account, *cursor);
    }
    std::vector<inbox_position> order;
    for (std::size_t i = 0; i < ctx.account.conversations.size(); ++i) {
        const conversation& c = ctx.account.conversations[i];
        if (!c.messages.empty() && category != "ARCHIVE" && (category == "INBOX" || c.unread > 0)) {
            order.push_back({unix_ms(c.messages.back().at), i});
        }
    }
    std::sort(order.begin(), order.end());
    auto first = after ? std::upper_bound(order.begin(), order.end(), *after) : order.begin();
    json items = json::array();
    auto it = first;
    for (; it != order.end() && items.size() < count; ++it) {
        const conversation& c = ctx.account.conversations[it->index];
        items.push_back(inbox_item(ctx.account, c, ctx.svc.world().at(c.with)));
    }
    ctx.charge(list_cost(items.size()));
    json next = nullptr;
    if (it != order.end()) {
        next = encode_inbox_cursor(ctx.svc, ctx.account, *(it - 1));
    }
    return json{{"conversations", items}, {"total_results", items.size()}, {"next_cursor", next}};
}

// ---------------------------------------------------------------------------------------------
// get_conversation

// A conversation cursor is the number of older messages still to read (digits, as in the
// documented example); pages go from the newest message back.
std::size_t conversation_cursor(const json& params, std::size_t messages) {
    auto cursor = optional_string(params, "cursor");
    if (!cursor || cursor->empty()) {
        return messages;
    }
    std::size_t v = 0;
    auto [end, ec] = std::from_chars(cursor->data(), cursor->data() + cursor->size(), v);
    if (ec != std::errc{} || end != cursor->data() + cursor->size() || v == 0 || v > messages) {
        throw invalid_params("params.cursor is not a cursor returned by get_conversation for this conversation: " +
                             in_quotes(*cursor));
    }
    return v;
}

json message_item(const account_state& account, const chat_message& m, const person& p) {
    const person& sender = m.from_account ? account.self : p;
    return json{{"text", m.text},
                {"timestamp", unix_ms(m.at)},
                {"sender", full_name(sender)},
                {"sender_info", json{{"first_name", sender.first_name},
                                     {"last_name", sender.last_name},
                                     {"profile_url", world::profile_url(sender)}}},
                {"message_type", "TEXT"},
                {"entity_urn", m.entity_urn},
                {"is_me", m.from_account},
                {"media", m.media.empty() ? json(nullptr) : json(m.media)}};
}

json get_conversation(action_context& ctx) {
    conversation_target target = target_params(ctx);
    if (target.conv == nullptr) {
        throw invalid_params("params.profile_url: there is no conversation with " + world::profile_url(*target.who));
    }
    conversation& conv = *target.conv;
    auto count = static_cast<std::size_t>(optional_int(ctx.params, "count", 1, 100).value_or(20));
    std::size_t end = conversation_cursor(ctx.params, conv.messages.size());
    std::size_t begin = end > count ? end - count : 0;
    json items = json::array();
    for (std::size_t i = end; i > begin; --i) {
        items.push_back(message_item(ctx.account, conv.messages[i - 1], *target.who));
    }
    ctx.charge(list_cost(items.size()));
    // The read state is reported as it was before this call, which then marks everything read.
    json data = {{"conversation_id", conv.id},
                 {"total_message_count", conv.messages.size()},
                 {"unread_count", conv.unread},
                 {"last_seen_message", conv.unread == 0},
                 {"last_seen_at", conv.last_seen_at == time_point{} ? json(nullptr) : json(unix_ms(conv.last_seen_at))},
                 {"messages", items},
                 {"next_cursor", begin > 0 ? json(std::to_string(begin)) : json(nullptr)}};
    conv.unread = 0;
    conv.last_seen_at = ctx.now;
    return data;
}

} // namespace

bool simulate_reply(service& svc, account_state& account, person_id who, const std::string& text, std::string& why) {
    if (!is_connection(account, who)) {
        why = world::profile_url(svc.world().at(who)) + " is not a connection of account " + account.id;
        return false;
    }
    if (text.empty()) {
        why = "text must not be empty";
        return false;
    }
    deliver_reply(svc, account, who, text);
    return true;
}

void register_messages_actions(action_table& table) {
    table.add("messages", "send", send);
    table.add("messages", "list_inbox", list_inbox);
    table.add("messages", "get_conversation", get_conversation);
}

} // namespace orch::sandbox
