// The client's transport against an in-process HTTP server whose behaviour each test scripts:
// keep-alive reuse, the pool bound, stale connections, deadlines (read, total incl. pool wait),
// dropped connections, cancellation, and what each failure says about side effects.
#include "engine/outreach/client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <gtest/gtest.h>

#include <functional>

using namespace orch::outreach;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto tuple = asio::as_tuple(asio::use_awaitable);

struct behaviour {
    enum class mode { respond, drop, hang, garbage };
    mode what = mode::respond;
    int delay_ms = 0;
    int status = 200;
    std::string body = R"({"success":true,"data":{"credits":7},"metadata":{"credits_consumed":0}})";
    std::string retry_after;
    bool close_after = false; // close the socket after answering, without saying so
};

behaviour with_mode(behaviour::mode m) {
    behaviour b;
    b.what = m;
    return b;
}

const std::string invite_ok =
    R"({"success":true,"data":{"invitation_urn":"urn:li:invitation:7329176687475109888"},"metadata":{"credits_consumed":1}})";

class fault_server {
public:
    explicit fault_server(asio::io_context& io) : acceptor_(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
        asio::co_spawn(io, accept_loop(), asio::detached);
    }
    unsigned short port() const { return acceptor_.local_endpoint().port(); }
    std::function<behaviour(const http::request<http::string_body>&)> script = [](const auto&) { return behaviour{}; };
    int accepted = 0;
    int requests = 0;
    int open = 0;
    int open_max = 0;

private:
    asio::awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, socket] = co_await acceptor_.async_accept(tuple);
            if (ec) {
                co_return;
            }
            ++accepted;
            asio::co_spawn(acceptor_.get_executor(), serve(std::move(socket)), asio::detached);
        }
    }

    asio::awaitable<void> serve(tcp::socket socket) {
        ++open;
        open_max = std::max(open_max, open);
        beast::flat_buffer buffer;
        for (;;) {
            http::request<http::string_body> req;
            auto [rec, rn] = co_await http::async_read(socket, buffer, req, tuple);
            if (rec) {
                break;
            }
            ++requests;
            behaviour b = script(req);
            if (b.delay_ms > 0) {
                asio::steady_timer t(socket.get_executor(), std::chrono::milliseconds(b.delay_ms));
                co_await t.async_wait(tuple);
            }
            if (b.what == behaviour::mode::drop) {
                break;
            }
            if (b.what == behaviour::mode::hang) {
                asio::steady_timer t(socket.get_executor(), std::chrono::seconds(5));
                co_await t.async_wait(tuple);
                break;
            }
            if (b.what == behaviour::mode::garbage) {
                std::string junk = "HTTP/1.1 ??? nonsense\r\n\r\n";
                co_await asio::async_write(socket, asio::buffer(junk), tuple);
                break;
            }
            http::response<http::string_body> res{static_cast<http::status>(b.status), 11};
            res.set(http::field::content_type, "application/json");
            if (!b.retry_after.empty()) {
                res.set(http::field::retry_after, b.retry_after);
            }
            res.body() = b.body;
            res.keep_alive(true);
            res.prepare_payload();
            auto [wec, wn] = co_await http::async_write(socket, res, tuple);
            if (wec || b.close_after) {
                break;
            }
        }
        boost::system::error_code ignored;
        socket.shutdown(tcp::socket::shutdown_both, ignored);
        socket.close(ignored);
        --open;
    }

    tcp::acceptor acceptor_;
};

template <typename T>
T run(asio::io_context& io, asio::awaitable<T> aw) {
    std::optional<T> out;
    asio::co_spawn(io, std::move(aw), [&](std::exception_ptr e, T v) {
        if (e) {
            std::rethrow_exception(e);
        }
        out.emplace(std::move(v));
    });
    io.restart();
    while (!out && io.run_one() > 0) {
    }
    return std::move(*out);
}

