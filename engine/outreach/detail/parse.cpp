#include "engine/outreach/detail/parse.hpp"

#include "engine/json_syntax.hpp"
#include "engine/time_format.hpp"

#include <chrono>

namespace orch::outreach::detail {

namespace {

bool is_2xx(int status) { return status >= 200 && status < 300; }

json parse_json(const std::string& body) { return json::parse(body, nullptr, false); }

std::string cut(std::string_view s) {
    constexpr std::size_t max_chars = 200;
    return s.size() <= max_chars ? std::string(s) : std::string(s.substr(0, max_chars)) + "...";
}

std::optional<std::int64_t> retry_after_of(const http_answer& a) {
    if (a.retry_after.empty()) {
        return std::nullopt;
    }
    return parse_retry_after(a.retry_after, std::chrono::system_clock::now());
}

constexpr std::int64_t max_believable_credits = 10'000;

void read_metadata(const json& body, call_metadata& meta) {
    const json* m = object_at(body, {"metadata"});
    if (m == nullptr) {
        return;
    }
    meta.action = text(*m, {"action"});
    meta.account_id = text(*m, {"account_id"});
    meta.credits_consumed = strict_int(*m, "credits_consumed");
    if (meta.credits_consumed && *meta.credits_consumed < 0) {
        fail("metadata.credits_consumed is negative");
    }
    // No call of the spec costs near this (the largest, a search of the most results a call may ask
    // for, costs a few hundred): a larger number is not a charge to book (one answer's 1,000,000
    // paused a campaign for its budget where the API had charged 1).
    if (meta.credits_consumed && *meta.credits_consumed > max_believable_credits) {
        fail("metadata.credits_consumed " + std::to_string(*meta.credits_consumed) + " is not believable (over " +
             std::to_string(max_believable_credits) + " for one call)");
    }
    meta.timestamp = opt_time(*m, {"timestamp"});
}

} // namespace

error error_from_answer(const http_answer& a, const json* body, bool side_effect) {
    auto retry_after = retry_after_of(a);
    if (body != nullptr && body->is_object()) {
        if (const json* err = object_at(*body, {"error"})) {
            error e = make_api_error(error_kind::api_error, a.status, text(*err, {"code"}), text(*err, {"message"}),
                                     retry_after, side_effect);
            json details = json::object();
            for (const auto& [k, v] : err->items()) {
                if (k != "code" && k != "message") {
                    details[k] = v;
                }
            }
            if (!details.empty()) {
                e.details = std::move(details);
            }
            return e;
        }
        auto status = body->find("status");
        if (status != body->end() && *status == "error") {
            std::string message = text(*body, {"message", "error"});
            std::string code = text(*body, {"code"});
            if (code.empty()) {
                code = v1_code_from_message(message);
            }
            error e = make_api_error(error_kind::v1_error, a.status, code, message, retry_after, side_effect);
            // V1 answers most errors with 200: the HTTP status then says nothing (and a code to
            // retry later says nothing of the effect, as in a V2 envelope).
            if (is_2xx(a.status)) {
                e.what_to_do = disposition_for(code, 0);
                e.may_have_taken_effect = side_effect && e.what_to_do == disposition::retry_later;
            }
            if (code == "V1_ERROR" && a.status < 500) {
                e.what_to_do = disposition::give_up;
            }
            return e;
        }
    }
    std::string message = "HTTP " + std::to_string(a.status);
    if (!a.body.empty()) {
        message += ": " + cut(a.body);
    }
    return make_api_error(error_kind::http_status, a.status, "", message, retry_after, side_effect);
}

result<json> decode_v2_envelope(const http_answer& a, bool side_effect, call_metadata& meta) {
    json body = parse_json(a.body);
    bool parsed = !body.is_discarded();
    if (!is_2xx(a.status)) {
        return error_from_answer(a, parsed ? &body : nullptr, side_effect);
    }
    if (!parsed) {
        return make_malformed("the answer is not JSON (" + orch::engine::json_syntax_error(a.body) + "): " + cut(a.body),
                              a.status, side_effect);
    }
    if (!body.is_object()) {
        return make_malformed("the answer is not a JSON object", a.status, side_effect);
    }
    auto success = body.find("success");
    if (success == body.end() || !success->is_boolean()) {
        // A V1-shaped error inside a V2 call still says what went wrong.
        if (body.contains("status") && body["status"] == "error") {
            return error_from_answer(a, &body, side_effect);
        }
        return make_malformed("the envelope has no boolean `success`", a.status, side_effect);
    }
    if (!success->get<bool>()) {
        if (!body.contains("error")) {
            return make_malformed("`success` is false but there is no `error`", a.status, side_effect);
        }
        error e = error_from_answer(a, &body, side_effect);
        // A failure envelope with a 2xx status: the code decides, the status says nothing. A code
        // to retry later (INTERNAL_ERROR, an unknown one) says as little about the effect as a 500
        // does: the call is reconciled before it is sent again (sent again blindly, one message
        // went out three times behind an API that answered 200 with INTERNAL_ERROR).
        e.what_to_do = disposition_for(e.code, 0);
        e.may_have_taken_effect = side_effect && e.what_to_do == disposition::retry_later;
        return e;
    }
    try {
        read_metadata(body, meta);
    } catch (const malformed& m) {
        return make_malformed(m.what, a.status, side_effect);
    }
    auto data = body.find("data");
    if (data == body.end() || !data->is_object()) {
        return make_malformed("a success envelope without a `data` object", a.status, side_effect);
    }
    return std::move(*data);
}

result<json> decode_v1_envelope(const http_answer& a, bool side_effect, bool bare_ok, std::string& message) {
    json body = parse_json(a.body);
    bool parsed = !body.is_discarded();
    if (parsed && body.is_object() && body.contains("status") && body["status"] == "error") {
        return error_from_answer(a, &body, side_effect);
    }
    if (!is_2xx(a.status)) {
        return error_from_answer(a, parsed ? &body : nullptr, side_effect);
    }
    if (!parsed) {
        return make_malformed("the answer is not JSON (" + orch::engine::json_syntax_error(a.body) + "): " + cut(a.body),
                              a.status, side_effect);
    }
    if (!body.is_object()) {
        return make_malformed("the answer is not a JSON object", a.status, side_effect);
    }
    auto status = body.find("status");
    if (status == body.end() || !status->is_string()) {
        if (body.contains("success")) {
            call_metadata ignored;
            return decode_v2_envelope(a, side_effect, ignored);
        }
        if (bare_ok) {
            return body;
        }
        return make_malformed("the V1 answer has no `status`", a.status, side_effect);
    }
    if (*status != "success") {
        return make_malformed("unknown V1 status " + status->dump(), a.status, side_effect);
    }
    message = text(body, {"message"});
    auto data = body.find("data");
    json out;
    if (data == body.end() || data->is_null()) {
        return make_malformed("a V1 success answer without `data`", a.status, side_effect);
    }
    if (!data->is_object()) {
        return make_malformed("V1 `data` is not an object", a.status, side_effect);
    }
    out = std::move(*data);
    // Some V1 answers (hiring companies) put pagination and counters next to `data`.
    for (auto& [k, v] : body.items()) {
        if (k != "status" && k != "data" && k != "message" && !out.contains(k)) {
            out[k] = v;
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Shared item parsers

namespace {

person_ref parse_person_ref(const json& o) {
    person_ref p;
    p.first_name = text(o, {"first_name", "firstName"});
    p.last_name = text(o, {"last_name", "lastName"});
    p.name = text(o, {"name", "full_name", "fullName"});
    if (p.name.empty() && !(p.first_name.empty() && p.last_name.empty())) {
        p.name = p.first_name.empty() ? p.last_name : p.last_name.empty() ? p.first_name : p.first_name + " " + p.last_name;
    }
    p.headline = text(o, {"headline", "job_title", "title"});
    p.profile_url = text(o, {"profile_url", "network_url", "profileUrl", "url"});
    p.profile_picture_url = text(o, {"profile_picture_url", "profile_picture", "profilePictureUrl"});
    return p;
}

offset_pagination parse_offset_pagination(const json& d) {
    offset_pagination p;
    const json* o = object_at(d, {"pagination"});
    if (o == nullptr) {
        return p;
    }
    p.offset = opt_int(*o, {"offset"});
    p.count = opt_int(*o, {"count"});
    p.next_offset = opt_int(*o, {"next_offset", "nextOffset"});
    p.has_more = opt_bool(*o, {"has_more", "hasMore"});
    p.results_per_page = opt_int(*o, {"results_per_page"});
    p.pages_fetched = opt_int(*o, {"pages_fetched"});
    return p;
}

page_pagination parse_page_pagination(const json& d) {
    page_pagination p;
    const json* o = object_at(d, {"pagination"});
    if (o == nullptr) {
        p.next_cursor = text(d, {"next_cursor", "cursor"});
        return p;
    }
    p.start_page = opt_int(*o, {"start_page"});
    p.end_page = opt_int(*o, {"end_page"});
    p.results_per_page = opt_int(*o, {"results_per_page"});
    p.pages_fetched = opt_int(*o, {"pages_fetched"});
    p.has_more = opt_bool(*o, {"has_more", "has_next_page"});
    p.next_cursor = text(*o, {"next_cursor", "cursor"});
    if (p.next_cursor.empty()) {
        p.next_cursor = text(d, {"next_cursor"});
    }
    return p;
}

} // namespace

company_record parse_company_record(const json& o) {
    company_record c;
    c.name = text(o, {"name", "title"});
    c.universal_name = text(o, {"universalName", "universal_name"});
    c.description = text(o, {"description"});
    c.tagline = text(o, {"tagline"});
    c.website_url = text(o, {"websiteUrl", "website_url", "website"});
    c.industry = text(o, {"industry"});
    c.employee_count = opt_int(o, {"employeeCount", "employee_count"});
    if (const json* r = object_at(o, {"employeeCountRange", "employee_count_range"})) {
        c.employee_range_start = opt_int(*r, {"start"});
        c.employee_range_end = opt_int(*r, {"end"});
    }
    if (const json* hq = object_at(o, {"headquarter", "headquarters"})) {
        c.headquarter_country = text(*hq, {"country"});
        c.headquarter_city = text(*hq, {"city"});
    }
    c.logo_url = text(o, {"logoUrl", "logo_url", "logo"});
    c.organization_type = text(o, {"organizationType", "organization_type"});
    c.followers_count = opt_int(o, {"followersCount", "followers_count"});
    c.verified = opt_bool(o, {"verified"});
    c.company_url = text(o, {"company_url", "companyUrl", "url"});
    c.network_url = text(o, {"network_url"});
    c.searched_domain = text(o, {"searched_domain"});
    if (const json* f = object_at(o, {"funding"})) {
        c.is_funded = opt_bool(*f, {"isFunded", "is_funded"});
        c.funding_total_rounds = opt_int(*f, {"totalRounds", "total_rounds"});
    }
    c.raw = o;
    return c;
}

profile_record parse_profile_record(const json& o) {
    profile_record p;
    p.public_id = text(o, {"public_id", "public_identifier", "publicIdentifier"});
    p.first_name = text(o, {"first_name", "firstName"});
    p.last_name = text(o, {"last_name", "lastName"});
    p.headline = text(o, {"headline"});
    p.location = text(o, {"location"});
    p.summary = text(o, {"summary"});
    p.industry = text(o, {"industry"});
    p.profile_url = text(o, {"profile_url", "network_url", "profileUrl"});
    p.profile_urn = text(o, {"profile_urn", "entity_urn", "entityUrn"});
    p.profile_picture_url = text(o, {"profile_picture_url", "profile_picture"});
    p.email = text(o, {"email"});
    p.phone = text(o, {"phone"});
    p.website = text(o, {"website"});
    p.member_distance = opt_int(o, {"member_distance"});
    for (const auto& e : array_at(o, "experience")) {
        p.experience.push_back({text(e, {"company", "company_name"}), text(e, {"title"}), text(e, {"description"}),
                                text(e, {"start_date"}), text(e, {"end_date"})});
    }
    for (const auto& e : array_at(o, "education")) {
        p.education.push_back({text(e, {"school"}), text(e, {"degree"}), text(e, {"field_of_study"}),
                               text(e, {"start_date"}), text(e, {"end_date"})});
    }
    p.skills = strings(o, {"skills"});
    p.raw = o;
    return p;
}

post_reaction parse_post_reaction(const json& o) {
    post_reaction r;
    r.reaction_type = text(o, {"reaction_type", "type"});
    r.created_time = text(o, {"created_time", "reaction_time"});
    if (const json* actor = object_at(o, {"actor"})) {
        r.name = text(*actor, {"name"});
        r.profile_url = text(*actor, {"profile_url"});
        r.profile_picture = text(*actor, {"profile_picture"});
        r.title = text(*actor, {"title", "headline"});
        r.connection_degree = text(*actor, {"connection_degree"});
        r.actor_urn = text(*actor, {"actor_urn", "entity_urn", "urn"});
    } else {
        r.name = text(o, {"name"});
        r.profile_url = text(o, {"profile_url"});
        r.profile_picture = text(o, {"profile_picture"});
        r.title = text(o, {"subtitle", "title"});
        r.connection_degree = text(o, {"connection_degree"});
        r.actor_urn = text(o, {"actor_urn"});
    }
    r.raw = o;
    return r;
}

namespace {

profile_reaction parse_profile_reaction(const json& o) {
    profile_reaction r;
    r.reaction_id = text(o, {"reaction_id"});
    r.reaction_type = text(o, {"reaction_type", "type"});
    r.reaction_target = text(o, {"reaction_target"});
    r.reaction_time = text(o, {"reaction_time"});
    if (const json* reactor = object_at(o, {"reactor"})) {
        r.reactor_profile_url = text(*reactor, {"profile_url"});
    }
    if (const json* post = object_at(o, {"post"})) {
        r.post_urn = text(*post, {"urn"});
        r.post_url = text(*post, {"url"});
        r.post_content = text(*post, {"content"});
        if (const json* author = object_at(*post, {"author"})) {
            r.post_author_name = text(*author, {"name"});
        }
    }
    if (const json* comment = object_at(o, {"comment"})) {
        r.comment_content = text(*comment, {"content"});
    }
    r.raw = o;
    return r;
}

std::vector<std::string> event_names(const json& o) { return strings(o, {"events"}); }

} // namespace

webhook_info parse_webhook_info(const json& o) {
    webhook_info w;
    w.webhook_id = text(o, {"webhook_id", "id"});
    if (w.webhook_id.empty()) {
        fail("webhook_id must be a non-empty string");
    }
    w.account_id = text(o, {"account_id"});
    w.url = text(o, {"url"});
    w.events = event_names(o);
    w.is_active = opt_bool(o, {"is_active", "active"});
    w.signature_enabled = opt_bool(o, {"signature_enabled", "enable_signature"});
    w.stream_url = text(o, {"stream_url"});
    w.events_url = text(o, {"events_url"});
    w.raw = o;
    return w;
}

// ---------------------------------------------------------------------------------------------
// Accounts

void parse_login(const json& d, login_result& out) {
    out.account_id = required_text(d, "account_id");
    out.status = required_text(d, "status");
    out.challenge_type = text(d, {"challenge_type"});
}

void parse_checkpoint(const json& d, checkpoint_result& out) {
    out.account_id = text(d, {"account_id"});
    out.status = required_text(d, "status");
}

namespace {

account_info parse_account_info(const json& o) {
    account_info a;
    a.account_id = required_text(o, "account_id");
    a.platform = text(o, {"platform", "plateforme"});
    a.account_name = text(o, {"account_name", "name"});
    a.is_active = strict_bool(o, "is_active");
    a.status = text(o, {"status"});
    a.country = text(o, {"country"});
    a.created_at = opt_time(o, {"created_at", "createdAt"});
    a.updated_at = opt_time(o, {"updated_at", "updatedAt"});
    a.raw = o;
    return a;
}

} // namespace

void parse_accounts_page(const json& d, accounts_page& out) {
    for (const auto& item : array_at(d, "items")) {
        out.items.push_back(parse_account_info(item));
    }
    out.total = strict_int(d, "total");
    out.limit = opt_int(d, {"limit"});
    out.offset = opt_int(d, {"offset"});
}

void parse_account_reply(const json& d, account_reply& out) { out.account = parse_account_info(d); }

void parse_credits(const json& d, credits_result& out) {
    auto credits = strict_int(d, "credits");
    if (!credits) {
        fail("credits must be an integer");
    }
    out.credits = *credits;
}

// ---------------------------------------------------------------------------------------------
// Profiles

void parse_profile_reply(const json& d, profile_reply& out) {
    const json* inner = object_at(d, {"profile"});
    out.profile = parse_profile_record(inner != nullptr ? *inner : d);
}

void parse_contact(const json& d, contact_info& out) {
    const json* inner = object_at(d, {"contact", "contact_info"});
    const json& c = inner != nullptr ? *inner : d;
    out.emails = strings(c, {"emails"});
    out.phones = strings(c, {"phones", "phone_numbers"});
    out.email = text(c, {"email"});
    out.phone = text(c, {"phone", "phone_number"});
    out.website = text(c, {"website"});
    if (out.email.empty() && !out.emails.empty()) {
        out.email = out.emails.front();
    }
    if (out.phone.empty() && !out.phones.empty()) {
        out.phone = out.phones.front();
    }
}

void parse_visit(const json& d, visit_result& out) {
    out.profile_url = text(d, {"profile_url", "network_url"});
    out.visited = opt_bool(d, {"visited", "success"});
}

void parse_people_page(const json& d, people_page& out) {
    const json& items = d.contains("results") ? array_at(d, "results") : array_at(d, "profiles");
    for (const auto& o : items) {
        person_hit h;
        h.public_id = text(o, {"public_id", "public_identifier"});
        h.first_name = text(o, {"first_name", "firstName"});
        h.last_name = text(o, {"last_name", "lastName"});
        h.headline = text(o, {"headline", "title"});
        h.location = text(o, {"location"});
        h.profile_picture_url = text(o, {"profile_picture_url", "profile_picture"});
        h.profile_url = text(o, {"network_url", "profile_url", "url"});
        h.invitation_state = text(o, {"invitation_state"});
        h.member_distance = opt_int(o, {"member_distance"});
        h.raw = o;
        out.results.push_back(std::move(h));
    }
    out.total_results = strict_int(d, "total_results");
    out.total_available_results = opt_int(d, {"total_available_results"});
    out.has_more = opt_bool(d, {"has_more", "has_next_page"});
    out.next_start_page = opt_int(d, {"next_start_page", "next_page"});
    if (const json* pg = object_at(d, {"pagination"})) {
        if (!out.has_more) {
            out.has_more = opt_bool(*pg, {"has_more", "has_next_page"});
        }
        if (!out.next_start_page) {
            out.next_start_page = opt_int(*pg, {"next_start_page", "next_page"});
        }
        if (!out.next_start_page && out.has_more.value_or(false)) {
            if (auto end = opt_int(*pg, {"end_page"})) {
                out.next_start_page = *end + 1;
            }
        }
    }
}

void parse_companies_page(const json& d, companies_page& out) {
    const json& items = d.contains("results") ? array_at(d, "results") : array_at(d, "companies");
    for (const auto& o : items) {
        out.results.push_back(parse_company_record(o));
    }
    out.total_results = strict_int(d, "total_results");
    out.total_available_results = opt_int(d, {"total_available_results"});
}

void parse_company_reply(const json& d, company_reply& out) {
    const json* inner = object_at(d, {"company"});
    out.company = parse_company_record(inner != nullptr ? *inner : d);
}

void parse_profile_reactions_page(const json& d, profile_reactions_page& out) {
    for (const auto& o : array_at(d, "reactions")) {
        out.reactions.push_back(parse_profile_reaction(o));
    }
    out.total_results = strict_int(d, "total_results");
    out.profile_url = text(d, {"profile_url"});
    out.pagination = parse_page_pagination(d);
}

// ---------------------------------------------------------------------------------------------
// Network

void parse_invite(const json& d, invite_result& out) {
    out.invitation_urn = text(d, {"invitation_urn", "invitationUrn", "entity_urn"});
    out.invitation_id = exact_id_field(d, {"invitation_id", "invitationId"}, "invitation_id");
    if (!out.invitation_id && !out.invitation_urn.empty()) {
        out.invitation_id = id_from_urn(out.invitation_urn);
    }
    out.profile_urn = text(d, {"profile_urn", "profileUrn"});
    out.first_name = text(d, {"first_name", "firstName"});
    out.last_name = text(d, {"last_name", "lastName"});
    out.headline = text(d, {"headline"});
    out.public_identifier = text(d, {"public_identifier", "public_id", "publicIdentifier"});
    out.profile_picture_url = text(d, {"profile_picture_url", "profile_picture"});
}

void parse_invitation_status(const json& d, invitation_status& out) {
    std::string state = required_text(d, "invitation_state");
    if (state == "ACCEPTED") {
        out.state = invitation_state::accepted;
    } else if (state == "PENDING") {
        out.state = invitation_state::pending;
    } else if (state == "NO_INVITATION") {
        out.state = invitation_state::no_invitation;
    } else {
        fail("invitation_state '" + state + "' is not ACCEPTED, PENDING or NO_INVITATION");
    }
    auto type = d.find("invitation_type");
    if (type == d.end() || type->is_null()) {
        out.type = invitation_type::none;
    } else if (*type == "CONNECTED") {
        out.type = invitation_type::connected;
    } else if (*type == "SENT") {
        out.type = invitation_type::sent;
    } else if (*type == "RECEIVED") {
        out.type = invitation_type::received;
    } else {
        fail("invitation_type " + type->dump() + " is not CONNECTED, SENT, RECEIVED or null");
    }
    if (out.state == invitation_state::pending &&
        out.type != invitation_type::sent && out.type != invitation_type::received) {
        fail("a PENDING invitation must be SENT or RECEIVED");
    }
    out.invitation_id = exact_id_field(d, {"invitation_id", "invitationId"}, "invitation_id");
    out.member_distance = opt_int(d, {"member_distance"});
    out.message = text(d, {"message"});
}

void parse_withdraw(const json& d, withdraw_result& out) {
    out.withdrawn = strict_bool(d, "withdrawn").value_or(true);
    out.invitation_id = exact_id_field(d, {"invitation_id", "invitationId"}, "invitation_id");
}

void parse_invitations_page(const json& d, invitations_page& out) {
    for (const auto& o : array_at(d, "invitations")) {
        invitation_item item;
        item.entity_urn = text(o, {"entity_urn", "entityUrn"});
        item.shared_secret = text(o, {"shared_secret", "sharedSecret"});
        item.invitation_id = exact_id_field(o, {"invitation_id", "invitationId"}, "invitations[].invitation_id");
        if (!item.invitation_id && !item.entity_urn.empty()) {
            item.invitation_id = id_from_urn(item.entity_urn);
        }
        item.invitation_type = text(o, {"invitation_type"});
        item.sent_time = text(o, {"sent_time"});
        item.sent_time_days = opt_int(o, {"sent_time_days"});
        if (const json* who = object_at(o, {"sender", "recipient", "from", "to"})) {
            item.person = parse_person_ref(*who);
        }
        item.raw = o;
        out.invitations.push_back(std::move(item));
    }
    out.total_results = strict_int(d, "total_results");
    out.total_available_results = opt_int(d, {"total_available_results"});
    out.pagination = parse_offset_pagination(d);
}

void parse_decline(const json& d, decline_result& out) {
    out.status = text(d, {"status"});
    out.message = text(d, {"message"});
}

void parse_connections_page(const json& d, connections_page& out) {
    for (const auto& o : array_at(d, "connections")) {
        connection_item c;
        c.person = parse_person_ref(o);
        c.job_title = text(o, {"job_title", "headline"});
        c.connected_at = opt_time(o, {"connected_at", "connectedAt", "created_at"});
        c.raw = o;
        out.connections.push_back(std::move(c));
    }
    out.total_results = strict_int(d, "total_results");
    out.total_available_results = opt_int(d, {"total_available_results"});
    out.pagination = parse_offset_pagination(d);
}

// ---------------------------------------------------------------------------------------------
// Messages

void parse_send_message(const json& d, send_message_result& out) {
    out.entity_urn = text(d, {"entityUrn", "entity_urn", "message_urn"});
    out.conversation_id = text(d, {"conversation_id", "conversationId"});
    out.delivered_at = opt_time(d, {"deliveredAt", "delivered_at"});
}

void parse_inbox_page(const json& d, inbox_page& out) {
    for (const auto& o : array_at(d, "conversations")) {
        inbox_conversation c;
        c.conversation_id = text(o, {"conversation_id", "conversationId", "entity_urn"});
        if (const json* p = object_at(o, {"participant"})) {
            c.participant = parse_person_ref(*p);
        }
        if (const json* m = object_at(o, {"last_message"})) {
            c.last_message_text = text(*m, {"text", "message_text"});
            c.last_message_at = opt_time(*m, {"time", "timestamp", "deliveredAt"});
            if (const json* s = object_at(*m, {"sender"})) {
                c.last_message_sender_name = text(*s, {"name"});
                c.last_message_from_me = opt_bool(*s, {"is_me"});
            }
        }
        c.unread = opt_int(o, {"unread", "unread_count"});
        c.type = text(o, {"type"});
        c.raw = o;
        out.conversations.push_back(std::move(c));
    }
    out.total_results = strict_int(d, "total_results");
    out.next_cursor = text(d, {"next_cursor", "cursor"});
}

void parse_conversation_page(const json& d, conversation_page& out) {
    out.total_message_count = opt_int(d, {"total_message_count"});
    out.unread_count = opt_int(d, {"unread_count"});
    out.last_seen_at = opt_time(d, {"last_seen_at"});
    for (const auto& o : array_at(d, "messages")) {
        conversation_message m;
        m.text = text(o, {"text", "message_text"});
        m.at = opt_time(o, {"timestamp", "time", "deliveredAt", "delivered_at"});
        if (const json* info = object_at(o, {"sender_info", "sender"})) {
            person_ref p = parse_person_ref(*info);
            m.sender_name = p.name;
            m.sender_profile_url = p.profile_url;
            m.from_me = opt_bool(*info, {"is_me"});
        }
        if (auto it = o.find("sender"); it != o.end() && it->is_string()) {
            m.sender_name = it->get<std::string>();
        }
        if (!m.from_me) {
            m.from_me = opt_bool(o, {"is_me", "from_me", "is_from_me"});
        }
        m.message_type = text(o, {"message_type", "type"});
        m.entity_urn = text(o, {"entity_urn", "entityUrn"});
        m.raw = o;
        out.messages.push_back(std::move(m));
    }
    out.next_cursor = text(d, {"next_cursor", "cursor"});
}

// ---------------------------------------------------------------------------------------------
// Content, mail

void parse_post_created(const json& d, post_created& out) {
    out.post_url = text(d, {"post_url", "url"});
    out.post_urn = text(d, {"post_urn", "urn"});
}

void parse_post_reactions_page(const json& d, post_reactions_page& out) {
    for (const auto& o : array_at(d, "reactions")) {
        out.reactions.push_back(parse_post_reaction(o));
    }
    out.total_results = strict_int(d, "total_results");
    out.total_available_results = opt_int(d, {"total_available_results"});
    out.pagination = parse_page_pagination(d);
}

void parse_email_lookup(const json& d, email_lookup& out) {
    out.email = text(d, {"email"});
    out.valid = opt_bool(d, {"valid", "is_valid"});
    out.status = text(d, {"status"});
    out.profile_url = text(d, {"profile_url", "network_url"});
}

// ---------------------------------------------------------------------------------------------
// Webhooks

void parse_webhook_created(const json& d, webhook_created& out) {
    const json* inner = object_at(d, {"webhook"});
    out.webhook = parse_webhook_info(inner != nullptr ? *inner : d);
    out.secret = text(d, {"secret", "signing_secret"});
}

void parse_webhook_reply(const json& d, webhook_reply& out) {
    const json* inner = object_at(d, {"webhook"});
    out.webhook = parse_webhook_info(inner != nullptr ? *inner : d);
}

void parse_webhook_list(const json& d, webhook_list& out) {
    const json& items = d.contains("webhooks") ? array_at(d, "webhooks") : array_at(d, "items");
    for (const auto& o : items) {
        out.webhooks.push_back(parse_webhook_info(o));
    }
}

void parse_webhook_monitoring(const json& d, webhook_monitoring& out) {
    out.webhook_id = text(d, {"webhook_id", "id"});
    out.account_id = text(d, {"account_id"});
    out.monitoring = strict_bool(d, "monitoring");
}

void parse_rotated_secret(const json& d, rotated_secret& out) {
    out.webhook_id = text(d, {"webhook_id", "id"});
    out.secret = required_text(d, "secret");
    out.signature_scheme = text(d, {"signature_scheme"});
}

namespace {

void read_message_event(const json& ev, webhook_event& out) {
    // Documented: event.{message_text, sender_name, sender_profile}; third-party samples:
    // event.data.{conversation_id, sender_profile_url, message_text}, event.sender.{name,
    // profile_url}, event.metadata.delivered_at.
    const json* data = object_at(ev, {"data"});
    const json* sender = object_at(ev, {"sender"});
    const json* meta = object_at(ev, {"metadata"});
    auto pick = [&](std::initializer_list<std::string_view> keys) {
        std::string v = text(ev, keys);
        if (v.empty() && data != nullptr) {
            v = text(*data, keys);
        }
        return v;
    };
    out.message_text = pick({"message_text", "text", "message"});
    out.sender_name = pick({"sender_name"});
    out.sender_profile_url = pick({"sender_profile", "sender_profile_url"});
    if (sender != nullptr) {
        if (out.sender_name.empty()) {
            out.sender_name = text(*sender, {"name"});
        }
        if (out.sender_profile_url.empty()) {
            out.sender_profile_url = text(*sender, {"profile_url", "network_url"});
        }
    }
    out.conversation_id = pick({"conversation_id", "conversationId"});
    out.message_id = pick({"message_id", "entity_urn", "entityUrn", "message_urn"});
    out.delivered_at = opt_time(ev, {"delivered_at", "deliveredAt"});
    if (!out.delivered_at && meta != nullptr) {
        out.delivered_at = opt_time(*meta, {"delivered_at", "deliveredAt"});
    }
    if (!out.delivered_at && data != nullptr) {
        out.delivered_at = opt_time(*data, {"delivered_at", "deliveredAt"});
    }
}

new_connection parse_new_connection(const json& o) {
    new_connection c;
    c.profile_url = text(o, {"profile_url", "network_url"});
    c.public_identifier = text(o, {"public_identifier", "public_id"});
    c.first_name = text(o, {"first_name", "firstName"});
    c.last_name = text(o, {"last_name", "lastName"});
    c.name = text(o, {"name"});
    if (c.name.empty() && !(c.first_name.empty() && c.last_name.empty())) {
        c.name = c.first_name + (c.first_name.empty() || c.last_name.empty() ? "" : " ") + c.last_name;
    }
    c.invitation_id = exact_id_field(o, {"invitation_id", "invitationId"}, "invitation_id");
    return c;
}

void read_accepted_event(const json& ev, webhook_event& out) {
    // Shapes (api-facts 1.4): flat on event (the sandbox's default), event.data, a list
    // (`new_connections[]` or `connections[]`, on the event or under its data), or the person
    // under `person`, `connection` or `profile`.
    const json* data = object_at(ev, {"data"});
    const json* list = find_any(ev, {"new_connections", "connections"});
    if ((list == nullptr || !list->is_array()) && data != nullptr) {
        list = find_any(*data, {"new_connections", "connections"});
    }
    if (list != nullptr && list->is_array()) {
        for (const auto& o : *list) {
            if (o.is_object()) {
                out.connections.push_back(parse_new_connection(o));
            }
        }
    } else {
        const json* person = object_at(ev, {"person", "connection", "profile"});
        const json& from = person != nullptr ? *person : data != nullptr ? *data : ev;
        out.connections.push_back(parse_new_connection(from));
    }
    std::erase_if(out.connections,
                  [](const new_connection& c) { return c.profile_url.empty() && c.public_identifier.empty(); });
    if (out.connections.empty()) {
        fail("accepted_invitation names nobody by profile URL or public identifier");
    }
}

} // namespace

namespace {

// Type names seen for each kind: the documented ones (api-facts 1.1) and those of other readings
// of the spec (the subscription filter's names, third-party consumers).
event_type kind_of(std::string_view name) {
    if (name == "message" || name == "message_received" || name == "new_message") {
        return event_type::message;
    }
    if (name == "accepted_invitation" || name == "invitation_accepted" || name == "new_connection" ||
        name == "connection_accepted") {
        return event_type::accepted_invitation;
    }
    if (name == "disconnection" || name == "account_disconnected" || name == "disconnected") {
        return event_type::disconnection;
    }
    return event_type::unknown;
}

// The event's own fields in one object, wherever the envelope keeps them: `event` as an object
// (the documented wrapper), a top-level `data` object (flat envelopes), or both (a type object
// beside the data); the wrapper itself when neither is there.
// The first of `keys` that holds a non-empty string (a type is a name: a number there is no type).
std::string type_at(const json& o, std::initializer_list<std::string_view> keys) {
    for (auto k : keys) {
        auto it = o.find(k);
        if (it != o.end() && it->is_string() && !it->get<std::string>().empty()) {
            return it->get<std::string>();
        }
    }
    return {};
}

json event_body(const json& wrapper, const json* ev, const json* data) {
    if (ev != nullptr && data == nullptr) {
        return *ev;
    }
    if (ev == nullptr && data != nullptr) {
        return *data;
    }
    if (ev == nullptr) {
        return wrapper;
    }
    json merged = *data;
    for (const auto& [k, v] : ev->items()) {
        merged[k] = v;
    }
    return merged;
}

} // namespace

// Reads an event in any envelope a faithful reading of the spec may use (api-facts 1.2-1.5 and
// 7.7): the wrapper `{account_id, event{type, ...}, timestamp}`; flat forms with the type as a
// string under `type`, `event` or `event_type` and the fields under `data`; the fields under
// `event.data` or `event.sender`. An unknown type is passed through (event_type::unknown); an
// event with no type anywhere, or an acceptance that names nobody, is malformed. A message may
// name its sender by other means than a profile (a phone number on the messaging platform): the
// reader decides whether it can use it.
webhook_event parse_event_wrapper(const json& wrapper) {
    if (!wrapper.is_object()) {
        fail("the event is not a JSON object");
    }
    const json* ev = object_at(wrapper, {"event"});
    const json* data = object_at(wrapper, {"data", "payload"});
    webhook_event out;
    if (ev != nullptr) {
        out.type_name = type_at(*ev, {"type", "event_type", "event", "name"});
    }
    if (out.type_name.empty()) {
        out.type_name = type_at(wrapper, {"type", "event_type", "event"});
    }
    if (out.type_name.empty() && data != nullptr) {
        out.type_name = type_at(*data, {"type", "event_type"});
    }
    if (out.type_name.empty()) {
        fail("the event names no type (looked at event.type, type, event, event_type and data.type)");
    }
    json body = event_body(wrapper, ev, data);
    out.account_id = text(wrapper, {"account_id"});
    if (out.account_id.empty()) {
        out.account_id = text(body, {"account_id"});
    }
    out.account_name = text(wrapper, {"account_name"});
    out.event_id = text(wrapper, {"event_id", "id"});
    if (out.event_id.empty()) {
        out.event_id = text(body, {"event_id"});
    }
    out.timestamp = opt_time(wrapper, {"timestamp", "created_at"});
    out.occurred_at = opt_time(body, {"timestamp", "occurred_at"});
    out.type = kind_of(out.type_name);
    switch (out.type) {
    case event_type::message:
        read_message_event(body, out);
        break;
    case event_type::accepted_invitation:
        read_accepted_event(body, out);
        break;
    case event_type::disconnection:
        out.reason = text(body, {"reason", "message"});
        break;
    case event_type::unknown: // newer event types are passed through, not rejected
        break;
    }
    out.raw = wrapper;
    return out;
}

// A page of polled events. Items are read one by one: an item whose event cannot be read is
// kept raw in unreadable_items rather than failing the page (the rest of it is still good).
void parse_events_page(const json& d, events_page& out) {
    const json& items = d.contains("items") ? array_at(d, "items") : array_at(d, "events");
    for (const auto& o : items) {
        polled_event p;
        p.event_id = text(o, {"event_id", "id"});
        const json* wrapper = object_at(o, {"event"});
        if (p.event_id.empty() && wrapper != nullptr) {
            p.event_id = text(*wrapper, {"event_id", "id"});
        }
        if (p.event_id.empty()) {
            fail("an events item has no `event_id`");
        }
        p.created_at = opt_time(o, {"created_at", "timestamp"});
        try {
            p.event = parse_event_wrapper(wrapper != nullptr ? *wrapper : o);
        } catch (const malformed& m) {
            out.unreadable_items.push_back({p.event_id, m.what, o});
            continue;
        }
        out.items.push_back(std::move(p));
    }
    out.has_more = opt_bool(d, {"has_more"});
    if (!out.has_more) {
        if (const json* pg = object_at(d, {"pagination"})) {
            out.has_more = opt_bool(*pg, {"has_more"});
        }
    }
    out.next_after = text(d, {"next_after"});
    if (out.next_after.empty() && !out.items.empty()) {
        out.next_after = out.items.back().event_id;
    }
    out.next_cursor = text(d, {"next_cursor", "cursor"});
    if (out.next_cursor.empty()) {
        if (const json* pg = object_at(d, {"pagination"})) {
            out.next_cursor = text(*pg, {"next_cursor", "cursor"});
        }
    }
}

// ---------------------------------------------------------------------------------------------
// V1

void parse_company_v1(const json& d, company_v1_reply& out) {
    const json* inner = object_at(d, {"company"});
    out.company = parse_company_record(inner != nullptr ? *inner : d);
}

void parse_data_company_search(const json& d, data_company_search_result& out) {
    out.total_results = strict_int(d, "total_results");
    for (const auto& o : array_at(d, "companies")) {
        out.companies.push_back(parse_company_record(o));
    }
    out.enriched = strict_bool(d, "enriched");
    out.funded_only = strict_bool(d, "funded_only");
}

void parse_data_profile_search(const json& d, data_profile_search_result& out) {
    out.total_results = strict_int(d, "total_results");
    for (const auto& o : array_at(d, "profiles")) {
        out.profiles.push_back({text(o, {"url", "profile_url"}), text(o, {"title"}), text(o, {"description"})});
    }
}

void parse_profile_enrichment(const json& d, profile_enrichment& out) {
    if (const json* s = object_at(d, {"person_searched"})) {
        out.searched_first_name = text(*s, {"first_name"});
        out.searched_last_name = text(*s, {"last_name"});
        out.searched_company_name = text(*s, {"company_name"});
    }
    if (const json* np = object_at(d, {"network_profile"})) {
        out.found = true;
        out.network_url = text(*np, {"network_url", "profile_url"});
        out.profile_title = text(*np, {"profile_title"});
        out.profile_description = text(*np, {"profile_description"});
    }
    if (const json* full = object_at(d, {"full_profile_data"})) {
        out.full_profile = parse_profile_record(*full);
    }
}

void parse_profile_reactions(const json& d, profile_reactions_result& out) {
    for (const auto& o : array_at(d, "reactions")) {
        out.reactions.push_back(parse_profile_reaction(o));
    }
    out.total_results = strict_int(d, "total_results");
    out.profile_url = text(d, {"profile_url"});
    out.entity_urn = text(d, {"entity_urn"});
    out.profile_urn = text(d, {"profile_urn"});
    out.pagination = parse_page_pagination(d);
}

void parse_post_reactions(const json& d, post_reactions_result& out) {
    for (const auto& o : array_at(d, "reactions")) {
        out.reactions.push_back(parse_post_reaction(o));
    }
    out.total_results = strict_int(d, "total_results");
    out.total_available_results = opt_int(d, {"total_available_results"});
    out.pagination = parse_page_pagination(d);
}

namespace {

job_posting parse_job(const json& o) {
    job_posting j;
    j.job_title = text(o, {"job_title", "title"});
    j.location = text(o, {"location"});
    j.job_type = text(o, {"job_type"});
    j.job_seniority = text(o, {"job_seniority"});
    j.job_board = text(o, {"job_board"});
    j.job_board_url = text(o, {"job_board_url", "job_url"});
    j.date_posted = text(o, {"date_posted"});
    if (const json* desc = find_any(o, {"description"}); desc != nullptr && desc->is_string()) {
        j.description = desc->get<std::string>();
    }
    j.is_remote = opt_bool(o, {"is_remote"});
    if (const json* s = object_at(o, {"salary"})) {
        j.salary_min = opt_number(*s, {"min", "min_amount"});
        j.salary_max = opt_number(*s, {"max", "max_amount"});
        j.salary_currency = text(*s, {"currency"});
    }
    j.sectors = strings(o, {"sectors"});
    j.raw = o;
    return j;
}

} // namespace

void parse_hiring_companies(const json& d, hiring_companies_result& out) {
    for (const auto& o : array_at(d, "companies")) {
        hiring_company c;
        c.name = text(o, {"name"});
        c.website = text(o, {"website"});
        c.network_url = text(o, {"network_url"});
        c.indeed_url = text(o, {"indeed_url"});
        c.tagline = text(o, {"tagline"});
        c.description = text(o, {"description"});
        c.industry = text(o, {"industry"});
        c.employee_count = opt_int(o, {"employee_count"});
        c.followers_count = opt_int(o, {"followers_count"});
        c.jobs_count = opt_int(o, {"jobs_count"});
        for (const auto& j : array_at(o, "jobs")) {
            c.jobs.push_back(parse_job(j));
        }
        c.raw = o;
        out.companies.push_back(std::move(c));
    }
    out.pagination = parse_page_pagination(d);
    out.credits_cost = strict_int(d, "credits_cost");
    out.credits_remaining = opt_int(d, {"credits_remaining"});
    out.nb_companies = opt_int(d, {"nb_companies"});
    out.nb_jobs = opt_int(d, {"nb_jobs"});
}

void parse_messaging_send(const json& d, messaging_send_result& out) { out.status = text(d, {"status"}); }

namespace {

webhook_account parse_webhook_account(const json& o) {
    webhook_account a;
    a.id = text(o, {"id", "account_id"});
    if (a.id.empty()) {
        fail("a webhook account needs an `id`");
    }
    a.platform = text(o, {"platform", "plateforme"});
    a.account_name = text(o, {"account_name"});
    a.webhook_url = text(o, {"webhook_url"});
    a.is_active = strict_bool(o, "is_active");
    a.is_authenticated = opt_bool(o, {"is_authenticated"});
    a.needs_qr = opt_bool(o, {"needs_qr"});
    a.country = text(o, {"country"});
    a.login_token = text(o, {"login_token"});
    a.phone_number = text(o, {"phone_number"});
    a.qr_webhook_url = text(o, {"qr_webhook_url"});
    a.created_at = opt_time(o, {"created_at"});
    a.updated_at = opt_time(o, {"updated_at"});
    a.raw = o;
    return a;
}

} // namespace

void parse_webhook_account_reply(const json& d, webhook_account_reply& out) {
    const json* inner = object_at(d, {"account"});
    out.account = parse_webhook_account(inner != nullptr ? *inner : d);
}

void parse_webhook_account_list(const json& d, webhook_account_list& out) {
    const json& items = d.contains("accounts") ? array_at(d, "accounts") : array_at(d, "items");
    for (const auto& o : items) {
        out.accounts.push_back(parse_webhook_account(o));
    }
}

void parse_webhook_account_stopped(const json& d, webhook_account_stopped& out) {
    out.account_id = text(d, {"account_id", "id"});
    out.is_active = strict_bool(d, "is_active");
}

} // namespace orch::outreach::detail

// ---------------------------------------------------------------------------------------------
// Public parsing entry points and enum names

namespace orch::outreach {

result<webhook_event> parse_webhook_event(const json& wrapper) {
    try {
        return detail::parse_event_wrapper(wrapper);
    } catch (const detail::malformed& m) {
        return make_malformed(m.what, 0, false);
    } catch (const std::exception& e) {
        return make_malformed(e.what(), 0, false);
    }
}

result<webhook_event> parse_webhook_event(std::string_view raw_body) {
    json body = json::parse(raw_body, nullptr, false);
    if (body.is_discarded()) {
        return make_malformed("the webhook body is not JSON: " + orch::engine::json_syntax_error(raw_body), 0, false);
    }
    return parse_webhook_event(body);
}

std::string_view to_string(platform p) { return p == platform::network ? "network" : "messaging"; }

std::string_view to_string(invitation_state s) {
    switch (s) {
    case invitation_state::accepted: return "ACCEPTED";
    case invitation_state::pending: return "PENDING";
    case invitation_state::no_invitation: return "NO_INVITATION";
    }
    return "?";
}

std::string_view to_string(invitation_type t) {
    switch (t) {
    case invitation_type::none: return "null";
    case invitation_type::connected: return "CONNECTED";
    case invitation_type::sent: return "SENT";
    case invitation_type::received: return "RECEIVED";
    }
    return "?";
}

std::string_view to_string(event_type t) {
    switch (t) {
    case event_type::message: return "message";
    case event_type::accepted_invitation: return "accepted_invitation";
    case event_type::disconnection: return "disconnection";
    case event_type::unknown: return "unknown";
    }
    return "?";
}

} // namespace orch::outreach
