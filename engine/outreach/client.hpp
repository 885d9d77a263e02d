// orch::outreach::client: an asynchronous C++20 client of the Outreach API (the SDK the
// orchestrator uses to talk to the API, and nothing else does).
//
// Model
//   - Every call is a coroutine: `co_await client.check_invitation(account, {url})` returns a
//     `result<T>` (a typed value or an outreach::error, see errors.hpp). No exception crosses
//     this API.
//   - One io_context thread runs everything (STYLE B3): create the client on that executor and
//     call it only from coroutines running there. No thread per request, no locks.
//   - Connections: a keep-alive pool per (scheme, host, port), at most `pool_size` connections;
//     idle ones are reused, callers beyond the bound wait (within their total deadline). A
//     request is retried on a fresh connection only when a reused connection failed before the
//     request was written; nothing that may have reached the API is ever resent.
//   - HTTPS via OpenSSL: peer verification on by default (system store, plus `extra_ca_pem`),
//     host name verification, SNI.
//   - Deadlines: connect (TCP + TLS handshake), read (write + whole response) and total
//     (including waiting for a pooled connection) per call; `call_options` overrides them.
//   - Cancellation: bind a cancellation slot to the awaiting coroutine (asio::bind_cancellation_slot
//     or the awaitable operators); a cancelled call returns error_kind::cancelled, telling
//     whether the request had been written (may_have_taken_effect for side-effecting calls).
//   - Lifetime: calls in flight keep the client's internals alive; destroying the client (or
//     calling shutdown()) closes idle connections.
//
// Side-effecting calls (may_have_taken_effect can be true): login, checkpoint, visit, invite,
// accept, decline, withdraw, send_message, every content write (create, create_company, like,
// react, comment, answer_comment, repost, time_spent), publish_job, close_job, every webhook
// change, messaging_send and every V1 webhook account change.
#pragma once

#include "engine/outreach/cost_model.hpp"
#include "engine/outreach/errors.hpp"
#include "engine/outreach/result.hpp"
#include "engine/outreach/types.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orch::outreach {

namespace asio = boost::asio;

namespace detail {
struct client_impl;
struct stream_state;
} // namespace detail

struct client_settings {
    // "https://host[:port]" or "http://host[:port]"; a path prefix ("/api") is kept.
    std::string base_url;
    std::string api_key;                           // sent as x-api-key (required)
    std::size_t pool_size = 16;                    // connections per (scheme, host, port), >= 1
    std::int64_t connect_timeout_ms = 5'000;       // resolve + TCP connect + TLS handshake
    std::int64_t read_timeout_ms = 30'000;         // writing the request and reading the whole response
    std::int64_t total_timeout_ms = 60'000;        // the whole call, pool wait and retry included
    std::int64_t idle_timeout_ms = 30'000;         // idle pooled connections older than this are not reused
    std::size_t response_body_limit_bytes = 16 * 1024 * 1024;
    bool verify_peer = true;                       // HTTPS certificate and host name verification
    std::string extra_ca_pem;                      // more trusted CA certificates (PEM text)
    std::string user_agent = "orch-outreach-client/1";
    // The spec lists the e-mail actions under /v2/mail; another listing uses /v2/enrich.
    std::string mail_category = "mail";
    // Paths of the V1-shaped endpoints. The spec does not show the path of funded search,
    // profile enrichment, profile reactions, post reactions, hiring companies and company jobs:
    // the defaults below are this client's guesses; override them per deployment.
    std::map<v1_endpoint, std::string> v1_paths = {
        {v1_endpoint::company_info, "/v1/data/company/info"},
        {v1_endpoint::company_info_by_domain, "/v1/data/company/info-by-domain"},
        {v1_endpoint::search_companies, "/v1/data/search/companies"},
        {v1_endpoint::search_funded_companies, "/v1/data/search/funded-companies"},
        {v1_endpoint::search_profiles, "/v1/data/search/profiles"},
        {v1_endpoint::enrich_profile, "/v1/data/profile/enrich"},
        {v1_endpoint::profile_reactions, "/v1/data/profile/reactions"},
        {v1_endpoint::post_reactions, "/v1/data/post/reactions"},
        {v1_endpoint::hiring_companies, "/v1/data/jobs/hiring-companies"},
        {v1_endpoint::company_jobs, "/v1/data/jobs/company-jobs"},
        {v1_endpoint::messaging_send, "/messages/send"},
        {v1_endpoint::webhook_accounts, "/v1/webhooks/accounts"},
    };
    // SSE stream (hosted webhooks): the server sends a keepalive comment every 30 s.
    std::int64_t stream_idle_timeout_ms = 75'000;  // no byte for this long: reconnect
    std::int64_t stream_reconnect_delay_ms = 250;  // first delay; doubles per failure
    std::int64_t stream_reconnect_delay_ms_max = 30'000;
    int stream_reconnect_attempts_max = 8;         // consecutive failures before next() fails
};

