#include "engine/reply_pattern.hpp"

#include <stdexcept>

namespace orch::engine {

namespace {
constexpr auto flags = boost::regex::ECMAScript | boost::regex::icase;
}

std::string reply_pattern::problem(const std::string& pattern) {
    try {
        boost::regex re(pattern, flags);
    } catch (const boost::regex_error& e) {
        return e.what();
    }
    return "";
}

reply_pattern::reply_pattern(const std::string& pattern) : re_(pattern, flags) {}

std::optional<bool> reply_pattern::search(const std::string& text, std::string& why) const {
    try {
        return boost::regex_search(text, re_);
    } catch (const std::runtime_error& e) {
        // Boost's bound on the matcher's work or memory ("the complexity of matching ... exceeded
        // predefined bounds"): the text is left unmatched, said by the caller.
        why = e.what();
        return std::nullopt;
    }
}

}  // namespace orch::engine
