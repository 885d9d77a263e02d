#include "engine/outreach/client.hpp"

#include "engine/outreach/detail/parse.hpp"
#include "engine/outreach/detail/request.hpp"
#include "engine/outreach/detail/sse.hpp"
#include "engine/outreach/detail/transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>

namespace orch::outreach {

namespace detail {

namespace http = beast::http;
using verb = http::verb;

struct client_impl {
    client_settings settings;
    endpoint base;
    std::shared_ptr<transport> net;
};

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// The last line of defence: asio throws operation_aborted from a co_await once the awaiting
// coroutine was cancelled; nothing else may escape a call.
error escaped(const std::exception& e, bool side_effect) {
    if (const auto* se = dynamic_cast<const boost::system::system_error*>(&e);
        se != nullptr && se->code() == asio::error::operation_aborted) {
        // Where it was thrown is unknown, so a side-effecting call may have gone out.
        return make_transport_error(error_kind::cancelled, failure_step::none, "the call was cancelled", true,
                                    side_effect);
    }
    error out = make_transport_error(error_kind::connection_lost, failure_step::none,
                                     std::string("unexpected failure: ") + e.what(), true, side_effect);
    return out;
}

template <typename T, typename Decode>
asio::awaitable<result<T>> run(std::shared_ptr<client_impl> self, endpoint ep, outgoing req, call_options o,
                               Decode decode) {
    bool side_effect = req.side_effect;
    try {
        auto d = make_deadlines(self->settings, o);
        auto answer = co_await self->net->perform(ep, std::move(req), d);
        if (!answer) {
            co_return std::move(answer).error();
        }
        co_return decode(*answer, side_effect);
    } catch (const std::exception& e) {
        co_return escaped(e, side_effect);
    }
}

template <typename T>
asio::awaitable<result<T>> v2(const std::shared_ptr<client_impl>& self, verb method, std::string target,
                              std::string body, bool side_effect, call_options o, parser_fn<T> parse) {
    outgoing req{method, std::move(target), std::move(body), side_effect};
    return run<T>(self, self->base, std::move(req), o, [parse](const http_answer& a, bool se) {
        return decode_v2<T>(a, se, parse);
    });
}

template <typename T>
asio::awaitable<result<T>> action(const std::shared_ptr<client_impl>& self, std::string_view category,
                                  std::string_view account_id, std::string_view name, const json& params,
                                  bool side_effect, call_options o, parser_fn<T> parse) {
    return v2<T>(self, verb::post, "/v2/" + std::string(category), v2_body(account_id, name, params), side_effect, o,
                 parse);
}

template <typename T>
asio::awaitable<result<T>> v1(const std::shared_ptr<client_impl>& self, verb method, std::string target,
                              const json& body, bool side_effect, bool bare_ok, call_options o, parser_fn<T> parse) {
    std::string text = body.is_null() ? std::string() : body.dump(-1, ' ', false, json::error_handler_t::replace);
    outgoing req{method, std::move(target), std::move(text), side_effect};
    return run<T>(self, self->base, std::move(req), o, [parse, bare_ok](const http_answer& a, bool se) {
        return decode_v1<T>(a, se, bare_ok, parse);
    });
}

std::string v1_path(const client_impl& c, v1_endpoint e) {
    auto it = c.settings.v1_paths.find(e);
    return it == c.settings.v1_paths.end() ? std::string() : it->second;
}

std::string webhook_path(std::string_view id, std::string_view tail = {}) {
    return "/v2/webhooks/" + url_encode(id) + std::string(tail);
}

std::string query(std::initializer_list<std::pair<const char*, std::string>> parts) {
    std::string out;
    for (const auto& [k, v] : parts) {
        if (!v.empty()) {
            out += (out.empty() ? "?" : "&") + std::string(k) + "=" + url_encode(v);
        }
    }
    return out;
}

template <typename T>
asio::awaitable<T> ready(T value) {
    co_return value;
}

std::string number_text(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : std::string(); }

} // namespace

// ---------------------------------------------------------------------------------------------
// SSE stream state

struct stream_state {
    std::shared_ptr<client_impl> owner;
    std::string webhook_id;
    std::unique_ptr<connection> conn;
    std::optional<http::response_parser<http::buffer_body>> parser;
    sse_parser sse;
    std::deque<stream_event> pending;
    std::size_t reconnects = 0;
    int failures = 0;                  // consecutive failed attempts
    bool ever_connected = false;
    std::string chunk = std::string(16 * 1024, '\0');
};

namespace {

// Opens the stream: connect, send the GET with Last-Event-ID, read the response header. A non-200
// answer is read whole and classified like any other answer.
template <typename Stream>
asio::awaitable<result<void>> open_on(Stream& s, stream_state& st, const http::request<http::string_body>& req,
                                      std::chrono::milliseconds read_timeout) {
    auto& lowest = beast::get_lowest_layer(s);
    lowest.expires_after(read_timeout);
    auto [wec, wn] = co_await http::async_write(s, req, use_tuple);
    if (wec) {
        asio::cancellation_state cs = co_await asio::this_coro::cancellation_state;
        co_return make_transport_error(cs.cancelled() != asio::cancellation_type::none ? error_kind::cancelled
                                                                                          : error_kind::connection_lost,
                                       failure_step::write, "stream request: " + wec.message(), false, false);
    }
    st.parser.emplace();
    st.parser->body_limit(boost::none);
    auto [hec, hn] = co_await http::async_read_header(s, st.conn->buffer, *st.parser, use_tuple);
    if (hec) {
        asio::cancellation_state cs = co_await asio::this_coro::cancellation_state;
        bool cancelled = cs.cancelled() != asio::cancellation_type::none;
        co_return make_transport_error(cancelled                           ? error_kind::cancelled
                                       : hec == beast::error::timeout ? error_kind::timeout
                                                                         : error_kind::connection_lost,
                                       failure_step::read, "stream response: " + hec.message(), true, false);
    }
    int status = static_cast<int>(st.parser->get().result_int());
    if (status == 200) {
        co_return result<void>{};
    }
    http_answer a;
    a.status = status;
    a.retry_after = std::string(st.parser->get()[http::field::retry_after]);
    constexpr std::size_t error_body_max = 64 * 1024;
    while (!st.parser->is_done() && a.body.size() < error_body_max) {
        st.parser->get().body().data = st.chunk.data();
        st.parser->get().body().size = st.chunk.size();
        auto [ec, n] = co_await http::async_read_some(s, st.conn->buffer, *st.parser, use_tuple);
        a.body.append(st.chunk.data(), st.chunk.size() - st.parser->get().body().size);
        if (ec && ec != http::error::need_buffer) {
            break;
        }
    }
    json body = json::parse(a.body, nullptr, false);
    co_return error_from_answer(a, body.is_discarded() ? nullptr : &body, false);
}

template <typename Stream>
asio::awaitable<result<std::size_t>> read_on(Stream& s, stream_state& st, std::chrono::milliseconds idle) {
    beast::get_lowest_layer(s).expires_after(idle);
    st.parser->get().body().data = st.chunk.data();
    st.parser->get().body().size = st.chunk.size();
    auto [ec, n] = co_await http::async_read_some(s, st.conn->buffer, *st.parser, use_tuple);
    std::size_t got = st.chunk.size() - st.parser->get().body().size;
    if (got > 0) {
        st.sse.feed(std::string_view(st.chunk.data(), got), st.pending);
        co_return got;
    }
    if (ec == http::error::need_buffer) {
        co_return std::size_t{0};
    }
    asio::cancellation_state cs = co_await asio::this_coro::cancellation_state;
    if (cs.cancelled() != asio::cancellation_type::none) {
        co_return make_transport_error(error_kind::cancelled, failure_step::read, "the stream was cancelled", false,
                                       false);
    }
    if (ec == beast::error::timeout) {
        co_return make_transport_error(error_kind::timeout, failure_step::read,
                                       "no byte on the event stream within stream_idle_timeout_ms", false, false);
    }
    co_return make_transport_error(error_kind::connection_lost, failure_step::read,
                                   "the event stream ended: " + (ec ? ec.message() : std::string("end of body")),
                                   false, false);
}

asio::awaitable<result<void>> open_stream(stream_state& st) {
    const client_impl& c = *st.owner;
    deadlines d;
    d.connect = std::chrono::milliseconds(c.settings.connect_timeout_ms);
    d.read = std::chrono::milliseconds(c.settings.read_timeout_ms);
    d.total = steady::now() + d.connect + d.read;
    auto conn = co_await c.net->connect_dedicated(c.base, d);
    if (!conn) {
        co_return std::move(conn).error();
    }
    st.conn = std::move(*conn);
    outgoing o{verb::get, webhook_path(st.webhook_id, "/stream") + query({{"api_key", c.settings.api_key}}), {},
               false};
    auto req = c.net->build(c.base, o);
    req.set(http::field::accept, "text/event-stream");
    req.set(http::field::cache_control, "no-cache");
    if (!st.sse.last_event_id().empty()) {
        req.set("Last-Event-ID", st.sse.last_event_id());
    }
    // (No co_await inside ?: — GCC 12 miscompiles temporaries there.)
    result<void> opened;
    if (st.conn->secure) {
        opened = co_await open_on(*st.conn->secure, st, req, d.read);
    } else {
        opened = co_await open_on(*st.conn->plain, st, req, d.read);
    }
    if (!opened) {
        st.conn.reset();
    }
    co_return opened;
}

bool reconnectable(const error& e) {
    return e.kind == error_kind::transport_connect ? e.what_to_do != disposition::stop_everything
                                                   : e.kind == error_kind::connection_lost ||
                                                         e.kind == error_kind::timeout || e.retryable();
}

asio::awaitable<result<void>> back_off(stream_state& st) {
    const auto& s = st.owner->settings;
    std::int64_t base = st.sse.retry_ms().value_or(s.stream_reconnect_delay_ms);
    std::int64_t delay = base;
    for (int i = 1; i < st.failures && delay < s.stream_reconnect_delay_ms_max; ++i) {
        delay *= 2;
    }
    delay = std::min(delay, s.stream_reconnect_delay_ms_max);
    asio::steady_timer timer(st.owner->net->executor(), std::chrono::milliseconds(delay));
    auto [ec] = co_await timer.async_wait(use_tuple);
    if (ec) {
        co_return make_transport_error(error_kind::cancelled, failure_step::none, "the stream was cancelled", false,
                                       false);
    }
    co_return result<void>{};
}

result<stream_event> deliver(stream_state& st) {
    stream_event ev = std::move(st.pending.front());
    st.pending.pop_front();
    // Every event but `connected` carries one: servers name them `webhook` (api-facts 1.6) or
    // after the event's type. An unreadable one is handed over with its problem, not dropped.
    if (ev.name != "connected" && ev.problem.empty()) {
        auto parsed = parse_webhook_event(std::string_view(ev.data));
        if (parsed) {
            ev.event = std::move(*parsed);
        } else {
            ev.problem = parsed.error().message;
        }
    }
    return ev;
}

// One step of next(): deliver, connect, or read. Returns an event, an error, or nullopt (loop).
asio::awaitable<std::optional<result<stream_event>>> stream_step(stream_state& st) {
    if (!st.pending.empty()) {
        co_return deliver(st);
    }
    const auto& s = st.owner->settings;
    if (!st.conn) {
        if (st.failures > 0) {
            auto waited = co_await back_off(st);
            if (!waited) {
                co_return waited.error();
            }
        }
        st.sse.reset_partial();
        auto opened = co_await open_stream(st);
        if (!opened) {
            const error& e = opened.error();
            if (e.kind == error_kind::cancelled || !reconnectable(e) || ++st.failures > s.stream_reconnect_attempts_max) {
                co_return e;
            }
            co_return std::nullopt;
        }
        st.reconnects += st.ever_connected ? 1 : 0;
        st.ever_connected = true;
        co_return std::nullopt;
    }
    auto idle = std::chrono::milliseconds(s.stream_idle_timeout_ms);
    result<std::size_t> got;
    if (st.conn->secure) {
        got = co_await read_on(*st.conn->secure, st, idle);
    } else {
        got = co_await read_on(*st.conn->plain, st, idle);
    }
    if (got) {
        st.failures = 0;
        co_return std::nullopt;
    }
    st.conn.reset();
    st.parser.reset();
    const error& e = got.error();
    if (e.kind == error_kind::cancelled || ++st.failures > s.stream_reconnect_attempts_max) {
        co_return e;
    }
    co_return std::nullopt;
}

} // namespace

} // namespace detail

