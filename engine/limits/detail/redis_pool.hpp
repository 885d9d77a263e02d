// A small pool of synchronous hiredis connections shared by threads, with the outage state of
// the limiter: fail fast while Redis is down, one reconnection attempt per interval, the outage
// logged once when it starts and once when it ends (not per call).
#pragma once

#include "engine/limits/limits.hpp"

#include <hiredis/hiredis.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace orch::limits::detail {

struct reply_deleter {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

struct context_deleter {
    void operator()(redisContext* c) const { redisFree(c); }
};
using context_ptr = std::unique_ptr<redisContext, context_deleter>;

class redis_pool {
public:
    redis_pool(redis_endpoint endpoint, const settings& s);

    // A connection (idle and still open, or new), or nullptr with `error` set: Redis is known to
    // be down and the next attempt is not due yet, or connecting failed (then the outage starts).
    context_ptr acquire(std::string& error);
    // Back to the pool after a command that got its reply.
    void release(context_ptr c);
    // A command failed on `c` (I/O error, timeout): the connection is dropped, every idle one too
    // (they likely share its fate), and the outage starts.
    void failed(context_ptr c, const std::string& error);
    // Redis answered with an error a retry will not cure at once (OOM, BUSY, LOADING, a script
    // error): the connection is kept, but the outage starts (fail closed).
    void outage(const std::string& error) { mark_down(error); }
    // A command got its reply: ends an outage.
    void succeeded();
    bool down() const { return down_.load(std::memory_order_relaxed); }

private:
    context_ptr connect(std::string& error) const;
    void mark_down(const std::string& error);

    redis_endpoint endpoint_;
    std::chrono::milliseconds connect_timeout_;
    std::chrono::milliseconds command_timeout_;
    std::chrono::milliseconds reconnect_interval_;
    std::size_t max_idle_;

    std::mutex mutex_;
    std::vector<context_ptr> idle_;  // guarded by mutex_

    std::atomic<bool> down_{false};
    std::atomic<std::int64_t> down_since_ms_{0};    // steady clock
    std::atomic<std::int64_t> next_attempt_ms_{0};  // steady clock
};

}  // namespace orch::limits::detail
