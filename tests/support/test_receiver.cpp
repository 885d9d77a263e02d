#include "tests/support/test_receiver.hpp"

#include "api/http_server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace orch::test {

namespace asio = boost::asio;
namespace http = boost::beast::http;

std::string received_request::header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
}

struct test_receiver::impl {
    asio::io_context io{1};
    std::unique_ptr<api::http_server> server;
    std::thread thread;

    mutable std::mutex mutex;
    mutable std::condition_variable arrived;
    std::vector<received_request> requests;
    std::vector<int> statuses;
    std::size_t answered_since_reset = 0;
    std::chrono::milliseconds delay{0};

    // Records the request and picks its status (under the lock).
    std::pair<int, std::chrono::milliseconds> record(const api::request& req) {
        received_request r;
        r.method = std::string(req.method_string());
        r.target = std::string(req.target());
        for (const auto& f : req) {
            std::string name(f.name_string());
            std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
            r.headers[name] = std::string(f.value());
        }
        r.body = req.body();
        r.at = std::chrono::steady_clock::now();
        std::lock_guard lock(mutex);
        std::size_t i = answered_since_reset++;
        r.answered_status = statuses.empty() ? 200 : statuses[std::min(i, statuses.size() - 1)];
        requests.push_back(std::move(r));
        arrived.notify_all();
        return {requests.back().answered_status, delay};
    }

    asio::awaitable<api::handler_result> handle(api::request& req) {
        auto [status, wait] = record(req);
        if (wait.count() > 0) {
            asio::steady_timer timer(io, wait);
            co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
        }
        co_return api::handler_result::reply(
            api::json_response(req.version(), req.keep_alive(), static_cast<http::status>(status), "{\"ok\":true}"));
    }
};

test_receiver::test_receiver(std::vector<int> statuses) : impl_(std::make_shared<impl>()) {
    impl_->statuses = std::move(statuses);
    api::server_settings cfg;
    cfg.listen_host = "127.0.0.1";
    cfg.listen_port = 0;
    cfg.server_name = "test-receiver";
    cfg.idle_timeout_ms = std::chrono::milliseconds(10'000);
    impl* self = impl_.get();
    impl_->server = std::make_unique<api::http_server>(
        impl_->io.get_executor(), cfg,
        [self](api::request& req, boost::beast::tcp_stream&) { return self->handle(req); });
    impl_->server->start();
    impl_->thread = std::thread([self] { self->io.run(); });
}

test_receiver::~test_receiver() {
    // Stop on the receiver's own thread (the server is not thread-safe), then end the loop
    // after the server's posted close ran.
    impl* self = impl_.get();
    asio::post(self->io, [self] {
        self->server->stop();
        asio::post(self->io, [self] { self->io.stop(); });
    });
    self->thread.join();
    self->server.reset();
}

unsigned short test_receiver::port() const { return impl_->server->port(); }

std::string test_receiver::url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port()) + path;
}

void test_receiver::set_statuses(std::vector<int> statuses) {
    std::lock_guard lock(impl_->mutex);
    impl_->statuses = std::move(statuses);
    impl_->answered_since_reset = 0;
}

void test_receiver::set_delay(std::chrono::milliseconds delay) {
    std::lock_guard lock(impl_->mutex);
    impl_->delay = delay;
}

std::vector<received_request> test_receiver::requests() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->requests;
}

std::size_t test_receiver::count() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->requests.size();
}

bool test_receiver::wait_for(std::size_t n, std::chrono::milliseconds timeout) const {
    std::unique_lock lock(impl_->mutex);
    return impl_->arrived.wait_for(lock, timeout, [&] { return impl_->requests.size() >= n; });
}

} // namespace orch::test
