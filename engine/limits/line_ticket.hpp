// orch::limits::line_ticket: an operator's place in the line of commands waiting for the API
// key's places (limiter::line), left when the ticket goes, however the wait ends (a ticket no
// longer refreshed would leave by itself after limiter::line_alive). Used by the CLI's calls and
// an apply's audience search. The live tickets of the process are known to leave_all(), which a
// command interrupted by a signal runs before it dies: its destructors do not run then.
#pragma once

#include "engine/limits/limits.hpp"

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

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
        auto place = limiter_.line(ticket(), limiter::line_alive);
        if (place) {
            auto& r = live();
            std::unique_lock lock(r.m);
            if (!r.closed) {
                ticket_ = place->ticket;
                r.tickets.insert(this);
            } else {
                // leave_all() ran while this asked: its answer may have joined (or refreshed) a
                // ticket that nobody would leave.
                lock.unlock();
                (void)limiter_.line(place->ticket, limiter::line_alive, true);
            }
        }
        return place;
    }
    // Leaves the line (nothing when not in it); the next ask() joins again at the end.
    void leave() {
        if (const auto t = take(); t > 0) {
            (void)limiter_.line(t, limiter::line_alive, true);
        }
    }
    // Leaves the line for every live ticket of the process, from any thread (the limiter is
    // thread-safe), and keeps any ticket from joining after it: for a process about to die.
    static void leave_all() {
        auto& r = live();
        std::lock_guard lock(r.m);
        r.closed = true;
        for (line_ticket* t : r.tickets) {
            if (t->ticket_ > 0) {
                (void)t->limiter_.line(t->ticket_, limiter::line_alive, true);
                t->ticket_ = 0;
            }
        }
        r.tickets.clear();
    }

private:
    struct registry {
        std::mutex m;
        std::set<line_ticket*> tickets;  // those holding a ticket
        bool closed = false;             // leave_all() ran
    };
    static registry& live() {
        static registry r;
        return r;
    }
    std::int64_t ticket() {
        auto& r = live();
        std::lock_guard lock(r.m);
        return ticket_;
    }
    // The ticket, no longer this object's nor the registry's.
    std::int64_t take() {
        auto& r = live();
        std::lock_guard lock(r.m);
        r.tickets.erase(this);
        return std::exchange(ticket_, 0);
    }

    limiter& limiter_;
    std::int64_t ticket_ = 0;  // guarded by live().m
};

}  // namespace orch::limits