// ---------------------------------------------------------------------------------------------
// event_stream

asio::awaitable<result<stream_event>> event_stream::next() {
    auto st = state_;
    if (!st) {
        co_return make_malformed("next() on an event_stream that was never opened", 0, false);
    }
    try {
        for (;;) {
            auto step = co_await detail::stream_step(*st);
            if (step) {
                co_return std::move(*step);
            }
        }
    } catch (const std::exception& e) {
        st->conn.reset();
        st->parser.reset();
        co_return detail::escaped(e, false);
    }
}

const std::string& event_stream::last_event_id() const {
    static const std::string none;
    return state_ ? state_->sse.last_event_id() : none;
}

std::size_t event_stream::reconnects() const { return state_ ? state_->reconnects : 0; }

void event_stream::close() {
    if (state_) {
        state_->conn.reset();
        state_->parser.reset();
    }
}

// ---------------------------------------------------------------------------------------------
// client

std::vector<std::string> validate(const client_settings& s) {
    std::vector<std::string> errors;
    std::string why;
    if (!detail::parse_base_url(s.base_url, why)) {
        errors.push_back(why);
    }
    if (s.api_key.empty()) {
        errors.push_back("api_key is required");
    }
    if (s.pool_size < 1) {
        errors.push_back("pool_size must be at least 1");
    }
    auto positive = [&](const char* name, std::int64_t v) {
        if (v <= 0) {
            errors.push_back(std::string(name) + " must be positive, got " + std::to_string(v));
        }
    };
    positive("connect_timeout_ms", s.connect_timeout_ms);
    positive("read_timeout_ms", s.read_timeout_ms);
    positive("total_timeout_ms", s.total_timeout_ms);
    positive("idle_timeout_ms", s.idle_timeout_ms);
    positive("stream_idle_timeout_ms", s.stream_idle_timeout_ms);
    positive("stream_reconnect_delay_ms", s.stream_reconnect_delay_ms);
    if (s.stream_reconnect_delay_ms_max < s.stream_reconnect_delay_ms) {
        errors.push_back("stream_reconnect_delay_ms_max must be >= stream_reconnect_delay_ms");
    }
    if (s.stream_reconnect_attempts_max < 0) {
        errors.push_back("stream_reconnect_attempts_max must be >= 0");
    }
    if (s.response_body_limit_bytes < 1024) {
        errors.push_back("response_body_limit_bytes must be at least 1024");
    }
    if (s.mail_category.empty()) {
        errors.push_back("mail_category is required (mail or enrich)");
    }
    return errors;
}