// Runs the io_context for `ms` (lets servers close sockets, timers fire).
void pump(asio::io_context& io, int ms) {
    io.restart();
    io.run_for(std::chrono::milliseconds(ms));
}

client make(asio::io_context& io, unsigned short port, std::size_t pool_size = 4,
            std::function<void(client_settings&)> tweak = {}) {
    client_settings s;
    s.base_url = "http://127.0.0.1:" + std::to_string(port);
    s.api_key = "k";
    s.pool_size = pool_size;
    s.connect_timeout_ms = 1'000;
    s.read_timeout_ms = 2'000;
    s.total_timeout_ms = 3'000;
    if (tweak) {
        tweak(s);
    }
    auto c = client::make(io.get_executor(), s);
    EXPECT_TRUE(c) << describe(c.error());
    return std::move(c).value();
}

const profile_url_params someone{"https://www.network.example/in/ada"};
const invite_params invite_someone{"https://www.network.example/in/ada", "", ""};

TEST(OutreachTransport, KeepAliveConnectionsAreReused) {
    asio::io_context io;
    fault_server server(io);
    auto c = make(io, server.port());
    for (int i = 0; i < 3; ++i) {
        auto r = run(io, c.get_credits());
        ASSERT_TRUE(r) << describe(r.error());
        EXPECT_EQ(r->credits, 7);
    }
    EXPECT_EQ(server.accepted, 1);
    EXPECT_EQ(c.stats().connects, 1u);
    EXPECT_EQ(c.stats().reuses, 2u);
    EXPECT_EQ(c.stats().idle, 1u);
}

TEST(OutreachTransport, ThePoolBoundsConnectionsAndQueuesCallers) {
    asio::io_context io;
    fault_server server(io);
    server.script = [](const auto&) {
        behaviour b;
        b.delay_ms = 50;
        return b;
    };
    auto c = make(io, server.port(), 2);
    int done = 0;
    int succeeded = 0;
    for (int i = 0; i < 6; ++i) {
        asio::co_spawn(io, c.get_credits(), [&](std::exception_ptr, result<credits_result> r) {
            ++done;
            succeeded += r ? 1 : 0;
        });
    }
    io.restart();
    while (done < 6 && io.run_one() > 0) {
    }
    EXPECT_EQ(succeeded, 6);
    EXPECT_EQ(server.accepted, 2);
    EXPECT_EQ(server.open_max, 2);
    EXPECT_EQ(c.stats().open, 2u);
}

TEST(OutreachTransport, ReadTimeoutAfterWriteMayHaveTakenEffectOnlyForSideEffects) {
    asio::io_context io;
    fault_server server(io);
    server.script = [](const auto&) { return with_mode(behaviour::mode::hang); };
    auto c = make(io, server.port());
    call_options fast;
    fast.read_timeout_ms = 100;
    auto invite = run(io, c.invite("acc_1", invite_someone, fast));
    ASSERT_FALSE(invite);
    EXPECT_EQ(invite.error().kind, error_kind::timeout);
    EXPECT_EQ(invite.error().step, failure_step::read);
    EXPECT_TRUE(invite.error().may_have_taken_effect);
    EXPECT_EQ(invite.error().what_to_do, disposition::retry_later);
    auto check = run(io, c.check_invitation("acc_1", someone, fast));
    ASSERT_FALSE(check);
    EXPECT_EQ(check.error().kind, error_kind::timeout);
    EXPECT_FALSE(check.error().may_have_taken_effect);
}

