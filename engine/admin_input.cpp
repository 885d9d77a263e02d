#include "engine/admin_input.hpp"
#include "engine/json_syntax.hpp"

#include "api/text.hpp"
#include "campaigns/loader.hpp"

#include <boost/url/parse.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

namespace orch::engine::admin_input {

namespace {

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

using orch::text::at_byte;

// "line 2, column 5 (byte 17)" of a byte offset (each counted from 1).
std::string line_column(std::string_view text, std::size_t offset) {
    const auto at = orch::text::position_of(text, offset);
    return "line " + std::to_string(at.line) + ", column " + std::to_string(at.column) + " (byte " +
           std::to_string(offset + 1) + ")";
}

std::string lower(std::string v) {
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return v;
}

std::string trimmed(std::string v) {
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) {
        v.pop_back();
    }
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) {
        v.erase(v.begin());
    }
    return v;
}

}  // namespace

target read_target(std::string_view raw) {
    auto parsed = boost::urls::parse_origin_form(raw);
    if (!parsed) {
        throw bad_request("malformed request target");
    }
    target t;
    t.path = std::string(parsed->encoded_path());
    for (auto s : parsed->segments()) {
        if (auto p = orch::text::check_text(s)) {
            throw bad_request("path segment " + std::to_string(t.segments.size() + 1) +
                              " (percent-decoded) is not valid text: " + at_byte(*p));
        }
        t.segments.push_back(s);
    }
    while (!t.segments.empty() && t.segments.back().empty()) {
        t.segments.pop_back();  // "/v1/campaigns/" is "/v1/campaigns"
    }
    for (auto p : parsed->params()) {
        if (p.key.empty() && !p.has_value) {
            continue;  // a bare separator: "?", "&&", a trailing "&"
        }
        if (auto bad = orch::text::check_text(p.key)) {
            throw bad_request("a query parameter's name (percent-decoded) is not valid text: " + at_byte(*bad));
        }
        if (auto bad = orch::text::check_text(p.value)) {
            throw bad_request("query parameter '" + std::string(p.key) + "' (percent-decoded) is not valid text: " +
                              at_byte(*bad));
        }
        // Twice is refused rather than read one way: `?dry_run=true&dry_run=false` applied for real.
        if (!t.params.emplace(p.key, p.value).second) {
            throw bad_request("query parameter '" + std::string(p.key) + "' is given more than once");
        }
    }
    return t;
}

void only_params(const std::map<std::string, std::string>& params, std::initializer_list<std::string_view> allowed) {
    for (const auto& [name, value] : params) {
        if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) {
            continue;
        }
        std::string known;
        for (auto a : allowed) {
            known += (known.empty() ? "" : ", ") + std::string(a);
        }
        throw bad_request("unknown query parameter '" + name + "' (" +
                          (known.empty() ? std::string("this path takes none") : "this path takes " + known) +
                          "); nothing was done");
    }
}

void check_path_names(const target& t) {
    const auto& seg = t.segments;
    if (seg.size() >= 3 && seg[0] == "v1" && (seg[1] == "campaigns" || seg[1] == "accounts")) {
        if (auto p = orch::text::check_name(seg[2])) {
            throw bad_request(std::string(seg[1] == "campaigns" ? "the campaign name" : "the account") +
                              " in the path is not a valid name: " + at_byte(*p));
        }
    }
}

std::string media_type(std::string_view content_type) {
    std::string v(content_type.substr(0, content_type.find(';')));
    return lower(trimmed(v));
}

void check_body(std::string_view content_type, const std::string& body, const std::vector<std::string>& types) {
    if (body.find_first_not_of(" \t\r\n") == std::string::npos) {
        return;
    }
    const auto type = media_type(content_type);
    if (std::find(types.begin(), types.end(), type) == types.end()) {
        std::string list;
        for (const auto& t : types) {
            list += (list.empty() ? "" : ", ") + t;
        }
        throw unsupported_media(
            (type.empty() ? std::string("no Content-Type") : "Content-Type '" + orch::text::escaped(type) + "'") +
            " is not taken here; send one of: " + list);
    }
    const std::string ct = lower(std::string(content_type));
    if (auto cs = ct.find("charset="); cs != std::string::npos) {
        auto charset = trimmed(ct.substr(cs + 8));
        charset = charset.substr(0, charset.find(';'));
        if (charset != "utf-8" && charset != "\"utf-8\"" && charset != "utf8") {
            throw unsupported_media("charset '" + orch::text::escaped(charset) + "' is not taken here; send UTF-8");
        }
    }
    if (auto p = orch::text::check_text(body)) {
        throw bad_request("the body is not valid text: " + p->what + " at " + line_column(body, p->offset));
    }
}