result<client> client::make(asio::any_io_executor executor, client_settings settings) {
    auto problems = validate(settings);
    if (!problems.empty()) {
        std::string all;
        for (const auto& p : problems) {
            all += (all.empty() ? "" : "; ") + p;
        }
        error e = make_transport_error(error_kind::transport_connect, failure_step::none, all, false, false);
        e.code = "INVALID_SETTINGS";
        e.what_to_do = disposition::stop_everything;
        return e;
    }
    // Loading the system trust store costs tens of milliseconds: only an https base URL pays it
    // here (so a bad extra_ca_pem fails early); a plain client creates it on its first https use.
    std::shared_ptr<detail::ssl::context> tls;
    if (settings.base_url.starts_with("https:")) {
        auto made = detail::make_tls_context(settings);
        if (!made) {
            return std::move(made).error();
        }
        tls = std::move(*made);
    }
    std::string why;
    auto impl = std::make_shared<detail::client_impl>();
    impl->base = *detail::parse_base_url(settings.base_url, why);
    impl->settings = settings;
    impl->net = std::make_shared<detail::transport>(std::move(executor), std::move(settings), std::move(tls));
    return client(std::move(impl));
}

const client_settings& client::settings() const { return impl_->settings; }
pool_stats client::stats() const { return impl_->net->stats(impl_->base); }
void client::shutdown() { impl_->net->close_idle(); }