TEST(OutreachTransport, TheTotalDeadlineCoversWaitingForAConnection) {
    asio::io_context io;
    fault_server server(io);
    server.script = [](const auto&) {
        behaviour b;
        b.delay_ms = 300;
        return b;
    };
    auto c = make(io, server.port(), 1);
    std::optional<result<credits_result>> first;
    asio::co_spawn(io, c.get_credits(), [&](std::exception_ptr, result<credits_result> r) { first.emplace(std::move(r)); });
    call_options short_total;
    short_total.total_timeout_ms = 100;
    auto second = run(io, c.invite("acc_1", invite_someone, short_total));
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().kind, error_kind::timeout);
    EXPECT_EQ(second.error().step, failure_step::pool_wait);
    EXPECT_FALSE(second.error().may_have_taken_effect); // never written
    io.restart();
    while (!first && io.run_one() > 0) {
    }
    ASSERT_TRUE(first && *first);
    EXPECT_EQ(server.requests, 1);
}

TEST(OutreachTransport, ADroppedConnectionAfterTheRequestIsReported) {
    asio::io_context io;
    fault_server server(io);
    server.script = [](const auto&) { return with_mode(behaviour::mode::drop); };
    auto c = make(io, server.port());
    auto invite = run(io, c.invite("acc_1", invite_someone));
    ASSERT_FALSE(invite);
    EXPECT_EQ(invite.error().kind, error_kind::connection_lost);
    EXPECT_TRUE(invite.error().may_have_taken_effect);
    auto check = run(io, c.check_invitation("acc_1", someone));
    ASSERT_FALSE(check);
    EXPECT_FALSE(check.error().may_have_taken_effect);
    EXPECT_EQ(server.requests, 2); // nothing was resent
}

TEST(OutreachTransport, AnIdleConnectionTheServerClosedIsNotUsed) {
    asio::io_context io;
    fault_server server(io);
    server.script = [](const auto&) {
        behaviour b;
        b.body = invite_ok;
        b.close_after = true; // keep-alive promised, then closed
        return b;
    };
    auto c = make(io, server.port());
    ASSERT_TRUE(run(io, c.invite("acc_1", invite_someone)));
    pump(io, 50); // the server's FIN arrives
    auto second = run(io, c.invite("acc_1", invite_someone));
    ASSERT_TRUE(second) << describe(second.error());
    EXPECT_EQ(server.accepted, 2);
    EXPECT_EQ(server.requests, 2); // exactly one request per call
}

TEST(OutreachTransport, IdleConnectionsOlderThanTheIdleTimeoutAreReplaced) {
    asio::io_context io;
    fault_server server(io);
    auto c = make(io, server.port(), 4, [](client_settings& s) { s.idle_timeout_ms = 30; });
    ASSERT_TRUE(run(io, c.get_credits()));
    pump(io, 60);
    ASSERT_TRUE(run(io, c.get_credits()));
    EXPECT_EQ(c.stats().connects, 2u);
    EXPECT_EQ(c.stats().reuses, 0u);
}

TEST(OutreachTransport, CancellingAWrittenCallSaysItMayHaveTakenEffect) {
    asio::io_context io;
    fault_server server(io);
    server.script = [](const auto&) { return with_mode(behaviour::mode::hang); };
    auto c = make(io, server.port());
    asio::cancellation_signal signal;
    std::optional<result<invite_result>> out;
    asio::co_spawn(io, c.invite("acc_1", invite_someone),
                   asio::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr e, result<invite_result> r) {
                       ASSERT_FALSE(e);
                       out.emplace(std::move(r));
                   }));
    pump(io, 100);
    ASSERT_FALSE(out);
    ASSERT_EQ(server.requests, 1);
    signal.emit(asio::cancellation_type::terminal);
    io.restart();
    while (!out && io.run_one() > 0) {
    }
    ASSERT_TRUE(out);
    ASSERT_FALSE(*out);
    EXPECT_EQ(out->error().kind, error_kind::cancelled);
    EXPECT_TRUE(out->error().may_have_taken_effect);
    // The connection was closed, not returned to the pool.
    EXPECT_EQ(c.stats().idle, 0u);
    EXPECT_EQ(c.stats().open, 0u);
}

