// A loopback TCP forwarder that a test can cut, for outages of a real server without stopping it
// (the test run's PostgreSQL is shared by every test): while cut, every connection through it is
// closed and each new one is closed as soon as it is accepted, as a server that is down or
// restarting would do to its clients. (The port stays bound: listening on it again after a close
// can fail while the closed connections linger.)
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace orch::test {

class tcp_cut {
public:
    explicit tcp_cut(unsigned short upstream_port) : upstream_(upstream_port) {
        listen();
        thread_ = std::thread([this] { io_.run(); });
    }
    ~tcp_cut() {
        on_io([this] { close_all(); });
        work_.reset();
        io_.stop();
        thread_.join();
    }
    tcp_cut(const tcp_cut&) = delete;
    tcp_cut& operator=(const tcp_cut&) = delete;

    unsigned short port() const { return port_; }

    // Closes every connection through it, and from now on each new one at once; returns once done.
    void cut() {
        on_io([this] {
            cut_ = true;
            close_connections();
        });
    }
    // Forwards new connections again.
    void restore() {
        on_io([this] { cut_ = false; });
    }

private:
    using tcp = boost::asio::ip::tcp;
    using socket_ptr = std::shared_ptr<tcp::socket>;

    // Runs `f` on the forwarder's thread and waits for it.
    template <class F>
    void on_io(F f) {
        std::promise<void> done;
        boost::asio::post(io_, [&] {
            f();
            done.set_value();
        });
        done.get_future().get();
    }

    void listen() {
        auto acceptor = std::make_shared<tcp::acceptor>(io_);
        const tcp::endpoint at(boost::asio::ip::address_v4::loopback(), 0);
        acceptor->open(at.protocol());
        acceptor->bind(at);
        acceptor->listen();
        port_ = acceptor->local_endpoint().port();
        acceptor_ = acceptor;
        boost::asio::co_spawn(io_, accept_loop(acceptor), boost::asio::detached);
    }

    void close_connections() {
        boost::system::error_code ignored;
        for (auto& s : sockets_) {
            s->close(ignored);
        }
        sockets_.clear();
    }

    void close_all() {
        boost::system::error_code ignored;
        if (acceptor_) {
            acceptor_->close(ignored);
            acceptor_.reset();
        }
        close_connections();
    }

    boost::asio::awaitable<void> accept_loop(std::shared_ptr<tcp::acceptor> acceptor) {
        using boost::asio::use_awaitable;
        for (;;) {
            auto client = std::make_shared<tcp::socket>(io_);
            try {
                co_await acceptor->async_accept(*client, use_awaitable);
            } catch (const boost::system::system_error&) {
                co_return;  // closed
            }
            if (cut_) {
                continue;  // the client's socket closes as it goes out of scope
            }
            auto server = std::make_shared<tcp::socket>(io_);
            try {
                co_await server->async_connect(tcp::endpoint(boost::asio::ip::address_v4::loopback(), upstream_),
                                               use_awaitable);
            } catch (const boost::system::system_error&) {
                continue;  // the client's socket closes as it goes out of scope
            }
            sockets_.push_back(client);
            sockets_.push_back(server);
            boost::asio::co_spawn(io_, pump(client, server), boost::asio::detached);
            boost::asio::co_spawn(io_, pump(server, client), boost::asio::detached);
        }
    }

    static boost::asio::awaitable<void> pump(socket_ptr from, socket_ptr to) {
        std::array<char, 16384> buffer{};
        try {
            for (;;) {
                const auto n = co_await from->async_read_some(boost::asio::buffer(buffer), boost::asio::use_awaitable);
                co_await boost::asio::async_write(*to, boost::asio::buffer(buffer.data(), n),
                                                  boost::asio::use_awaitable);
            }
        } catch (const boost::system::system_error&) {
            // one side closed (or the cut closed both): close the other side too
        }
        boost::system::error_code ignored;
        from->close(ignored);
        to->close(ignored);
    }

    const unsigned short upstream_;
    boost::asio::io_context io_{1};
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{
        boost::asio::make_work_guard(io_)};
    std::shared_ptr<tcp::acceptor> acceptor_;
    std::vector<socket_ptr> sockets_;  // grows with the connections made; a test makes few
    bool cut_ = false;                 // used on the forwarder's thread only
    unsigned short port_ = 0;
    std::thread thread_;
};

}  // namespace orch::test
