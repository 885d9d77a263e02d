#include "engine/limits/detail/redis_pool.hpp"

#include <spdlog/spdlog.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>

namespace orch::limits::detail {

namespace {
std::int64_t steady_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

timeval to_timeval(std::chrono::milliseconds ms) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
    return tv;
}

// Runs a setup command (AUTH, SELECT) on a new connection; false and `error` on failure.
bool setup(redisContext* c, const std::vector<std::string>& args, std::string& error) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const auto& a : args) {
        argv.push_back(a.data());
        lens.push_back(a.size());
    }
    reply_ptr r(static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data())));
    if (!r) {
        error = c->errstr;
        return false;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        error = args[0] + ": " + std::string(r->str, r->len);
        return false;
    }
    return true;
}
// Whether an idle connection can still carry a command: Redis closes connections it finds idle
// past its `timeout` setting, and all of them when it restarts, without the client knowing until
// it reads. A connection at rest has nothing to read, so anything readable (an end of file, an
// error, or bytes no command asked for) means it is dead. One poll() without waiting.
bool still_open(const redisContext* c) {
    pollfd p{};
    p.fd = c->fd;
    p.events = POLLIN;
    int n = ::poll(&p, 1, 0);
    if (n == 0) {
        return true;
    }
    if (n < 0) {
        return errno == EINTR;
    }
    char byte = 0;
    ssize_t got = ::recv(c->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}
}  // namespace

redis_pool::redis_pool(redis_endpoint endpoint, const settings& s)
    : endpoint_(std::move(endpoint)),
      connect_timeout_(s.connect_timeout_ms),
      command_timeout_(s.command_timeout_ms),
      reconnect_interval_(s.reconnect_interval_ms),
      max_idle_(s.pool_size) {}

context_ptr redis_pool::connect(std::string& error) const {
    context_ptr c(redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port, to_timeval(connect_timeout_)));
    if (!c) {
        error = "out of memory creating a Redis context";
        return nullptr;
    }
    if (c->err != 0) {
        error = std::string("connect to ") + endpoint_.host + ":" + std::to_string(endpoint_.port) + ": " + c->errstr;
        return nullptr;
    }
    if (redisSetTimeout(c.get(), to_timeval(command_timeout_)) != REDIS_OK) {
        error = "cannot set the command timeout";
        return nullptr;
    }
    if (!endpoint_.password.empty()) {
        std::vector<std::string> auth{"AUTH"};
        if (!endpoint_.user.empty()) {
            auth.push_back(endpoint_.user);
        }
        auth.push_back(endpoint_.password);
        if (!setup(c.get(), auth, error)) {
            return nullptr;
        }
    }
    if (endpoint_.db != 0 && !setup(c.get(), {"SELECT", std::to_string(endpoint_.db)}, error)) {
        return nullptr;
    }
    return c;
}

context_ptr redis_pool::acquire(std::string& error) {
    for (;;) {
        context_ptr c;
        {
            std::lock_guard lock(mutex_);
            if (idle_.empty()) {
                break;
            }
            c = std::move(idle_.back());
            idle_.pop_back();
        }
        // A connection Redis closed while it sat idle is dropped here, so its command goes on a
        // fresh one instead of failing and starting an outage Redis is not in.
        if (c->err == 0 && still_open(c.get())) {
            return c;
        }
    }
    if (down()) {
        // One thread tries per interval; the others fail fast instead of each waiting for a
        // connect timeout on a lane thread.
        std::int64_t now = steady_ms();
        std::int64_t due = next_attempt_ms_.load();
        if (now < due || !next_attempt_ms_.compare_exchange_strong(due, now + reconnect_interval_.count())) {
            error = "Redis unavailable (waiting to reconnect)";
            return nullptr;
        }
    }
    context_ptr c = connect(error);
    if (!c) {
        mark_down(error);
    }
    return c;
}

void redis_pool::release(context_ptr c) {
    std::lock_guard lock(mutex_);
    if (idle_.size() < max_idle_) {
        idle_.push_back(std::move(c));
    }
}

void redis_pool::failed(context_ptr c, const std::string& error) {
    c.reset();
    std::vector<context_ptr> dropped;
    {
        std::lock_guard lock(mutex_);
        dropped.swap(idle_);
    }
    mark_down(error);
}

void redis_pool::mark_down(const std::string& error) {
    if (!down_.exchange(true)) {
        down_since_ms_.store(steady_ms());
        next_attempt_ms_.store(steady_ms() + reconnect_interval_.count());
        spdlog::error("limits: Redis unavailable ({}); calls that need a rate-limit bucket are held (fail closed) "
                      "until it answers; reconnecting every {} ms",
                      error, reconnect_interval_.count());
    }
}

void redis_pool::succeeded() {
    if (down_.load(std::memory_order_relaxed) && down_.exchange(false)) {
        spdlog::info("limits: Redis available again after {} ms; calls resume", steady_ms() - down_since_ms_.load());
    }
}

}  // namespace orch::limits::detail