using detail::to_json;
using detail::verb;
namespace d = detail;

// ---- Accounts ----

asio::awaitable<result<login_result>> client::login(const login_params& p, call_options o) {
    return d::v2<login_result>(impl_, verb::post, "/v2/login", to_json(p).dump(), true, o, d::parse_login);
}

asio::awaitable<result<checkpoint_result>> client::checkpoint(const checkpoint_params& p, call_options o) {
    return d::v2<checkpoint_result>(impl_, verb::post, "/v2/checkpoint", to_json(p).dump(), true, o,
                                    d::parse_checkpoint);
}

asio::awaitable<result<accounts_page>> client::list_accounts(const list_accounts_params& p, call_options o) {
    return d::v2<accounts_page>(
        impl_, verb::get,
        "/v2/accounts" + d::query({{"limit", d::number_text(p.limit)}, {"offset", d::number_text(p.offset)}}), {},
        false, o, d::parse_accounts_page);
}

asio::awaitable<result<account_reply>> client::get_account(std::string_view account_id, call_options o) {
    return d::v2<account_reply>(impl_, verb::get, "/v2/accounts/" + d::url_encode(account_id), {}, false, o,
                                d::parse_account_reply);
}

asio::awaitable<result<credits_result>> client::get_credits(call_options o) {
    return d::v2<credits_result>(impl_, verb::get, "/v2/credits", {}, false, o, d::parse_credits);
}

// ---- Profiles ----

asio::awaitable<result<profile_reply>> client::get_me(std::string_view account_id, call_options o) {
    return d::action<profile_reply>(impl_, "profiles", account_id, "get_me", json::object(), false, o,
                                    d::parse_profile_reply);
}

asio::awaitable<result<profile_reply>> client::get_profile(std::string_view account_id, const get_profile_params& p,
                                                           call_options o) {
    return d::action<profile_reply>(impl_, "profiles", account_id, "get", to_json(p), false, o,
                                    d::parse_profile_reply);
}

asio::awaitable<result<contact_info>> client::get_contact(std::string_view account_id, const profile_url_params& p,
                                                          call_options o) {
    return d::action<contact_info>(impl_, "profiles", account_id, "get_contact", to_json(p), false, o,
                                   d::parse_contact);
}

asio::awaitable<result<visit_result>> client::visit(std::string_view account_id, const profile_url_params& p,
                                                    call_options o) {
    return d::action<visit_result>(impl_, "profiles", account_id, "visit", to_json(p), true, o, d::parse_visit);
}

asio::awaitable<result<people_page>> client::search_people(std::string_view account_id,
                                                           const search_people_params& p, call_options o) {
    return d::action<people_page>(impl_, "profiles", account_id, "search_people", to_json(p), false, o,
                                  d::parse_people_page);
}

asio::awaitable<result<companies_page>> client::search_companies(std::string_view account_id,
                                                                 const search_companies_params& p, call_options o) {
    return d::action<companies_page>(impl_, "profiles", account_id, "search_companies", to_json(p), false, o,
                                     d::parse_companies_page);
}

asio::awaitable<result<company_reply>> client::get_company(std::string_view account_id, const company_params& p,
                                                           call_options o) {
    return d::action<company_reply>(impl_, "profiles", account_id, "get_company", to_json(p), false, o,
                                    d::parse_company_reply);
}

