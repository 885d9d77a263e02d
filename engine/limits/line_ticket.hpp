// orch::limits::line_ticket: an operator's place in the line of commands waiting for the API
// key's places (limiter::line), left when the ticket goes, however the wait ends (a ticket no
// longer refreshed would leave by itself after limiter::line_alive). Used by the CLI's calls and
// an apply's audience search.
#pragma once

#include "engine/limits/limits.hpp"

#include <cstdint>
#include <optional>

namespace orch::limits {

class line_ticket {
public:
    explicit line_ticket(limiter& l) : limiter_(l) {}
    ~line_ticket() { leave(); }
    line_ticket(const line_ticket&) = delete;
    line_ticket& operator=(const line_ticket&) = delete;

    // Joins the line at its end the first time, refreshes the place after that: how many wait
    // ahead. nullopt when Redis is unavailable (the place, if any, is kept).
    std::optional<limiter::line_place> ask() {
        auto place = limiter_.line(ticket_, limiter::line_alive);
        if (place) {
            ticket_ = place->ticket;
        }
        return place;
    }
    // Leaves the line (nothing when not in it); the next ask() joins again at the end.
    void leave() {
        if (ticket_ > 0) {
            (void)limiter_.line(ticket_, limiter::line_alive, true);
            ticket_ = 0;
        }
    }

private:
    limiter& limiter_;
    std::int64_t ticket_ = 0;
};

}  // namespace orch::limits
