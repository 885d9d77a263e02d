// orch::engine reply_pattern: inbox_not_interested_pattern, an operator's regular expression
// (ECMAScript syntax, any case) matched against the replies `serve` receives.
//
// Boost.Regex, not std::regex: libstdc++'s matcher recurses once per character for a repeated
// group, so an ordinary pattern such as "(no|not)*..." over a reply of 20,000 characters
// overflows the stack and kills serve. Boost's matcher is not recursive and gives up with an
// error on a pattern too costly for the text, which search() reports instead of matching.
#pragma once

#include <boost/regex.hpp>

#include <optional>
#include <string>

namespace orch::engine {

class reply_pattern {
public:
    // "" when `pattern` is a regular expression; otherwise why not.
    static std::string problem(const std::string& pattern);
    // Precondition: problem(pattern) is "".
    explicit reply_pattern(const std::string& pattern);

    // Whether `text` holds a match; nullopt with `why` set when the matcher gave up (a pattern too
    // costly for this text).
    std::optional<bool> search(const std::string& text, std::string& why) const;

private:
    boost::regex re_;
};

}  // namespace orch::engine