asio::awaitable<result<profile_reactions_page>> client::get_profile_reactions(std::string_view account_id,
                                                                              const profile_reactions_v2_params& p,
                                                                              call_options o) {
    return d::action<profile_reactions_page>(impl_, "profiles", account_id, "get_reactions", to_json(p), false, o,
                                             d::parse_profile_reactions_page);
}

// ---- Network ----

asio::awaitable<result<invite_result>> client::invite(std::string_view account_id, const invite_params& p,
                                                      call_options o) {
    return d::action<invite_result>(impl_, "network", account_id, "invite", to_json(p), true, o, d::parse_invite);
}

asio::awaitable<result<invitation_status>> client::check_invitation(std::string_view account_id,
                                                                    const profile_url_params& p, call_options o) {
    return d::action<invitation_status>(impl_, "network", account_id, "check_invitation", to_json(p), false, o,
                                        d::parse_invitation_status);
}

asio::awaitable<result<withdraw_result>> client::withdraw(std::string_view account_id, const withdraw_params& p,
                                                          call_options o) {
    return d::action<withdraw_result>(impl_, "network", account_id, "withdraw", to_json(p), true, o,
                                      d::parse_withdraw);
}

asio::awaitable<result<invitations_page>> client::list_sent(std::string_view account_id,
                                                            const list_invitations_params& p, call_options o) {
    return d::action<invitations_page>(impl_, "network", account_id, "list_sent", to_json(p), false, o,
                                       d::parse_invitations_page);
}

asio::awaitable<result<invitations_page>> client::list_invitations(std::string_view account_id,
                                                                   const list_invitations_params& p, call_options o) {
    return d::action<invitations_page>(impl_, "network", account_id, "list_invitations", to_json(p), false, o,
                                       d::parse_invitations_page);
}

asio::awaitable<result<accept_result>> client::accept(std::string_view account_id, const invitation_ref_params& p,
                                                      call_options o) {
    return d::action<accept_result>(impl_, "network", account_id, "accept", to_json(p), true, o,
                                    d::parse_nothing<accept_result>);
}

asio::awaitable<result<decline_result>> client::decline(std::string_view account_id, const invitation_ref_params& p,
                                                        call_options o) {
    return d::action<decline_result>(impl_, "network", account_id, "decline", to_json(p), true, o, d::parse_decline);
}

asio::awaitable<result<connections_page>> client::list_connections(std::string_view account_id,
                                                                   const list_connections_params& p, call_options o) {
    return d::action<connections_page>(impl_, "network", account_id, "list_connections", to_json(p), false, o,
                                       d::parse_connections_page);
}

asio::awaitable<result<people_page>> client::recommendations(std::string_view account_id,
                                                             const recommendations_params& p, call_options o) {
    return d::action<people_page>(impl_, "network", account_id, "recommendations", to_json(p), false, o,
                                  d::parse_people_page);
}

// ---- Messages ----

asio::awaitable<result<send_message_result>> client::send_message(std::string_view account_id,
                                                                  const send_message_params& p, call_options o) {
    return d::action<send_message_result>(impl_, "messages", account_id, "send", to_json(p), true, o,
                                          d::parse_send_message);
}

asio::awaitable<result<inbox_page>> client::list_inbox(std::string_view account_id, const list_inbox_params& p,
                                                       call_options o) {
    return d::action<inbox_page>(impl_, "messages", account_id, "list_inbox", to_json(p), false, o,
                                 d::parse_inbox_page);
}

asio::awaitable<result<conversation_page>> client::get_conversation(std::string_view account_id,
                                                                    const get_conversation_params& p, call_options o) {
    return d::action<conversation_page>(impl_, "messages", account_id, "get_conversation", to_json(p), false, o,
                                        d::parse_conversation_page);
}

// ---- Content ----

asio::awaitable<result<post_created>> client::create_post(std::string_view account_id, const create_post_params& p,
                                                          call_options o) {
    return d::action<post_created>(impl_, "content", account_id, "create", to_json(p), true, o, d::parse_post_created);
}

asio::awaitable<result<post_created>> client::create_company_post(std::string_view account_id,
                                                                  const create_company_post_params& p,
                                                                  call_options o) {
    return d::action<post_created>(impl_, "content", account_id, "create_company", to_json(p), true, o,
                                   d::parse_post_created);
}

asio::awaitable<result<action_reply>> client::search_posts(std::string_view account_id,
                                                           const content_search_params& p, call_options o) {
    return d::action<action_reply>(impl_, "content", account_id, "search", to_json(p), false, o,
                                   d::parse_nothing<action_reply>);
}

asio::awaitable<result<action_reply>> client::get_feed(std::string_view account_id, const feed_params& p,
                                                       call_options o) {
    return d::action<action_reply>(impl_, "content", account_id, "get_feed", to_json(p), false, o,
                                   d::parse_nothing<action_reply>);
}

asio::awaitable<result<action_reply>> client::like_post(std::string_view account_id, const post_target_params& p,
                                                        call_options o) {
    return d::action<action_reply>(impl_, "content", account_id, "like", to_json(p), true, o,
                                   d::parse_nothing<action_reply>);
}

