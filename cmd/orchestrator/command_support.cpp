#include "cmd/orchestrator/command_support.hpp"

#include "api/text.hpp"

#include <charconv>
#include <cstdlib>

namespace orch::cli {

std::int64_t parse_id(const std::string& text, const std::string& what) {
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n < 1) {
        throw failure(what + " must be a positive integer, got '" + orch::text::escaped(text) + "'", 2);
    }
    return n;
}

std::string who_default() {
    const char* u = std::getenv("USER");
    return std::string("cli") + (u != nullptr && *u != '\0' ? ":" + std::string(u) : "");
}

std::unique_ptr<engine::store> open_db(const engine::settings& s) {
    auto db = std::make_unique<engine::store>(s.database_url);
    db->require_current();
    return db;
}

}  // namespace orch::cli
