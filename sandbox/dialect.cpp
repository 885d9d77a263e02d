#include "sandbox/dialect.hpp"

#include "engine/time_format.hpp"

#include <algorithm>

namespace orch::sandbox {

std::string wire_time(const settings& cfg, time_point t, time_precision precision) {
    if (cfg.dialect_timestamps != "naive") {
        return precision == time_precision::millis ? iso8601_ms(t) : iso8601_s(t);
    }
    // api-facts 1.9: "2025-01-15T10:30:00.000000", microseconds and no zone, meaning UTC.
    auto whole = std::chrono::floor<std::chrono::seconds>(t);
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t - whole).count();
    std::string text = iso8601_s(whole);
    text.pop_back(); // the Z
    std::string digits = std::to_string(micros); // 0..999999
    return text + "." + std::string(6 - std::min<std::size_t>(6, digits.size()), '0') + digits;
}

std::string rate_limit_message(const settings& cfg, std::string natural) {
    if (cfg.dialect_rate_limit_message == "generic") {
        return "too many requests; retry later with backoff";
    }
    if (cfg.dialect_rate_limit_message == "your_account") {
        return "rate limit exceeded for your account; retry later with backoff";
    }
    return natural;
}

std::string wire_event_type(const settings& cfg, const std::string& type) {
    if (type == "message" && cfg.dialect_message_type == "message_received") {
        return "message_received";
    }
    return type;
}

json render_event(const settings& cfg, const std::string& account_id, const std::string& account_name,
                  const std::string& type, json body, time_point at) {
    std::string wire_type = wire_event_type(cfg, type);
    if (!body.contains("timestamp")) {
        body["timestamp"] = wire_time(cfg, at);
    }
    json out;
    if (cfg.dialect_event_envelope == "wrapper") {
        // api-facts 1.2: {account_id, account_name, event{type, ...}, timestamp}.
        body["type"] = wire_type;
        out = json{{"account_id", account_id},
                   {"account_name", account_name},
                   {"event", std::move(body)},
                   {"timestamp", wire_time(cfg, at)}};
    } else {
        // The flat readings: the type at the top (as "type" or "event"), the fields under data.
        body.erase("type");
        const char* type_key = cfg.dialect_event_envelope == "flat_event" ? "event" : "type";
        out = json{{type_key, wire_type},
                   {"account_id", account_id},
                   {"timestamp", wire_time(cfg, at)},
                   {"data", std::move(body)}};
    }
    add_extra_fields(cfg, out);
    return out;
}

json accepted_invitation_body(const settings& cfg, const accepted_person& p) {
    // api-facts 1.4: undocumented; the three shapes seen in third-party code.
    if (cfg.dialect_accepted_shape == "list") {
        return json{{"new_connections", json::array({json{{"profile_url", p.profile_url},
                                                          {"name", p.name},
                                                          {"first_name", p.first_name},
                                                          {"last_name", p.last_name}}})}};
    }
    if (cfg.dialect_accepted_shape == "data") {
        return json{
            {"data", json{{"profile_url", p.profile_url}, {"first_name", p.first_name}, {"last_name", p.last_name}}}};
    }
    return json{{"profile_url", p.profile_url},   {"public_identifier", p.public_identifier},
                {"first_name", p.first_name},     {"last_name", p.last_name},
                {"name", p.name},                 {"invitation_id", p.invitation_id}};
}

json message_event_body(const settings& cfg, const message_fields& m) {
    // api-facts 1.3: the docs' example names the sender flat (sender_name, sender_profile); a
    // third-party sample reads sender_profile_url, another consumer event.sender.{name,
    // profile_url}; no field is documented for certain, so a reading may name none.
    json body{{"message_text", m.text}, {"conversation_id", m.conversation_id}, {"message_id", m.message_id}};
    if (cfg.dialect_message_sender == "sender_profile_url") {
        body["sender_name"] = m.sender_name;
        body["sender_profile_url"] = m.sender_profile_url;
    } else if (cfg.dialect_message_sender == "sender_object") {
        body["sender"] = json{{"name", m.sender_name}, {"profile_url", m.sender_profile_url}};
    } else if (cfg.dialect_message_sender != "conversation_only") {
        body["sender_name"] = m.sender_name;
        body["sender_profile"] = m.sender_profile_url;
    }
    return body;
}

bool webhook_wants(const settings& cfg, const std::vector<std::string>& events, const std::string& type) {
    // api-facts 1.1: disconnection reaches every webhook whatever its filter (the default reading).
    if (type == "disconnection" && cfg.dialect_disconnection == "always") {
        return true;
    }
    for (const auto& f : events) {
        if (f == "all" || f == type || (f == "message_received" && type == "message")) {
            return true;
        }
    }
    return false;
}

namespace {

void decorate(json& node, int depth) {
    constexpr int depth_max = 2;
    if (node.is_array()) {
        for (auto& item : node) {
            decorate(item, depth);
        }
        return;
    }
    if (!node.is_object()) {
        return;
    }
    if (depth < depth_max) {
        for (auto& [k, v] : node.items()) {
            decorate(v, depth + 1);
        }
    }
    if (!node.contains("x_sandbox_extra")) {
        node["x_sandbox_extra"] = json{{"note", "unknown field; clients must ignore it"}, {"level", depth}};
        node["x_sandbox_flag"] = "extra";
    }
}

} // namespace

void add_extra_fields(const settings& cfg, json& root) {
    if (cfg.dialect_extra_fields) {
        decorate(root, 0);
    }
}

} // namespace orch::sandbox