asio::awaitable<result<action_reply>> client::react_to_post(std::string_view account_id, const react_params& p,
                                                            call_options o) {
    return d::action<action_reply>(impl_, "content", account_id, "react", to_json(p), true, o,
                                   d::parse_nothing<action_reply>);
}

asio::awaitable<result<action_reply>> client::comment_post(std::string_view account_id, const comment_params& p,
                                                           call_options o) {
    return d::action<action_reply>(impl_, "content", account_id, "comment", to_json(p), true, o,
                                   d::parse_nothing<action_reply>);
}

asio::awaitable<result<action_reply>> client::answer_comment(std::string_view account_id,
                                                             const answer_comment_params& p, call_options o) {
    return d::action<action_reply>(impl_, "content", account_id, "answer_comment", to_json(p), true, o,
                                   d::parse_nothing<action_reply>);
}

asio::awaitable<result<post_created>> client::repost(std::string_view account_id, const comment_params& p,
                                                     call_options o) {
    return d::action<post_created>(impl_, "content", account_id, "repost", to_json(p), true, o, d::parse_post_created);
}

asio::awaitable<result<action_reply>> client::get_comments(std::string_view account_id, const post_list_params& p,
                                                           call_options o) {
    return d::action<action_reply>(impl_, "content", account_id, "get_comments", to_json(p), false, o,
                                   d::parse_nothing<action_reply>);
}

asio::awaitable<result<post_reactions_page>> client::get_post_reactions(std::string_view account_id,
                                                                        const post_list_params& p, call_options o) {
    return d::action<post_reactions_page>(impl_, "content", account_id, "get_reactions", to_json(p), false, o,
                                          d::parse_post_reactions_page);
}

asio::awaitable<result<action_reply>> client::time_spent(std::string_view account_id, const time_spent_params& p,
                                                         call_options o) {
    return d::action<action_reply>(impl_, "content", account_id, "time_spent", to_json(p), true, o,
                                   d::parse_nothing<action_reply>);
}

// ---- Recruiter ----

asio::awaitable<result<action_reply>> client::recruiter_get_posts(std::string_view account_id,
                                                                  const recruiter_params& p, call_options o) {
    return d::action<action_reply>(impl_, "recruiter", account_id, "get_posts", to_json(p), false, o,
                                   d::parse_nothing<action_reply>);
}

asio::awaitable<result<action_reply>> client::recruiter_get_candidates(std::string_view account_id,
                                                                       const recruiter_params& p, call_options o) {
    return d::action<action_reply>(impl_, "recruiter", account_id, "get_candidates", to_json(p), false, o,
                                   d::parse_nothing<action_reply>);
}

asio::awaitable<result<action_reply>> client::recruiter_get_cv(std::string_view account_id, const recruiter_params& p,
                                                               call_options o) {
    return d::action<action_reply>(impl_, "recruiter", account_id, "get_cv", to_json(p), false, o,
                                   d::parse_nothing<action_reply>);
}

asio::awaitable<result<action_reply>> client::recruiter_publish_job(std::string_view account_id,
                                                                    const publish_job_params& p, call_options o) {
    return d::action<action_reply>(impl_, "recruiter", account_id, "publish_job", to_json(p), true, o,
                                   d::parse_nothing<action_reply>);
}

asio::awaitable<result<action_reply>> client::recruiter_close_job(std::string_view account_id,
                                                                  const recruiter_params& p, call_options o) {
    return d::action<action_reply>(impl_, "recruiter", account_id, "close_job", to_json(p), true, o,
                                   d::parse_nothing<action_reply>);
}

// ---- Mail ----

asio::awaitable<result<email_lookup>> client::find_email(std::string_view account_id, const find_email_params& p,
                                                         call_options o) {
    return d::action<email_lookup>(impl_, impl_->settings.mail_category, account_id, "find_email", to_json(p), false,
                                   o, d::parse_email_lookup);
}

asio::awaitable<result<email_lookup>> client::reverse_email(std::string_view account_id, const email_params& p,
                                                            call_options o) {
    return d::action<email_lookup>(impl_, impl_->settings.mail_category, account_id, "reverse_email", to_json(p),
                                   false, o, d::parse_email_lookup);
}

asio::awaitable<result<email_lookup>> client::validate_email(std::string_view account_id, const email_params& p,
                                                             call_options o) {
    return d::action<email_lookup>(impl_, impl_->settings.mail_category, account_id, "validate_email", to_json(p),
                                   false, o, d::parse_email_lookup);
}

// ---- V2 webhooks ----

asio::awaitable<result<webhook_created>> client::create_webhook(const webhook_create_params& p, call_options o) {
    return d::v2<webhook_created>(impl_, verb::post, "/v2/webhooks", to_json(p).dump(), true, o,
                                  d::parse_webhook_created);
}

asio::awaitable<result<webhook_list>> client::list_webhooks(call_options o) {
    return d::v2<webhook_list>(impl_, verb::get, "/v2/webhooks", {}, false, o, d::parse_webhook_list);
}