void check_no_body(const std::string& body) {
    if (!body.empty()) {
        throw bad_request("this route takes no request body (got " + std::to_string(body.size()) + " bytes)");
    }
}

void refuse_nul_strings(const json& j, const std::string& pointer) {
    auto where = [&pointer] { return pointer.empty() ? std::string("/") : pointer; };
    if (j.is_string()) {
        if (j.get_ref<const std::string&>().find('\0') != std::string::npos) {
            throw bad_request("the body's value at " + orch::text::escaped(where()) +
                              " contains a NUL character (\\u0000)");
        }
        return;
    }
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) {
            if (k.find('\0') != std::string::npos) {
                throw bad_request("a key of the body's object at " + orch::text::escaped(where()) +
                                  " contains a NUL character (\\u0000)");
            }
            refuse_nul_strings(v, pointer + "/" + k);
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i) {
            refuse_nul_strings(j[i], pointer + "/" + std::to_string(i));
        }
    }
}

namespace {

// The first key that an object of a JSON text repeats, as a JSON pointer ("/invite/per_day"); ""
// when none does. nlohmann keeps the last of them, so {"credits": 10, "credits": 1000} set 1000
// without a word; a client that sent both meant one of them, and which is not for us to guess.
struct duplicate_finder final : json::json_sax_t {
    struct level {
        bool object = false;
        std::vector<std::string> keys;  // an object's keys so far (few: a linear search)
        std::size_t index = 0;          // an array's elements so far
    };
    std::vector<level> stack;
    std::string found;

    std::string pointer() const {
        std::string out;
        for (const auto& l : stack) {
            if (l.object) {
                out += "/" + (l.keys.empty() ? std::string() : l.keys.back());
            } else if (l.index > 0) {
                out += "/" + std::to_string(l.index - 1);
            }
        }
        return out;
    }
    bool element() {
        if (!stack.empty() && !stack.back().object) {
            ++stack.back().index;
        }
        return true;
    }
    bool null() override { return element(); }
    bool boolean(bool) override { return element(); }
    bool number_integer(number_integer_t) override { return element(); }
    bool number_unsigned(number_unsigned_t) override { return element(); }
    bool number_float(number_float_t, const string_t&) override { return element(); }
    bool string(string_t&) override { return element(); }
    bool binary(binary_t&) override { return element(); }
    bool start_object(std::size_t) override {
        element();
        stack.push_back({true, {}, 0});
        return true;
    }
    bool key(string_t& k) override {
        auto& keys = stack.back().keys;
        if (std::find(keys.begin(), keys.end(), k) != keys.end()) {
            keys.push_back(k);
            found = pointer();
            return false;
        }
        keys.push_back(k);
        return true;
    }
    bool end_object() override {
        stack.pop_back();
        return true;
    }
    bool start_array(std::size_t) override {
        element();
        stack.push_back({false, {}, 0});
        return true;
    }
    bool end_array() override {
        stack.pop_back();
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

// The numbers that JSON reads as floats among an object's own fields, as the text writes them
// ("18446744073709551616"): a number beyond 64 bits is echoed as sent, not as 1.8446744073709552e+19.
struct float_texts final : json::json_sax_t {
    int depth = 0;
    std::string field;
    std::map<std::string, std::string> found;

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t& s) override {
        if (depth == 1) {
            found.emplace(field, s);
        }
        return true;
    }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return ++depth, true; }
    bool key(string_t& k) override {
        if (depth == 1) {
            field = k;
        }
        return true;
    }
    bool end_object() override { return --depth, true; }
    bool start_array(std::size_t) override { return ++depth, true; }
    bool end_array() override { return --depth, true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

// A body that repeats a field is refused (422), naming it: with the body's other problems when
// the caller collects them in `found`, else alone.
void refuse_duplicate_keys(const std::string& text, problems* found = nullptr) {
    duplicate_finder d;
    json::sax_parse(text, &d);
    if (d.found.empty()) {
        return;
    }
    std::string what = "the body gives the field '" + orch::text::escaped(d.found.substr(1)) + "' twice: send each field once";
    if (found == nullptr) {
        throw unprocessable(what);
    }
    found->add(std::move(what));
}

}  // namespace

// The byte at which `text` (JSON) nests deeper than `limit` arrays and objects, if it does. Read
// before the body is parsed: the checks that walk a parsed body recurse, and a 40 KB body of 20,000
// brackets overflowed serve's stack.
static std::optional<std::size_t> too_deep(std::string_view text, int limit) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') {
                ++i;  // the escaped character, a quote included
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limit) {
                return i;
            }
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return std::nullopt;
}