TEST(OutreachTransport, CancellingACallWaitingForAConnectionWritesNothing) {
    asio::io_context io;
    fault_server server(io);
    server.script = [](const auto&) {
        behaviour b;
        b.delay_ms = 200;
        return b;
    };
    auto c = make(io, server.port(), 1);
    int firsts = 0;
    asio::co_spawn(io, c.get_credits(), [&](std::exception_ptr, result<credits_result> r) { firsts += r ? 1 : 0; });
    asio::cancellation_signal signal;
    std::optional<result<invite_result>> out;
    asio::co_spawn(io, c.invite("acc_1", invite_someone),
                   asio::bind_cancellation_slot(signal.slot(),
                                                [&](std::exception_ptr, result<invite_result> r) { out.emplace(std::move(r)); }));
    pump(io, 50);
    EXPECT_EQ(c.stats().waiting, 1u);
    signal.emit(asio::cancellation_type::terminal);
    io.restart();
    while ((!out || firsts == 0) && io.run_one() > 0) {
    }
    ASSERT_TRUE(out && !*out);
    EXPECT_EQ(out->error().kind, error_kind::cancelled);
    EXPECT_FALSE(out->error().may_have_taken_effect);
    EXPECT_EQ(firsts, 1);
    EXPECT_EQ(server.requests, 1);
    EXPECT_EQ(c.stats().waiting, 0u);
}

TEST(OutreachTransport, HttpErrorsAndGarbage) {
    asio::io_context io;
    fault_server server(io);
    server.script = [](const auto& req) {
        behaviour b;
        if (req.target() == "/v2/credits") {
            b.status = 503;
            b.body = "upstream down";
            b.retry_after = "2";
        } else {
            b.what = behaviour::mode::garbage;
        }
        return b;
    };
    auto c = make(io, server.port());
    auto r = run(io, c.get_credits());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, error_kind::http_status);
    EXPECT_EQ(r.error().http_status, 503);
    EXPECT_EQ(r.error().retry_after_s, 2);
    EXPECT_EQ(r.error().what_to_do, disposition::retry_later);
    auto g = run(io, c.invite("acc_1", invite_someone));
    ASSERT_FALSE(g);
    EXPECT_EQ(g.error().kind, error_kind::malformed_response);
    EXPECT_TRUE(g.error().may_have_taken_effect);
}

TEST(OutreachTransport, RequestsCarryTheKeyAndTheEnvelope) {
    asio::io_context io;
    fault_server server(io);
    http::request<http::string_body> seen;
    server.script = [&](const auto& req) {
        seen = req;
        behaviour b;
        b.body = R"({"success":true,"data":{"invitation_state":"NO_INVITATION","invitation_type":null}})";
        return b;
    };
    auto c = make(io, server.port());
    auto r = run(io, c.check_invitation("acc_9", someone));
    ASSERT_TRUE(r) << describe(r.error());
    EXPECT_EQ(seen.method(), http::verb::post);
    EXPECT_EQ(seen.target(), "/v2/network");
    EXPECT_EQ(seen["x-api-key"], "k");
    auto body = json::parse(seen.body());
    EXPECT_EQ(body["account_id"], "acc_9");
    EXPECT_EQ(body["action"], "check_invitation");
    EXPECT_EQ(body["params"]["profile_url"], someone.profile_url);
    EXPECT_FALSE(r->meta.credits_consumed); // no metadata sent
}

TEST(OutreachTransport, ConnectRefusedIsATransportError) {
    asio::io_context io;
    unsigned short port = 0;
    {
        tcp::acceptor probe(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
        port = probe.local_endpoint().port();
    }
    auto c = make(io, port);
    auto r = run(io, c.invite("acc_1", invite_someone));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, error_kind::transport_connect);
    EXPECT_EQ(r.error().step, failure_step::connect);
    EXPECT_FALSE(r.error().may_have_taken_effect);
    EXPECT_EQ(c.stats().open, 0u);
}

} // namespace
