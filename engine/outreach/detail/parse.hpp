// Decoding of API answers: the V2 and V1 envelopes, the error taxonomy of non-success answers,
// and one parser per result type. Parsers read the `data` object and throw detail::malformed
// for a strict field that is wrong; the decoders turn that into error_kind::malformed_response.
#pragma once

#include "engine/outreach/detail/json_read.hpp"
#include "engine/outreach/types.hpp"

#include <string>

namespace orch::outreach::detail {

// What the transport hands over: status, body and the Retry-After header value.
struct http_answer {
    int status = 0;
    std::string body;
    std::string retry_after;           // raw header value, empty when absent
    std::string content_type;
};

// The typed error for a non-2xx answer, or for a 2xx whose envelope says failure. Reads V2
// `{error: {code, message}}`, V1 `{status: "error", message}` and bare bodies.
error error_from_answer(const http_answer& a, const json* body, bool side_effect);

// Decodes a V2 envelope: on success returns the `data` object and fills `meta`.
// Strict: a JSON object, `success` true, `data` an object, `metadata.credits_consumed` an
// integer >= 0 when present.
result<json> decode_v2_envelope(const http_answer& a, bool side_effect, call_metadata& meta);
// Decodes a V1 answer `{status: "success", data}` (or, when `bare_ok`, a bare object taken as
// the data), filling `message` from the envelope's detail text.
result<json> decode_v1_envelope(const http_answer& a, bool side_effect, bool bare_ok, std::string& message);

template <typename T>
using parser_fn = void (*)(const json& data, T& out);

template <typename T>
result<T> decode_v2(const http_answer& a, bool side_effect, parser_fn<T> parse) {
    T out{};
    auto data = decode_v2_envelope(a, side_effect, out.meta);
    if (!data) {
        return std::move(data).error();
    }
    try {
        parse(*data, out);
    } catch (const malformed& m) {
        return make_malformed(m.what, a.status, side_effect);
    } catch (const std::exception& e) {
        return make_malformed(e.what(), a.status, side_effect);
    }
    out.raw = std::move(*data);
    return out;
}

template <typename T>
result<T> decode_v1(const http_answer& a, bool side_effect, bool bare_ok, parser_fn<T> parse) {
    T out{};
    auto data = decode_v1_envelope(a, side_effect, bare_ok, out.status_message);
    if (!data) {
        return std::move(data).error();
    }
    try {
        parse(*data, out);
    } catch (const malformed& m) {
        return make_malformed(m.what, a.status, side_effect);
    } catch (const std::exception& e) {
        return make_malformed(e.what(), a.status, side_effect);
    }
    out.raw = std::move(*data);
    return out;
}

// Parsers for results without documented fields.
template <typename T>
void parse_nothing(const json&, T&) {}

// ---- V2 parsers ----
void parse_login(const json& d, login_result& out);
void parse_checkpoint(const json& d, checkpoint_result& out);
void parse_accounts_page(const json& d, accounts_page& out);
void parse_account_reply(const json& d, account_reply& out);
void parse_credits(const json& d, credits_result& out);
void parse_profile_reply(const json& d, profile_reply& out);
void parse_contact(const json& d, contact_info& out);
void parse_visit(const json& d, visit_result& out);
void parse_people_page(const json& d, people_page& out);
void parse_companies_page(const json& d, companies_page& out);
void parse_company_reply(const json& d, company_reply& out);
void parse_profile_reactions_page(const json& d, profile_reactions_page& out);
void parse_invite(const json& d, invite_result& out);
void parse_invitation_status(const json& d, invitation_status& out);
void parse_withdraw(const json& d, withdraw_result& out);
void parse_invitations_page(const json& d, invitations_page& out);
void parse_decline(const json& d, decline_result& out);
void parse_connections_page(const json& d, connections_page& out);
void parse_send_message(const json& d, send_message_result& out);
void parse_inbox_page(const json& d, inbox_page& out);
void parse_conversation_page(const json& d, conversation_page& out);
void parse_post_created(const json& d, post_created& out);
void parse_post_reactions_page(const json& d, post_reactions_page& out);
void parse_email_lookup(const json& d, email_lookup& out);
void parse_webhook_created(const json& d, webhook_created& out);
void parse_webhook_reply(const json& d, webhook_reply& out);
void parse_webhook_list(const json& d, webhook_list& out);
void parse_webhook_monitoring(const json& d, webhook_monitoring& out);
void parse_rotated_secret(const json& d, rotated_secret& out);
void parse_events_page(const json& d, events_page& out);

// ---- V1 parsers ----
void parse_company_v1(const json& d, company_v1_reply& out);
void parse_data_company_search(const json& d, data_company_search_result& out);
void parse_data_profile_search(const json& d, data_profile_search_result& out);
void parse_profile_enrichment(const json& d, profile_enrichment& out);
void parse_profile_reactions(const json& d, profile_reactions_result& out);
void parse_post_reactions(const json& d, post_reactions_result& out);
void parse_hiring_companies(const json& d, hiring_companies_result& out);
void parse_messaging_send(const json& d, messaging_send_result& out);
void parse_webhook_account_reply(const json& d, webhook_account_reply& out);
void parse_webhook_account_list(const json& d, webhook_account_list& out);
void parse_webhook_account_stopped(const json& d, webhook_account_stopped& out);

// Shared item parsers.
company_record parse_company_record(const json& o);
profile_record parse_profile_record(const json& o);
post_reaction parse_post_reaction(const json& o);
webhook_info parse_webhook_info(const json& o);
webhook_event parse_event_wrapper(const json& wrapper); // throws malformed

} // namespace orch::outreach::detail
