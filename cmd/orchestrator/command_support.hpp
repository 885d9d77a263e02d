// What the database commands of the CLI share (dnc and leads, inbox and campaign watch): a
// failure they report themselves with its exit code, the wrapper that turns it into the message
// and the code, and the readers of ids, the operator's name and the database.
#pragma once

#include "engine/config.hpp"
#include "engine/store.hpp"

#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

namespace orch::cli {

// A failure a command reports itself: the message, and the exit code.
struct failure : std::runtime_error {
    failure(const std::string& what, int code_) : std::runtime_error(what), code(code_) {}
    int code;
};

// Runs `f`, turning a failure into its message on stderr and its exit code.
template <typename F>
std::function<int()> guarded(F f) {
    return [f = std::move(f)]() -> int {
        try {
            return f();
        } catch (const failure& e) {
            std::cerr << e.what() << "\n";
            return e.code;
        }
    };
}

// `text` as a positive integer; a failure with exit code 2 naming `what` otherwise.
std::int64_t parse_id(const std::string& text, const std::string& what);
// Who the CLI acts as when not told: "cli:<USER>", or "cli".
std::string who_default();
// The store of `s`, checked to be at this binary's schema version.
std::unique_ptr<engine::store> open_db(const engine::settings& s);

}  // namespace orch::cli
