// orch::engine::admin_input: how the admin endpoint (engine/admin.cpp) reads a request before a
// route touches the database: the target's path segments and query parameters (percent-decoded,
// UTF-8 without NUL), names in paths (no control or bidirectional characters), the body's media
// type and text, JSON bodies without NUL in any string, and the two PUT bodies. Pure code (no
// database, no I/O), which tests/fuzz/admin_request_fuzz.cpp fuzzes.
//
// Each check throws the status it stands for: bad_request (400), unsupported_media (415),
// unprocessable (422) or budget_update_error (422), with a message saying where.
#pragma once

#include "engine/result.hpp"
#include "engine/store.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace orch::engine::admin_input {

using json = nlohmann::json;

// The admin input's failures, in the engine's taxonomy (engine/result.hpp).
struct bad_request : failure {
    explicit bad_request(const std::string& what) : failure(error_category::invalid_input, what) {}
};
struct unsupported_media : failure {
    explicit unsupported_media(const std::string& what) : failure(error_category::unsupported_media, what) {}
};
struct unprocessable : failure {
    explicit unprocessable(const std::string& what) : failure(error_category::unprocessable, what) {}
};

// Every problem of a request body in one answer: a route notes each problem it finds and reads
// on; check() throws one unprocessable naming them all ("a; b; c").
class problems {
public:
    // At most `shown` problems are kept, the rest counted: a body of thousands of bad fields gets
    // an answer of a few lines, not megabytes.
    static constexpr std::size_t shown = 20;
    void add(std::string what) {
        if (what.empty()) {
            return;  // a check that found nothing
        }
        if (list_.size() < shown) {
            list_.push_back(std::move(what));
        } else {
            ++more_;
        }
    }
    // Notes the fields of `object` not among `allowed` as one problem: "unknown field 'x'" or
    // "unknown fields 'x', 'y' and N more", then the fields it takes and `hint`, if any.
    void unknown_fields(const json& object, std::initializer_list<std::string_view> allowed,
                        const std::string& hint = "");
    // Runs `read`, noting the unprocessable it throws rather than letting it end the reading.
    template <class F>
    bool note(F&& read) {
        try {
            read();
            return true;
        } catch (const unprocessable& e) {
            add(e.what());
            return false;
        }
    }
    bool empty() const { return list_.empty(); }
    std::string joined() const;  // "a; b; c"
    void check() const;          // throws unprocessable(joined()) when there is any

private:
    std::vector<std::string> list_;
    std::size_t more_ = 0;
};

struct target {
    std::vector<std::string> segments;          // decoded; a trailing empty segment dropped
    std::map<std::string, std::string> params;  // decoded query parameters
    std::string path;                           // the path as sent (percent-encoded), for messages
};
// Parses an origin-form target ("/v1/campaigns/x?dry_run=true"). Throws bad_request when it does
// not parse, a decoded segment, parameter name or value is not UTF-8 or holds a NUL, or a
// parameter is given twice.
target read_target(std::string_view raw);
// A route's parameters are among `allowed`: throws bad_request naming the first other one and the
// route's own (a misspelt `?dryrun=true` would otherwise apply for real).
void only_params(const std::map<std::string, std::string>& params, std::initializer_list<std::string_view> allowed);
// Names in a path (segment 3 of /v1/campaigns/{name}... and /v1/accounts/{id}...) have no control
// or bidirectional characters. Throws bad_request.
void check_path_names(const target& t);

// Query parameter `name` of `params` as an integer in [min, max], `dflt` when absent. Throws
// bad_request naming the parameter and the range.
std::int64_t int_param(const std::map<std::string, std::string>& params, const std::string& name, std::int64_t dflt,
                       std::int64_t min, std::int64_t max);

// An optional JSON object body: empty (or blank) is {}; anything but an object is a bad_request
// naming `shape`, the object expected. A field given twice is a problem added to `found`, said
// with the body's others; without `found`, an unprocessable of its own.
json object_body(const std::string& text, const std::string& shape, problems* found = nullptr);
// The same for a route that needs a body: empty (or blank) is a bad_request, "empty body: send
// `shape`".
json required_object_body(const std::string& text, const std::string& shape, problems* found = nullptr);

// The media type of a Content-Type value, lower-case, without parameters; "" when empty.
std::string media_type(std::string_view content_type);
// A body route's checks: a media type of `types` (415 otherwise, also without Content-Type), a
// charset of UTF-8 if one is named (415), and text that is UTF-8 without NUL (400 with its line
// and column). An empty (or blank) body passes: the route says what to send.
void check_body(std::string_view content_type, const std::string& body, const std::vector<std::string>& types);
// A route without a body refuses one (400).
void check_no_body(const std::string& body);
// A JSON body: parsed (400 when it is not JSON), no NUL in any string or key (400 naming it).
json json_body(const std::string& text);
// Throws bad_request naming the first string or key of `j` holding a NUL, by JSON pointer.
void refuse_nul_strings(const json& j, const std::string& pointer = "");

// PUT /v1/campaigns/{name}/budget: {"credits": N, "per_day": N, "per_account": N, "clear":
// ["per_day", "per_account"]}, each optional; absent and null both mean unchanged; "clear" removes
// a cap. Throws bad_request (not a JSON object) or budget_update_error (a field of the wrong kind).
budget_update parse_budget_body(const std::string& text);

// PUT /v1/accounts/{id}/limits: {"invite": {"per_day": N, "per_week": N}, ..., "clear": [ACTION |
// "all"]}; an action absent or null keeps its override. Throws bad_request (not JSON) or
// unprocessable (an unknown action or field, a bad value, an action both set and cleared).
struct limits_body {
    json patch = json::object();     // the actions set (no nulls), for apply_patch
    std::vector<std::string> clear;  // actions whose override is dropped, or "all"
    // "time_zone": the account's quota day (an IANA name, checked here); nullopt: unchanged.
    std::optional<std::string> time_zone;
};
limits_body parse_limits_body(const std::string& text);
// The overrides after `body`: `current` with the cleared actions dropped and the patch applied;
// nullopt with `why` set when the patch is refused.
std::optional<quota_overrides> apply_limits_body(const quota_overrides& current, const limits_body& body,
                                                 std::string& why);

}  // namespace orch::engine::admin_input