json json_body(const std::string& text) {
    // No admin body needs more than a few levels.
    constexpr int max_depth = 64;
    if (auto at = too_deep(text, max_depth)) {
        throw bad_request("the body nests arrays and objects deeper than " + std::to_string(max_depth) +
                          " levels (at byte " + std::to_string(*at) + ")");
    }
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) {
        // What and where, as the parser says it ("parse error at line 1, column 12: ...",
        // "number overflow parsing '1e400' at line 1, column 28").
        throw bad_request("the body is not valid JSON: " + json_syntax_error(text));
    }
    refuse_nul_strings(j);
    return j;
}

std::string problems::joined() const {
    std::string all;
    for (const auto& p : list_) {
        all += (all.empty() ? "" : "; ") + p;
    }
    if (more_ > 0) {
        all += "; and " + orch::text::counted(static_cast<std::int64_t>(more_), "more problem", "more problems");
    }
    return all;
}

void problems::unknown_fields(const json& object, std::initializer_list<std::string_view> allowed,
                              const std::string& hint) {
    if (!object.is_object()) {
        return;
    }
    std::string names;
    std::size_t count = 0;
    for (const auto& [key, v] : object.items()) {
        if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) {
            continue;
        }
        if (++count <= 5) {
            names += (names.empty() ? "'" : ", '") + orch::text::escaped_clipped(key, 100) + "'";
        }
    }
    if (count == 0) {
        return;
    }
    std::string fields;
    for (auto a : allowed) {
        fields += (fields.empty() ? "" : ", ") + std::string(a);
    }
    add(std::string(count == 1 ? "unknown field " : "unknown fields ") + names +
        (count > 5 ? " and " + std::to_string(count - 5) + " more" : std::string()) + " (fields: " + fields +
        (hint.empty() ? "" : "; " + hint) + ")");
}

void problems::check() const {
    if (!list_.empty()) {
        throw unprocessable(joined());
    }
}