asio::awaitable<result<webhook_reply>> client::get_webhook(std::string_view webhook_id, call_options o) {
    return d::v2<webhook_reply>(impl_, verb::get, d::webhook_path(webhook_id), {}, false, o, d::parse_webhook_reply);
}

asio::awaitable<result<webhook_reply>> client::update_webhook(std::string_view webhook_id,
                                                              const webhook_update_params& p, call_options o) {
    return d::v2<webhook_reply>(impl_, verb::put, d::webhook_path(webhook_id), to_json(p).dump(), true, o,
                                d::parse_webhook_reply);
}

asio::awaitable<result<action_reply>> client::delete_webhook(std::string_view webhook_id, call_options o) {
    return d::v2<action_reply>(impl_, verb::delete_, d::webhook_path(webhook_id), {}, true, o,
                               d::parse_nothing<action_reply>);
}

asio::awaitable<result<webhook_monitoring>> client::start_webhook(std::string_view webhook_id, call_options o) {
    return d::v2<webhook_monitoring>(impl_, verb::post, d::webhook_path(webhook_id, "/start"), {}, true, o,
                                     d::parse_webhook_monitoring);
}

asio::awaitable<result<webhook_monitoring>> client::stop_webhook(std::string_view webhook_id, call_options o) {
    return d::v2<webhook_monitoring>(impl_, verb::post, d::webhook_path(webhook_id, "/stop"), {}, true, o,
                                     d::parse_webhook_monitoring);
}

asio::awaitable<result<rotated_secret>> client::rotate_webhook_secret(std::string_view webhook_id, call_options o) {
    return d::v2<rotated_secret>(impl_, verb::post, d::webhook_path(webhook_id, "/rotate-secret"), {}, true, o,
                                 d::parse_rotated_secret);
}

asio::awaitable<result<action_reply>> client::delete_webhook_secret(std::string_view webhook_id, call_options o) {
    return d::v2<action_reply>(impl_, verb::delete_, d::webhook_path(webhook_id, "/secret"), {}, true, o,
                               d::parse_nothing<action_reply>);
}

asio::awaitable<result<events_page>> client::poll_webhook_events(std::string_view webhook_id,
                                                                 const poll_events_params& p, call_options o) {
    return d::v2<events_page>(
        impl_, verb::get,
        d::webhook_path(webhook_id, "/events") +
            d::query({{"since", p.since}, {"after", p.after}, {"cursor", p.cursor}, {"limit", d::number_text(p.limit)}}),
        {}, false, o, d::parse_events_page);
}

event_stream client::open_event_stream(std::string_view webhook_id, std::string_view last_event_id) {
    auto st = std::make_shared<detail::stream_state>();
    st->owner = impl_;
    st->webhook_id = std::string(webhook_id);
    st->sse.set_last_event_id(std::string(last_event_id));
    return event_stream(std::move(st));
}

// ---- V1 data ----

asio::awaitable<result<company_v1_reply>> client::company_info(const company_info_params& p, call_options o) {
    return d::v1<company_v1_reply>(impl_, verb::post, d::v1_path(*impl_, v1_endpoint::company_info), to_json(p), false,
                                   false, o, d::parse_company_v1);
}

asio::awaitable<result<company_v1_reply>> client::company_info_by_domain(const company_domain_params& p,
                                                                         call_options o) {
    return d::v1<company_v1_reply>(impl_, verb::post, d::v1_path(*impl_, v1_endpoint::company_info_by_domain),
                                   to_json(p), false, false, o, d::parse_company_v1);
}

asio::awaitable<result<data_company_search_result>> client::data_search_companies(const data_company_search_params& p,
                                                                                  call_options o) {
    return d::v1<data_company_search_result>(impl_, verb::post, d::v1_path(*impl_, v1_endpoint::search_companies),
                                             to_json(p), false, false, o, d::parse_data_company_search);
}

asio::awaitable<result<data_company_search_result>> client::data_search_funded_companies(
    const data_company_search_params& p, call_options o) {
    return d::v1<data_company_search_result>(impl_, verb::post,
                                             d::v1_path(*impl_, v1_endpoint::search_funded_companies), to_json(p),
                                             false, false, o, d::parse_data_company_search);
}

asio::awaitable<result<data_profile_search_result>> client::data_search_profiles(const data_profile_search_params& p,
                                                                                 call_options o) {
    return d::v1<data_profile_search_result>(impl_, verb::post, d::v1_path(*impl_, v1_endpoint::search_profiles),
                                             to_json(p), false, false, o, d::parse_data_profile_search);
}

asio::awaitable<result<profile_enrichment>> client::enrich_profile(const enrich_profile_params& p, call_options o) {
    return d::v1<profile_enrichment>(impl_, verb::post, d::v1_path(*impl_, v1_endpoint::enrich_profile), to_json(p),
                                     false, false, o, d::parse_profile_enrichment);
}

