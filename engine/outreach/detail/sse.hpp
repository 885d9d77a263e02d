// Incremental parser of a server-sent-event stream (the WHATWG event-stream format): lines end
// in CRLF, LF or CR; `data:` lines accumulate; a blank line dispatches; `id:` sets the last
// event id (kept across events); `event:` names the event; `retry:` sets the reconnection
// delay; lines starting with ':' are comments (keepalives). Pure; unit-tested.
#pragma once

#include "engine/outreach/types.hpp"

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

namespace orch::outreach::detail {

class sse_parser {
public:
    // The most a line, or an event's joined data, may hold: a server that never ends a line or
    // an event would otherwise grow them without bound. An event over it is dispatched with its
    // data dropped and `problem` set (the stream goes on).
    static constexpr std::size_t max_event_bytes = 1 << 20;

    // Feeds bytes; every complete event is appended to `out`. Returns the number of comment
    // lines seen in these bytes (keepalives).
    std::size_t feed(std::string_view bytes, std::deque<stream_event>& out);
    const std::string& last_event_id() const { return last_event_id_; }
    void set_last_event_id(std::string id) { last_event_id_ = std::move(id); }
    std::optional<std::int64_t> retry_ms() const { return retry_ms_; }
    // Drops a partial line and partial event (after a reconnect).
    void reset_partial();

private:
    // Returns true for a comment line.
    bool line(std::string_view l, std::deque<stream_event>& out);

    std::string line_;
    bool after_cr_ = false;
    std::string data_;
    bool has_data_ = false;
    bool line_too_long_ = false;   // the current line passed max_event_bytes: its rest is skipped
    bool event_too_big_ = false;   // the current event's data passed max_event_bytes: dropped
    std::string event_;
    bool id_in_event_ = false;     // the current event has an `id:` line of its own
    std::string last_event_id_;
    std::optional<std::int64_t> retry_ms_;
};

} // namespace orch::outreach::detail