budget_update parse_budget_body(const std::string& text) {
    // Every problem of the body, in one answer.
    problems found;
    const auto j = required_object_body(
        text, R"({"credits": N, "per_day": N, "per_account": N, "clear": ["per_day", "per_account"]})", &found);
    auto cleared = [&j](const std::string& key) {
        return j.contains("clear") && j["clear"].is_array() &&
               std::find(j["clear"].begin(), j["clear"].end(), json(key)) != j["clear"].end();
    };
    // A number too large for JSON's integers reads as a float: echo it as the body writes it.
    float_texts written;
    json::sax_parse(text, &written);
    auto value_text = [&written](const std::string& key, const json& v) {
        if (v.is_number_float()) {
            if (auto it = written.found.find(key); it != written.found.end()) {
                return orch::text::escaped_clipped(it->second, 100);
            }
        }
        return dump(v);
    };
    // A positive whole number; one too large for 64 bits (above INT64_MAX, or read by JSON as a
    // float) is taken as INT64_MAX, so that it is refused by the budget's own limit, as a large one
    // that fits is (the CLI does the same).
    auto positive_whole = [](const json& v) -> std::optional<std::int64_t> {
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX) {
            return INT64_MAX;
        }
        if (v.is_number_float() && v.get<double>() >= 9.2e18 && std::isfinite(v.get<double>()) &&
            std::floor(v.get<double>()) == v.get<double>()) {
            return INT64_MAX;
        }
        if (!v.is_number_integer() || v.get<std::int64_t>() < 1) {
            return std::nullopt;
        }
        return v.get<std::int64_t>();
    };
    // Above the budget's limit: said with the body's other problems (the store holds it too).
    auto above_limit = [&found, &value_text](const std::string& key, const json& v, std::int64_t n) {
        if (n <= budget_update::credits_max) {
            return false;
        }
        found.add(key + " cannot be above " + std::to_string(budget_update::credits_max) + " credits, got " + value_text(key, v));
        return true;
    };
    found.unknown_fields(j, {"credits", "per_day", "per_account", "clear"});
    budget_update u;
    for (const auto& [key, v] : j.items()) {
        if (key != "credits" && key != "per_day" && key != "per_account" && key != "clear") {
            continue;
        }
        if (v.is_null()) {
            continue;  // null: as if absent
        }
        if (key == "clear") {
            if (!v.is_array()) {
                found.add("clear must be an array of per_day, per_account; got " + dump(v));
                continue;
            }
            for (const auto& c : v) {
                if (c != "per_day" && c != "per_account") {
                    found.add("clear: expected per_day or per_account, got " + dump(c));
                    continue;
                }
                (c == "per_day" ? u.per_day : u.per_account) = std::optional<std::int64_t>{};
            }
        } else if (key == "credits") {
            const auto n = positive_whole(v);
            if (!n) {
                found.add("credits must be a whole number >= 1, got " + value_text(key, v));
                continue;
            }
            if (above_limit(key, v, *n)) {
                continue;
            }
            u.credits = *n;
        } else {
            const auto n = positive_whole(v);
            if (!n) {
                found.add(key + " must be a whole number >= 1 (remove the cap with \"clear\": [\"" + key +
                                   "\"]), got " + value_text(key, v));
                continue;
            }
            if (above_limit(key, v, *n)) {
                continue;
            }
            if (cleared(key)) {
                found.add(key + " is both set and cleared; send one of them");
                continue;
            }
            (key == "per_day" ? u.per_day : u.per_account) = std::optional<std::int64_t>{*n};
        }
    }
    // A cap above the total, both in the body, is said with the fields' problems (the store checks
    // a cap against the live total when the body gives only one of them).
    if (u.credits) {
        for (const auto& [key, cap] : {std::pair{"per_day", u.per_day}, std::pair{"per_account", u.per_account}}) {
            if (cap && *cap && **cap > *u.credits) {
                found.add(std::string(key) + " (" + std::to_string(**cap) + ") cannot be above credits (" +
                                   std::to_string(*u.credits) + ")");
            }
        }
    }
    if (!found.empty()) {
        throw budget_update_error(found.joined());
    }
    if (!u.credits && !u.per_day && !u.per_account) {
        throw budget_update_error("give at least one of credits, per_day, per_account, or a cap to clear "
                                  "(\"clear\": [\"per_day\"])");
    }
    return u;
}

