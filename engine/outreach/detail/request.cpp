#include "engine/outreach/detail/request.hpp"

#include <cctype>

namespace orch::outreach::detail {

namespace {

void put(json& j, const char* key, const std::string& v) {
    if (!v.empty()) {
        j[key] = v;
    }
}

void put(json& j, const char* key, const std::vector<std::string>& v) {
    if (!v.empty()) {
        j[key] = v;
    }
}

template <typename T>
void put(json& j, const char* key, const std::optional<T>& v) {
    if (v) {
        j[key] = *v;
    }
}

void merge(json& j, const json& extra) {
    if (extra.is_object()) {
        for (const auto& [k, v] : extra.items()) {
            j[k] = v;
        }
    }
}

json file_json(const post_file& f, bool with_alt) {
    if (!f.url.empty() && f.data_base64.empty()) {
        return f.url;
    }
    json out = {{"filename", f.filename}, {"data", f.data_base64}};
    if (with_alt && !f.alt_text.empty()) {
        out["altText"] = f.alt_text;
    }
    return out;
}

void put_post(json& j, const std::string& message, const std::optional<post_file>& file,
              const std::optional<post_file>& thumbnail, const std::vector<post_file>& files) {
    put(j, "message", message);
    if (file) {
        j["file"] = file_json(*file, false);
    }
    if (thumbnail) {
        j["thumbnail"] = file_json(*thumbnail, false);
    }
    if (!files.empty()) {
        json arr = json::array();
        for (const auto& f : files) {
            json item = {{"filename", f.filename}, {"data", f.data_base64}};
            if (!f.alt_text.empty()) {
                item["altText"] = f.alt_text;
            }
            arr.push_back(std::move(item));
        }
        j["files"] = std::move(arr);
    }
}

void put_job_filter(json& j, const job_filter& f) {
    put(j, "job_title", f.job_title);
    put(j, "job_title_include_all", f.job_title_include_all);
    put(j, "job_title_excluded", f.job_title_excluded);
    put(j, "location", f.location);
    put(j, "is_remote", f.is_remote);
    put(j, "job_type", f.job_type);
    put(j, "hours_old", f.hours_old);
    put(j, "total_results", f.total_results);
    put(j, "fetch_description", f.fetch_description);
    put(j, "enrich_company", f.enrich_company);
    put(j, "start_page", f.start_page);
    put(j, "end_page", f.end_page);
}

} // namespace

json to_json(const login_params& p) {
    json j = {{"platform", to_string(p.platform)}};
    put(j, "country", p.country);
    put(j, "login_token", p.login_token);
    put(j, "email", p.email);
    put(j, "password", p.password);
    return j;
}

json to_json(const checkpoint_params& p) {
    json j = {{"account_id", p.account_id}};
    put(j, "code", p.code);
    return j;
}

json to_json(const get_profile_params& p) {
    json j = json::object();
    put(j, "profile_url", p.profile_url);
    put(j, "identifier", p.identifier);
    put(j, "profile_urn", p.profile_urn);
    return j;
}

json to_json(const profile_url_params& p) {
    json j = json::object();
    put(j, "profile_url", p.profile_url);
    return j;
}

json to_json(const search_people_params& p) {
    json j = json::object();
    put(j, "keyword", p.keyword);
    put(j, "first_name", p.first_name);
    put(j, "last_name", p.last_name);
    put(j, "title", p.title);
    put(j, "company_name", p.company_name);
    put(j, "company_url", p.company_url);
    put(j, "past_company", p.past_company);
    put(j, "location", p.location);
    put(j, "school_url", p.school_url);
    put(j, "industry", p.industry);
    put(j, "network", p.network);
    put(j, "connection_of", p.connection_of);
    put(j, "follower_of", p.follower_of);
    put(j, "fetch_invitation_state", p.fetch_invitation_state);
    put(j, "total_results", p.total_results);
    put(j, "start_page", p.start_page);
    put(j, "end_page", p.end_page);
    merge(j, p.extra);
    return j;
}

json to_json(const search_companies_params& p) {
    json j = json::object();
    put(j, "keyword", p.keyword);
    put(j, "location", p.location);
    put(j, "industry", p.industry);
    put(j, "company_size", p.company_size);
    put(j, "total_results", p.total_results);
    put(j, "start_page", p.start_page);
    put(j, "end_page", p.end_page);
    merge(j, p.extra);
    return j;
}

json to_json(const company_params& p) {
    json j = json::object();
    put(j, "company_url", p.company_url);
    return j;
}

json to_json(const profile_reactions_v2_params& p) {
    json j = json::object();
    put(j, "profile_url", p.profile_url);
    put(j, "count", p.count);
    put(j, "cursor", p.cursor);
    return j;
}

json to_json(const invite_params& p) {
    json j = json::object();
    put(j, "profile_url", p.profile_url);
    put(j, "identifier", p.identifier);
    put(j, "message", p.message);
    return j;
}

json to_json(const withdraw_params& p) {
    // A decimal string: the documented type, and safe for readers that parse numbers as doubles.
    return json{{"invitation_id", std::to_string(p.invitation_id)}};
}

json to_json(const list_invitations_params& p) {
    json j = json::object();
    put(j, "count", p.count);
    put(j, "offset", p.offset);
    put(j, "invitation_type", p.invitation_type);
    return j;
}

json to_json(const invitation_ref_params& p) {
    json j = json::object();
    put(j, "shared_secret", p.shared_secret);
    put(j, "entity_urn", p.entity_urn);
    return j;
}

json to_json(const list_connections_params& p) {
    json j = json::object();
    put(j, "count", p.count);
    put(j, "offset", p.offset);
    return j;
}

json to_json(const recommendations_params& p) {
    json j = json::object();
    put(j, "count", p.count);
    return j;
}

json to_json(const send_message_params& p) {
    json j = json::object();
    put(j, "profile_url", p.profile_url);
    put(j, "message_text", p.message_text);
    put(j, "media_link", p.media_link);
    if (p.media_file) {
        j["media_file"] = json{{"data", p.media_file->data_base64}, {"filename", p.media_file->filename}};
    }
    put(j, "media_path", p.media_path);
    return j;
}

json to_json(const list_inbox_params& p) {
    json j = json::object();
    put(j, "count", p.count);
    put(j, "category", p.category);
    put(j, "cursor", p.cursor);
    return j;
}

json to_json(const get_conversation_params& p) {
    json j = json::object();
    put(j, "conversation_id", p.conversation_id);
    put(j, "profile_url", p.profile_url);
    put(j, "count", p.count);
    put(j, "cursor", p.cursor);
    return j;
}

json to_json(const create_post_params& p) {
    json j = json::object();
    put_post(j, p.message, p.file, p.thumbnail, p.files);
    merge(j, p.extra);
    return j;
}

json to_json(const create_company_post_params& p) {
    json j = json::object();
    put(j, "company_url", p.company_url);
    put_post(j, p.message, p.file, p.thumbnail, p.files);
    merge(j, p.extra);
    return j;
}

json to_json(const content_search_params& p) {
    json j = json::object();
    put(j, "keyword", p.keyword);
    put(j, "total_results", p.total_results);
    merge(j, p.extra);
    return j;
}

json to_json(const feed_params& p) {
    json j = json::object();
    put(j, "count", p.count);
    merge(j, p.extra);
    return j;
}

json to_json(const post_target_params& p) {
    json j = json::object();
    put(j, "post_url", p.post_url);
    merge(j, p.extra);
    return j;
}

json to_json(const react_params& p) {
    json j = json::object();
    put(j, "post_url", p.post_url);
    put(j, "reaction_type", p.reaction_type);
    merge(j, p.extra);
    return j;
}

json to_json(const comment_params& p) {
    json j = json::object();
    put(j, "post_url", p.post_url);
    put(j, "message", p.message);
    merge(j, p.extra);
    return j;
}

json to_json(const answer_comment_params& p) {
    json j = json::object();
    put(j, "post_url", p.post_url);
    put(j, "comment_urn", p.comment_urn);
    put(j, "message", p.message);
    merge(j, p.extra);
    return j;
}

json to_json(const post_list_params& p) {
    json j = json::object();
    put(j, "post_url", p.post_url);
    put(j, "total_results", p.total_results);
    put(j, "start_page", p.start_page);
    put(j, "end_page", p.end_page);
    merge(j, p.extra);
    return j;
}

json to_json(const time_spent_params& p) {
    json j = json::object();
    put(j, "post_url", p.post_url);
    put(j, "duration_s", p.duration_s);
    merge(j, p.extra);
    return j;
}

json to_json(const recruiter_params& p) {
    json j = json::object();
    put(j, "job_id", p.job_id);
    put(j, "profile_url", p.profile_url);
    merge(j, p.extra);
    return j;
}

json to_json(const publish_job_params& p) {
    json j = json::object();
    put(j, "title", p.title);
    put(j, "company", p.company);
    put(j, "location", p.location);
    put(j, "description", p.description);
    merge(j, p.extra);
    return j;
}

json to_json(const find_email_params& p) {
    json j = json::object();
    put(j, "first_name", p.first_name);
    put(j, "last_name", p.last_name);
    put(j, "company_name", p.company_name);
    put(j, "domain", p.domain);
    merge(j, p.extra);
    return j;
}

json to_json(const email_params& p) {
    json j = json::object();
    put(j, "email", p.email);
    merge(j, p.extra);
    return j;
}

json to_json(const webhook_create_params& p) {
    json j = {{"account_id", p.account_id}};
    put(j, "url", p.url);
    put(j, "events", p.events);
    if (p.enable_signature) {
        j["enable_signature"] = true;
    }
    return j;
}

json to_json(const webhook_update_params& p) {
    json j = json::object();
    put(j, "url", p.url);
    put(j, "events", p.events);
    put(j, "is_active", p.is_active);
    return j;
}

json to_json(const company_info_params& p) {
    json j = json::object();
    put(j, "company_url", p.company_url);
    return j;
}

json to_json(const company_domain_params& p) {
    json j = json::object();
    put(j, "domain", p.domain);
    return j;
}

json to_json(const data_company_search_params& p) {
    json j = json::object();
    put(j, "keyword", p.keyword);
    put(j, "industry", p.industry);
    put(j, "location", p.location);
    put(j, "employee_range", p.employee_range);
    put(j, "total_results", p.total_results);
    put(j, "enrich", p.enrich);
    return j;
}

json to_json(const data_profile_search_params& p) {
    json j = json::object();
    put(j, "keyword", p.keyword);
    put(j, "job_title", p.job_title);
    put(j, "industry", p.industry);
    put(j, "school", p.school);
    put(j, "location", p.location);
    put(j, "current_company", p.current_company);
    put(j, "total_results", p.total_results);
    return j;
}

json to_json(const enrich_profile_params& p) {
    json j = json::object();
    put(j, "first_name", p.first_name);
    put(j, "last_name", p.last_name);
    put(j, "company_name", p.company_name);
    return j;
}

json to_json(const profile_reactions_params& p) {
    json j = json::object();
    put(j, "profile_url", p.profile_url);
    put(j, "proxy_country", p.proxy_country);
    put(j, "total_results", p.total_results);
    put(j, "start_page", p.start_page);
    put(j, "end_page", p.end_page);
    put(j, "cursor", p.cursor);
    return j;
}

json to_json(const post_reactions_params& p) {
    json j = json::object();
    put(j, "post_url", p.post_url);
    put(j, "login_token", p.login_token);
    put(j, "country", p.country);
    put(j, "total_results", p.total_results);
    put(j, "start_page", p.start_page);
    put(j, "end_page", p.end_page);
    return j;
}

json to_json(const hiring_companies_params& p) {
    json j = json::object();
    put_job_filter(j, p.filter);
    if (!p.job_description.is_null()) {
        j["job_description"] = p.job_description;
    }
    put(j, "country", p.country);
    put(j, "site_names", p.site_names);
    return j;
}

json to_json(const company_jobs_params& p) {
    json j = {{"company_names", p.company_names}};
    put_job_filter(j, p.filter);
    return j;
}

json to_json(const messaging_send_params& p) {
    json j = {{"account_id", p.account_id}, {"to", p.to}, {"message", p.message}};
    if (p.quote) {
        j["quoted_message_id"] = p.quote->message_id;
        j["quoted_text"] = p.quote->text;
        j["quoted_timestamp"] = p.quote->timestamp_ms;
        j["quoted_from_me"] = p.quote->from_me;
    }
    return j;
}

json to_json(const webhook_account_create_params& p) {
    json j = {{"platform", to_string(p.platform)}};
    put(j, "account_name", p.account_name);
    put(j, "webhook_url", p.webhook_url);
    put(j, "login_token", p.login_token);
    put(j, "phone_number", p.phone_number);
    put(j, "qr_webhook_url", p.qr_webhook_url);
    put(j, "country", p.country);
    return j;
}

json to_json(const webhook_account_update_params& p) {
    json j = json::object();
    put(j, "account_name", p.account_name);
    put(j, "webhook_url", p.webhook_url);
    put(j, "qr_webhook_url", p.qr_webhook_url);
    put(j, "login_token", p.login_token);
    put(j, "country", p.country);
    return j;
}

std::string v2_body(std::string_view account_id, std::string_view action, const json& params) {
    json body = {{"account_id", account_id}, {"action", action}, {"params", params}};
    return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string url_encode(std::string_view s) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out.push_back(static_cast<char>(c));
        } else {
            out.push_back('%');
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 0x0f]);
        }
    }
    return out;
}

} // namespace orch::outreach::detail
