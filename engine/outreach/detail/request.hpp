// Building request bodies from the typed params (pure; unit-tested). Empty strings, empty
// lists and nullopt are left out, so the API applies its defaults. `extra` is merged last.
#pragma once

#include "engine/outreach/types.hpp"

namespace orch::outreach::detail {

json to_json(const login_params& p);
json to_json(const checkpoint_params& p);
json to_json(const get_profile_params& p);
json to_json(const profile_url_params& p);
json to_json(const search_people_params& p);
json to_json(const search_companies_params& p);
json to_json(const company_params& p);
json to_json(const profile_reactions_v2_params& p);
json to_json(const invite_params& p);
json to_json(const withdraw_params& p);
json to_json(const list_invitations_params& p);
json to_json(const invitation_ref_params& p);
json to_json(const list_connections_params& p);
json to_json(const recommendations_params& p);
json to_json(const send_message_params& p);
json to_json(const list_inbox_params& p);
json to_json(const get_conversation_params& p);
json to_json(const create_post_params& p);
json to_json(const create_company_post_params& p);
json to_json(const content_search_params& p);
json to_json(const feed_params& p);
json to_json(const post_target_params& p);
json to_json(const react_params& p);
json to_json(const comment_params& p);
json to_json(const answer_comment_params& p);
json to_json(const post_list_params& p);
json to_json(const time_spent_params& p);
json to_json(const recruiter_params& p);
json to_json(const publish_job_params& p);
json to_json(const find_email_params& p);
json to_json(const email_params& p);
json to_json(const webhook_create_params& p);
json to_json(const webhook_update_params& p);
json to_json(const company_info_params& p);
json to_json(const company_domain_params& p);
json to_json(const data_company_search_params& p);
json to_json(const data_profile_search_params& p);
json to_json(const enrich_profile_params& p);
json to_json(const profile_reactions_params& p);
json to_json(const post_reactions_params& p);
json to_json(const hiring_companies_params& p);
json to_json(const company_jobs_params& p);
json to_json(const messaging_send_params& p);
json to_json(const webhook_account_create_params& p);
json to_json(const webhook_account_update_params& p);

// The V2 request envelope {account_id, action, params}.
std::string v2_body(std::string_view account_id, std::string_view action, const json& params);
// Percent-encodes a path segment or query value (RFC 3986 unreserved characters kept).
std::string url_encode(std::string_view s);

} // namespace orch::outreach::detail