limits_body parse_limits_body(const std::string& text) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        throw bad_request(R"(empty body: send a JSON object of actions, e.g. {"invite": {"per_day": 40}})");
    }
    limits_body out;
    json j = json_body(text);
    std::string why;
    if (!j.is_object()) {
        apply_patch({}, j, why);  // says what the body must be
        throw unprocessable(why);
    }
    // Every problem of the body, in one answer.
    problems found;
    refuse_duplicate_keys(text, &found);
    if (auto it = j.find("clear"); it != j.end()) {
        // One name alone ("clear": "all") is a list of one.
        const json list = it->is_string() ? json::array({*it}) : *it;
        j.erase(it);
        if (!list.is_null() && !list.is_array()) {
            found.add("clear must be an action name, \"all\" or an array of them, got " + dump(list));
        } else if (!list.is_null()) {
            for (const auto& a : list) {
                if (!a.is_string()) {
                    found.add("clear: expected an action name, got " + dump(a));
                    continue;
                }
                const auto name = a.get<std::string>();
                if (name != "all" && !apply_patch({}, json{{name, nullptr}}, why)) {
                    found.add("clear: unknown action '" + orch::text::escaped_clipped(name, 100) + "'; one of " +
                              action_list() + ", all");
                    continue;
                }
                out.clear.push_back(name);
            }
        }
    }
    if (auto it = j.find("time_zone"); it != j.end()) {
        const json zone = *it;
        j.erase(it);
        if (!zone.is_null() && !zone.is_string()) {
            found.add("time_zone: expected an IANA time zone name such as \"Europe/Paris\", got " + dump(zone));
        } else if (!zone.is_null()) {
            if (const auto problem = campaigns::time_zone_problem(zone.get<std::string>()); !problem.empty()) {
                found.add("time_zone: " + problem);
            } else {
                out.time_zone = zone.get<std::string>();
            }
        }
    }
    const bool all = std::find(out.clear.begin(), out.clear.end(), "all") != out.clear.end();
    // Unknown names said together, once (a body of thousands stays a line), null ones too.
    std::string unknown;
    std::size_t unknown_count = 0;
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (!apply_patch({}, json{{it.key(), nullptr}}, why)) {
            if (++unknown_count <= 5) {
                unknown += (unknown.empty() ? "'" : ", '") + orch::text::escaped_clipped(it.key(), 100) + "'";
            }
            continue;
        }
        if (it->is_null()) {
            continue;  // null: as if absent
        }
        if (all || std::find(out.clear.begin(), out.clear.end(), it.key()) != out.clear.end()) {
            found.add(orch::text::escaped(it.key()) + " is both set and cleared; send one of them");
            continue;
        }
        // Each action alone, so that every action's problem is said.
        if (!apply_patch({}, json{{it.key(), *it}}, why)) {
            found.add(why);
            continue;
        }
        out.patch[it.key()] = *it;
    }
    if (unknown_count > 0) {
        found.add(std::string(unknown_count == 1 ? "unknown action " : "unknown actions ") + unknown +
                  (unknown_count > 5 ? " and " + std::to_string(unknown_count - 5) + " more" : std::string()) +
                  " (actions: " + action_list() +
                  "; besides them time_zone and clear; each action takes an object of its quotas, such as "
                  "{\"invite\": {\"per_day\": 40, \"per_week\": 150}})");
    }
    found.check();
    return out;
}

std::optional<quota_overrides> apply_limits_body(const quota_overrides& current, const limits_body& body,
                                                 std::string& why) {
    quota_overrides base = current;
    for (const auto& a : body.clear) {
        if (a == "all") {
            base = {};
            continue;
        }
        auto cleared = apply_patch(base, json{{a, nullptr}}, why);
        if (!cleared) {
            return std::nullopt;
        }
        base = *cleared;
    }
    return apply_patch(base, body.patch, why);
}

std::int64_t int_param(const std::map<std::string, std::string>& params, const std::string& name, std::int64_t dflt,
                       std::int64_t min, std::int64_t max) {
    auto it = params.find(name);
    if (it == params.end()) {
        return dflt;
    }
    std::int64_t n = 0;
    const auto& v = it->second;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n < min || n > max) {
        throw bad_request("query parameter '" + name + "' must be an integer from " + std::to_string(min) + " to " +
                          std::to_string(max) + ", got '" + v + "'");
    }
    return n;
}

json object_body(const std::string& text, const std::string& shape, problems* found) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        return json::object();
    }
    auto j = json_body(text);  // not JSON: where and what
    if (!j.is_object()) {
        throw bad_request("the body must be a JSON object: " + shape);
    }
    refuse_duplicate_keys(text, found);
    return j;
}

json required_object_body(const std::string& text, const std::string& shape, problems* found) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        throw bad_request("empty body: send " + shape);
    }
    return object_body(text, shape, found);
}

}  // namespace orch::engine::admin_input