asio::awaitable<result<profile_reactions_result>> client::profile_reactions(const profile_reactions_params& p,
                                                                            call_options o) {
    return d::v1<profile_reactions_result>(impl_, verb::post, d::v1_path(*impl_, v1_endpoint::profile_reactions),
                                           to_json(p), false, false, o, d::parse_profile_reactions);
}

asio::awaitable<result<post_reactions_result>> client::post_reactions(const post_reactions_params& p, call_options o) {
    return d::v1<post_reactions_result>(impl_, verb::post, d::v1_path(*impl_, v1_endpoint::post_reactions),
                                        to_json(p), false, false, o, d::parse_post_reactions);
}

asio::awaitable<result<hiring_companies_result>> client::hiring_companies(const hiring_companies_params& p,
                                                                          call_options o) {
    return d::v1<hiring_companies_result>(impl_, verb::post, d::v1_path(*impl_, v1_endpoint::hiring_companies),
                                          to_json(p), false, false, o, d::parse_hiring_companies);
}

asio::awaitable<result<hiring_companies_result>> client::company_jobs(const company_jobs_params& p, call_options o) {
    return d::v1<hiring_companies_result>(impl_, verb::post, d::v1_path(*impl_, v1_endpoint::company_jobs),
                                          to_json(p), false, false, o, d::parse_hiring_companies);
}

asio::awaitable<result<messaging_send_result>> client::messaging_send(const messaging_send_params& p, call_options o) {
    return d::v1<messaging_send_result>(impl_, verb::post, d::v1_path(*impl_, v1_endpoint::messaging_send),
                                        to_json(p), true, false, o, d::parse_messaging_send);
}

// ---- V1 webhook accounts ----

namespace {
std::string account_path(const detail::client_impl& c, std::string_view id, std::string_view tail = {}) {
    return detail::v1_path(c, v1_endpoint::webhook_accounts) + "/" + detail::url_encode(id) + std::string(tail);
}
} // namespace

asio::awaitable<result<webhook_account_reply>> client::create_webhook_account(const webhook_account_create_params& p,
                                                                              call_options o) {
    return d::v1<webhook_account_reply>(impl_, verb::post, d::v1_path(*impl_, v1_endpoint::webhook_accounts),
                                        to_json(p), true, true, o, d::parse_webhook_account_reply);
}

asio::awaitable<result<webhook_account_list>> client::list_webhook_accounts(call_options o) {
    return d::v1<webhook_account_list>(impl_, verb::get, d::v1_path(*impl_, v1_endpoint::webhook_accounts), nullptr,
                                       false, true, o, d::parse_webhook_account_list);
}

asio::awaitable<result<webhook_account_reply>> client::get_webhook_account(std::string_view id, call_options o) {
    return d::v1<webhook_account_reply>(impl_, verb::get, account_path(*impl_, id), nullptr, false, true, o,
                                        d::parse_webhook_account_reply);
}

asio::awaitable<result<webhook_account_reply>> client::update_webhook_account(std::string_view id,
                                                                              const webhook_account_update_params& p,
                                                                              call_options o) {
    return d::v1<webhook_account_reply>(impl_, verb::put, account_path(*impl_, id), to_json(p), true, true, o,
                                        d::parse_webhook_account_reply);
}

asio::awaitable<result<v1_reply>> client::delete_webhook_account(std::string_view id, call_options o) {
    return d::v1<v1_reply>(impl_, verb::delete_, account_path(*impl_, id), nullptr, true, true, o,
                           d::parse_nothing<v1_reply>);
}

asio::awaitable<result<v1_reply>> client::start_webhook_account(std::string_view id, call_options o) {
    return d::v1<v1_reply>(impl_, verb::post, account_path(*impl_, id, "/start"), nullptr, true, true, o,
                           d::parse_nothing<v1_reply>);
}

asio::awaitable<result<webhook_account_stopped>> client::stop_webhook_account(std::string_view id, call_options o) {
    return d::v1<webhook_account_stopped>(impl_, verb::post, account_path(*impl_, id, "/stop"), nullptr, true, true, o,
                                          d::parse_webhook_account_stopped);
}

// ---- Escape hatches ----

asio::awaitable<result<action_reply>> client::call_action(std::string_view category, std::string_view account_id,
                                                          std::string_view action, const json& params,
                                                          bool side_effect, call_options o) {
    return d::action<action_reply>(impl_, category, account_id, action, params.is_null() ? json::object() : params,
                                   side_effect, o, d::parse_nothing<action_reply>);
}

asio::awaitable<result<v1_reply>> client::call_v1(std::string_view method, std::string_view path, const json& body,
                                                  bool side_effect, call_options o) {
    verb v = boost::beast::http::string_to_verb(method);
    if (v == verb::unknown) {
        error e = make_malformed("call_v1: unknown HTTP method '" + std::string(method) + "'", 0, false);
        e.code = "INVALID_REQUEST";
        return d::ready(result<v1_reply>(std::move(e)));
    }
    return d::v1<v1_reply>(impl_, v, std::string(path), body, side_effect, true, o, d::parse_nothing<v1_reply>);
}

} // namespace orch::outreach