// Every problem of the settings, one line each (empty when valid).
std::vector<std::string> validate(const client_settings& s);

// Per-call overrides of the deadlines.
struct call_options {
    std::optional<std::int64_t> connect_timeout_ms;
    std::optional<std::int64_t> read_timeout_ms;
    std::optional<std::int64_t> total_timeout_ms;
};

struct pool_stats {
    std::size_t open = 0;              // connections (idle + in use + connecting)
    std::size_t idle = 0;
    std::size_t waiting = 0;           // calls waiting for a connection
    std::uint64_t connects = 0;        // connections ever opened
    std::uint64_t reuses = 0;          // requests sent on a reused connection
    std::uint64_t stale_retries = 0;   // requests retried because a reused connection was dead
};

// A hosted webhook's server-sent-event stream: an async generator. next() connects on first
// use, and after a dropped connection or an idle timeout reconnects with Last-Event-ID (the
// last `id:` seen), backing off between attempts. Events are never reordered; a reconnect may
// replay events the server chooses to resend, so dedupe on `id`/event_id.
class event_stream {
public:
    event_stream() = default;
    // The next event ("connected", "webhook", ...; SSE comments are skipped). Errors: cancelled;
    // api_error/http_status at connect (INVALID_API_KEY, NOT_FOUND, ... are returned at once);
    // connection_lost/timeout/transport_connect once stream_reconnect_attempts_max consecutive
    // attempts failed. An event whose data is not a readable event comes with `event` empty and
    // `problem` set (the stream stays usable).
    asio::awaitable<result<stream_event>> next();
    const std::string& last_event_id() const;
    std::size_t reconnects() const;    // reconnections so far
    void close();                      // closes the connection; next() then reconnects

private:
    friend class client;
    explicit event_stream(std::shared_ptr<detail::stream_state> s) : state_(std::move(s)) {}
    std::shared_ptr<detail::stream_state> state_;
};

class client {
public:
    // Returns an error (code INVALID_SETTINGS, stop_everything) listing every problem of the
    // settings, or of the extra CA certificates.
    static result<client> make(asio::any_io_executor executor, client_settings settings);

    const client_settings& settings() const;
    pool_stats stats() const;          // of the base URL's pool
    // Closes idle connections; calls in flight finish normally.
    void shutdown();

    // ---- Accounts, login, checkpoint, credits (free except checkpoint) ----
    asio::awaitable<result<login_result>> login(const login_params& p, call_options o = {});
    asio::awaitable<result<checkpoint_result>> checkpoint(const checkpoint_params& p, call_options o = {});
    asio::awaitable<result<accounts_page>> list_accounts(const list_accounts_params& p = {}, call_options o = {});
    asio::awaitable<result<account_reply>> get_account(std::string_view account_id, call_options o = {});
    asio::awaitable<result<credits_result>> get_credits(call_options o = {});

    // ---- /v2/profiles ----
    asio::awaitable<result<profile_reply>> get_me(std::string_view account_id, call_options o = {});
    asio::awaitable<result<profile_reply>> get_profile(std::string_view account_id, const get_profile_params& p,
                                                       call_options o = {});
    asio::awaitable<result<contact_info>> get_contact(std::string_view account_id, const profile_url_params& p,
                                                      call_options o = {});
    asio::awaitable<result<visit_result>> visit(std::string_view account_id, const profile_url_params& p,
                                                call_options o = {});
    asio::awaitable<result<people_page>> search_people(std::string_view account_id, const search_people_params& p,
                                                       call_options o = {});
    asio::awaitable<result<companies_page>> search_companies(std::string_view account_id,
                                                             const search_companies_params& p, call_options o = {});
    asio::awaitable<result<company_reply>> get_company(std::string_view account_id, const company_params& p,
                                                       call_options o = {});
    asio::awaitable<result<profile_reactions_page>> get_profile_reactions(std::string_view account_id,
                                                                          const profile_reactions_v2_params& p,
                                                                          call_options o = {});

