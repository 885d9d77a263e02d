#include "engine/outreach/detail/sse.hpp"

#include <charconv>

namespace orch::outreach::detail {

std::size_t sse_parser::feed(std::string_view bytes, std::deque<stream_event>& out) {
    std::size_t comments = 0;
    for (char ch : bytes) {
        if (after_cr_) {
            after_cr_ = false;
            if (ch == '\n') {
                continue; // the LF of a CRLF
            }
        }
        if (ch == '\r' || ch == '\n') {
            after_cr_ = ch == '\r';
            if (line_too_long_) {
                // Whatever field it was, its value is cut: the event it belongs to is not kept.
                line_too_long_ = false;
                event_too_big_ = true;
                data_.clear();
            } else {
                comments += line(line_, out) ? 1 : 0;
            }
            line_.clear();
            continue;
        }
        if (line_too_long_) {
            continue;
        }
        if (line_.size() >= max_event_bytes) {
            line_too_long_ = true;
            line_.clear();
            line_.shrink_to_fit();
            continue;
        }
        line_.push_back(ch);
    }
    return comments;
}

void sse_parser::reset_partial() {
    line_.clear();
    after_cr_ = false;
    data_.clear();
    has_data_ = false;
    event_.clear();
    id_in_event_ = false;
    line_too_long_ = false;
    event_too_big_ = false;
}

bool sse_parser::line(std::string_view l, std::deque<stream_event>& out) {
    if (l.empty()) {
        if (has_data_ || event_too_big_) {
            stream_event e;
            e.name = event_.empty() ? "message" : event_;
            e.id = last_event_id_;
            e.id_sent = id_in_event_;
            if (event_too_big_) {
                e.problem = "the event is larger than " + std::to_string(max_event_bytes) + " bytes: its data was dropped";
            } else {
                e.data = std::move(data_);
            }
            out.push_back(std::move(e));
        }
        data_.clear();
        if (data_.capacity() > 64 * 1024) {
            data_.shrink_to_fit();  // a large event's buffer is not kept for the small ones after it
        }
        has_data_ = false;
        event_too_big_ = false;
        event_.clear();
        id_in_event_ = false;
        return false;
    }
    if (l.front() == ':') {
        return true;
    }
    auto colon = l.find(':');
    std::string_view field = colon == std::string_view::npos ? l : l.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view{} : l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') {
        value.remove_prefix(1);
    }
    if (field == "data") {
        if (event_too_big_ || data_.size() + value.size() + 1 > max_event_bytes) {
            event_too_big_ = true;
            data_.clear();
            return false;
        }
        if (has_data_) {
            data_.push_back('\n');
        }
        data_.append(value);
        has_data_ = true;
    } else if (field == "event") {
        event_ = std::string(value);
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos) {
            last_event_id_ = std::string(value);
            id_in_event_ = true;
        }
    } else if (field == "retry") {
        std::int64_t ms = 0;
        auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
        if (ec == std::errc{} && p == value.data() + value.size() && !value.empty()) {
            retry_ms_ = ms;
        }
    }
    return false;
}

} // namespace orch::outreach::detail