    // ---- /v2/network ----
    asio::awaitable<result<invite_result>> invite(std::string_view account_id, const invite_params& p,
                                                  call_options o = {});
    asio::awaitable<result<invitation_status>> check_invitation(std::string_view account_id,
                                                                const profile_url_params& p, call_options o = {});
    asio::awaitable<result<withdraw_result>> withdraw(std::string_view account_id, const withdraw_params& p,
                                                      call_options o = {});
    asio::awaitable<result<invitations_page>> list_sent(std::string_view account_id,
                                                        const list_invitations_params& p = {}, call_options o = {});
    asio::awaitable<result<invitations_page>> list_invitations(std::string_view account_id,
                                                               const list_invitations_params& p = {},
                                                               call_options o = {});
    asio::awaitable<result<accept_result>> accept(std::string_view account_id, const invitation_ref_params& p,
                                                  call_options o = {});
    asio::awaitable<result<decline_result>> decline(std::string_view account_id, const invitation_ref_params& p,
                                                    call_options o = {});
    asio::awaitable<result<connections_page>> list_connections(std::string_view account_id,
                                                               const list_connections_params& p = {},
                                                               call_options o = {});
    asio::awaitable<result<people_page>> recommendations(std::string_view account_id,
                                                         const recommendations_params& p = {}, call_options o = {});

    // ---- /v2/messages ----
    asio::awaitable<result<send_message_result>> send_message(std::string_view account_id,
                                                              const send_message_params& p, call_options o = {});
    asio::awaitable<result<inbox_page>> list_inbox(std::string_view account_id, const list_inbox_params& p = {},
                                                   call_options o = {});
    asio::awaitable<result<conversation_page>> get_conversation(std::string_view account_id,
                                                                const get_conversation_params& p, call_options o = {});

    // ---- /v2/content ----
    asio::awaitable<result<post_created>> create_post(std::string_view account_id, const create_post_params& p,
                                                      call_options o = {});
    asio::awaitable<result<post_created>> create_company_post(std::string_view account_id,
                                                              const create_company_post_params& p,
                                                              call_options o = {});
    asio::awaitable<result<action_reply>> search_posts(std::string_view account_id, const content_search_params& p,
                                                       call_options o = {});
    asio::awaitable<result<action_reply>> get_feed(std::string_view account_id, const feed_params& p = {},
                                                   call_options o = {});
    asio::awaitable<result<action_reply>> like_post(std::string_view account_id, const post_target_params& p,
                                                    call_options o = {});
    asio::awaitable<result<action_reply>> react_to_post(std::string_view account_id, const react_params& p,
                                                        call_options o = {});
    asio::awaitable<result<action_reply>> comment_post(std::string_view account_id, const comment_params& p,
                                                       call_options o = {});
    asio::awaitable<result<action_reply>> answer_comment(std::string_view account_id, const answer_comment_params& p,
                                                         call_options o = {});
    asio::awaitable<result<post_created>> repost(std::string_view account_id, const comment_params& p,
                                                 call_options o = {});
    asio::awaitable<result<action_reply>> get_comments(std::string_view account_id, const post_list_params& p,
                                                       call_options o = {});
    asio::awaitable<result<post_reactions_page>> get_post_reactions(std::string_view account_id,
                                                                    const post_list_params& p, call_options o = {});
    asio::awaitable<result<action_reply>> time_spent(std::string_view account_id, const time_spent_params& p,
                                                     call_options o = {});

    // ---- /v2/recruiter ----
    asio::awaitable<result<action_reply>> recruiter_get_posts(std::string_view account_id,
                                                              const recruiter_params& p = {}, call_options o = {});
    asio::awaitable<result<action_reply>> recruiter_get_candidates(std::string_view account_id,
                                                                   const recruiter_params& p, call_options o = {});
    asio::awaitable<result<action_reply>> recruiter_get_cv(std::string_view account_id, const recruiter_params& p,
                                                           call_options o = {});
    asio::awaitable<result<action_reply>> recruiter_publish_job(std::string_view account_id,
                                                                const publish_job_params& p, call_options o = {});
    asio::awaitable<result<action_reply>> recruiter_close_job(std::string_view account_id, const recruiter_params& p,
                                                              call_options o = {});

    // ---- /v2/mail (or /v2/enrich, see client_settings::mail_category) ----
    asio::awaitable<result<email_lookup>> find_email(std::string_view account_id, const find_email_params& p,
                                                     call_options o = {});
    asio::awaitable<result<email_lookup>> reverse_email(std::string_view account_id, const email_params& p,
                                                        call_options o = {});
    asio::awaitable<result<email_lookup>> validate_email(std::string_view account_id, const email_params& p,
                                                         call_options o = {});

    // ---- V2 webhooks (all free) ----
    asio::awaitable<result<webhook_created>> create_webhook(const webhook_create_params& p, call_options o = {});
    asio::awaitable<result<webhook_list>> list_webhooks(call_options o = {});
    asio::awaitable<result<webhook_reply>> get_webhook(std::string_view webhook_id, call_options o = {});
    asio::awaitable<result<webhook_reply>> update_webhook(std::string_view webhook_id,
                                                          const webhook_update_params& p, call_options o = {});
    asio::awaitable<result<action_reply>> delete_webhook(std::string_view webhook_id, call_options o = {});
    asio::awaitable<result<webhook_monitoring>> start_webhook(std::string_view webhook_id, call_options o = {});
    asio::awaitable<result<webhook_monitoring>> stop_webhook(std::string_view webhook_id, call_options o = {});
    asio::awaitable<result<rotated_secret>> rotate_webhook_secret(std::string_view webhook_id, call_options o = {});
    asio::awaitable<result<action_reply>> delete_webhook_secret(std::string_view webhook_id, call_options o = {});
    asio::awaitable<result<events_page>> poll_webhook_events(std::string_view webhook_id,
                                                             const poll_events_params& p = {}, call_options o = {});
    // The SSE stream; `last_event_id` resumes after an event already seen.
    event_stream open_event_stream(std::string_view webhook_id, std::string_view last_event_id = {});

    // ---- V1 data endpoints ----
    asio::awaitable<result<company_v1_reply>> company_info(const company_info_params& p, call_options o = {});
    asio::awaitable<result<company_v1_reply>> company_info_by_domain(const company_domain_params& p,
                                                                     call_options o = {});
    asio::awaitable<result<data_company_search_result>> data_search_companies(const data_company_search_params& p,
                                                                              call_options o = {});
    asio::awaitable<result<data_company_search_result>> data_search_funded_companies(
        const data_company_search_params& p, call_options o = {});
    asio::awaitable<result<data_profile_search_result>> data_search_profiles(const data_profile_search_params& p,
                                                                             call_options o = {});
    asio::awaitable<result<profile_enrichment>> enrich_profile(const enrich_profile_params& p, call_options o = {});
    asio::awaitable<result<profile_reactions_result>> profile_reactions(const profile_reactions_params& p,
                                                                        call_options o = {});
    asio::awaitable<result<post_reactions_result>> post_reactions(const post_reactions_params& p,
                                                                  call_options o = {});
    asio::awaitable<result<hiring_companies_result>> hiring_companies(const hiring_companies_params& p,
                                                                      call_options o = {});
    asio::awaitable<result<hiring_companies_result>> company_jobs(const company_jobs_params& p, call_options o = {});

    // ---- POST /messages/send (messaging platform) ----
    asio::awaitable<result<messaging_send_result>> messaging_send(const messaging_send_params& p,
                                                                  call_options o = {});

    // ---- V1 webhook accounts (free) ----
    asio::awaitable<result<webhook_account_reply>> create_webhook_account(const webhook_account_create_params& p,
                                                                          call_options o = {});
    asio::awaitable<result<webhook_account_list>> list_webhook_accounts(call_options o = {});
    asio::awaitable<result<webhook_account_reply>> get_webhook_account(std::string_view id, call_options o = {});
    asio::awaitable<result<webhook_account_reply>> update_webhook_account(std::string_view id,
                                                                          const webhook_account_update_params& p,
                                                                          call_options o = {});
    asio::awaitable<result<v1_reply>> delete_webhook_account(std::string_view id, call_options o = {});
    asio::awaitable<result<v1_reply>> start_webhook_account(std::string_view id, call_options o = {});
    asio::awaitable<result<webhook_account_stopped>> stop_webhook_account(std::string_view id, call_options o = {});

    // ---- Escape hatches for anything not typed above ----
    // Any V2 action; `side_effect` decides may_have_taken_effect on failures.
    asio::awaitable<result<action_reply>> call_action(std::string_view category, std::string_view account_id,
                                                      std::string_view action, const json& params, bool side_effect,
                                                      call_options o = {});
    // Any V1-shaped call: method "GET"/"POST"/"PUT"/"DELETE", path, JSON body (null: none).
    asio::awaitable<result<v1_reply>> call_v1(std::string_view method, std::string_view path, const json& body,
                                              bool side_effect, call_options o = {});

private:
    explicit client(std::shared_ptr<detail::client_impl> impl) : impl_(std::move(impl)) {}
    std::shared_ptr<detail::client_impl> impl_;
};

} // namespace orch::outreach
