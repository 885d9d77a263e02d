// YAML -> JSON with node positions (see detail/yaml_json.hpp).
#include "campaigns/detail/yaml_json.hpp"
#include "campaigns/detail/yaml_tags.hpp"
#include "api/text.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

namespace orch::campaigns::detail {

using json = nlohmann::json;

namespace {

// Bound on nesting: a campaign is a few levels deep; a deeper document is a mistake or an attack
// on the recursion below.
constexpr int depth_max = 64;

constexpr std::string_view tag_str = "tag:yaml.org,2002:str";
constexpr std::string_view tag_int = "tag:yaml.org,2002:int";

bool is_digits(std::string_view s) {
    if (s.empty()) {
        return false;
    }
    for (char c : s) {
        if (c < '0' || c > '9') {
            return false;
        }
    }
    return true;
}

std::string_view without_sign(std::string_view s) {
    if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
        s.remove_prefix(1);
    }
    return s;
}

// YAML 1.2 core schema float: [-+]? ( . digits | digits [ . digits? ] ) ( [eE] [-+]? digits )?
bool is_core_float(std::string_view s) {
    s = without_sign(s);
    std::size_t exp = s.find_first_of("eE");
    std::string_view mantissa = s.substr(0, exp);
    if (exp != std::string_view::npos && !is_digits(without_sign(s.substr(exp + 1)))) {
        return false;
    }
    std::size_t dot = mantissa.find('.');
    if (dot == std::string_view::npos) {
        return is_digits(mantissa);
    }
    std::string_view whole = mantissa.substr(0, dot);
    std::string_view fraction = mantissa.substr(dot + 1);
    if (whole.empty()) {
        return is_digits(fraction);
    }
    return is_digits(whole) && (fraction.empty() || is_digits(fraction));
}

json resolve_plain(const std::string& s) {
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
        return nullptr;
    }
    if (s == "true" || s == "True" || s == "TRUE") {
        return true;
    }
    if (s == "false" || s == "False" || s == "FALSE") {
        return false;
    }
    std::string_view digits = s.front() == '+' ? std::string_view(s).substr(1) : std::string_view(s);
    if (is_digits(without_sign(digits))) {
        std::int64_t v = 0;
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
        if (ec == std::errc() && end == digits.data() + digits.size()) {
            return v;
        }
    }
    if (is_core_float(s)) {
        double v = std::strtod(s.c_str(), nullptr);
        if (std::isfinite(v)) {
            return v;
        }
    }
    return s;
}

// Where each line starts, so that a position costs a binary search and a scan of one line (an
// audience file has hundreds of thousands of nodes).
class line_index {
public:
    explicit line_index(std::string_view text) : text_(text) {
        starts_.push_back(0);
        for (std::size_t i = 0; i < text.size(); ++i) {
            if (text[i] == '\n') {
                starts_.push_back(i + 1);
            }
        }
    }

    source_pos at(std::size_t offset) const {
        offset = std::min(offset, text_.size());
        auto line = std::upper_bound(starts_.begin(), starts_.end(), offset) - 1;
        source_pos p = position_of(text_.substr(*line, offset - *line), offset - *line);
        p.line = static_cast<int>(line - starts_.begin()) + 1;
        p.offset = static_cast<int>(offset);
        return p;
    }

private:
    std::string_view text_;
    std::vector<std::size_t> starts_;
};

struct converter {
    std::string_view text;
    parsed_document& out;
    std::size_t nodes_left;
    line_index lines{text};

    source_pos pos(const YAML::Mark& m) const {
        if (m.is_null() || m.pos < 0) {
            return {};
        }
        return lines.at(static_cast<std::size_t>(m.pos));
    }

    void fail(const YAML::Mark& m, std::string message) {
        out.errors.push_back({pos(m), std::move(message)});
    }
    // A value that reads as null; the document's shape stands (syntax_error::value_only).
    void value_fail(const YAML::Mark& m, std::string message) {
        out.errors.push_back({pos(m), std::move(message), true});
    }

    json convert(const YAML::Node& n, const std::string& pointer, int depth) {
        if (depth > depth_max) {
            fail(n.Mark(), "nesting deeper than " + std::to_string(depth_max) + " levels");
            return nullptr;
        }
        if (nodes_left == 0) {
            return nullptr;  // reported once, below
        }
        if (--nodes_left == 0) {
            // Aliases can make a small text expand into billions of nodes.
            fail(n.Mark(), "too many values (aliases expanding without bound?)");
            return nullptr;
        }
        if (!core_schema_tag(n.Tag())) {
            value_fail(n.Mark(), "unsupported YAML tag '" + shown_tag(n.Tag()) + "' (a campaign file takes !!str, !!int, !!float, "
                           "!!bool, !!null, !!map and !!seq, or none)");
            return nullptr;
        }
        json v;
        switch (n.Type()) {
        case YAML::NodeType::Map:
            v = mapping(n, pointer, depth);
            break;
        case YAML::NodeType::Sequence:
            v = sequence(n, pointer, depth);
            break;
        case YAML::NodeType::Scalar:
            v = scalar(n);
            if (v.is_number_float() && is_digits(without_sign(n.Scalar()))) {
                // Digits beyond 64 bits would read as a rounded float (9.999999999999999e+22):
                // said once and as written, whatever the field wanted.
                value_fail(n.Mark(), "the whole number " + orch::text::escaped_clipped(n.Scalar(), 40) +
                                   " is too large: a whole number is at most " +
                                   std::to_string(std::numeric_limits<std::int64_t>::max()) +
                                   " (quote it if it is text)");
                return nullptr;
            }
            break;
        default:
            return nullptr;  // Null (an empty value) or Undefined
        }
        if (auto why = tag_mismatch(n, v)) {
            value_fail(n.Mark(), *why);
            return nullptr;
        }
        return v;
    }

    // A core tag on a node it does not fit (`!!int tagged`, `!!seq` on a mapping): the file says
    // one type and holds another, which read as the text would hide the mistake.
    static std::optional<std::string> tag_mismatch(const YAML::Node& n, const json& v) {
        const std::string& tag = n.Tag();
        if (!tag.starts_with(yaml_core_prefix)) {
            return std::nullopt;
        }
        const std::string type = tag.substr(yaml_core_prefix.size());
        std::string_view expected;
        bool fits = false;
        if (n.IsMap()) {
            fits = type == "map";
        } else if (n.IsSequence()) {
            fits = type == "seq";
        } else if (type == "str") {
            fits = true;
        } else if (type == "int") {
            fits = v.is_number_integer();
            expected = "an integer";
        } else if (type == "float") {
            fits = v.is_number();
            expected = "a number";
        } else if (type == "bool") {
            fits = v.is_boolean();
            expected = "true or false";
        } else if (type == "null") {
            fits = v.is_null();
            expected = "null";
        } else {
            expected = type == "map" ? "a mapping" : "a sequence";
        }
        if (fits) {
            return std::nullopt;
        }
        if (n.IsMap() || n.IsSequence()) {
            return "the tag !!" + type + " does not fit a " + (n.IsMap() ? "mapping" : "sequence");
        }
        return "the tag !!" + type + " does not fit the value '" + n.Scalar() + "', which is not " + std::string(expected);
    }

    json scalar(const YAML::Node& n) {
        const std::string& tag = n.Tag();
        if (tag == "!" || tag == tag_str) {
            return n.Scalar();  // quoted, or explicitly a string
        }
        // !!int asks for the core schema's integer, whose 0x and 0o forms a plain value leaves as
        // text (a name such as 0x10 stays a name).
        if (tag == tag_int) {
            if (auto v = based_integer(n.Scalar())) {
                return *v;
            }
        }
        return resolve_plain(n.Scalar());
    }

    static std::optional<std::int64_t> based_integer(const std::string& text) {
        int base = 0;
        if (text.size() > 2 && text[0] == '0' && text[1] == 'x') {
            base = 16;
        } else if (text.size() > 2 && text[0] == '0' && text[1] == 'o') {
            base = 8;
        } else {
            return std::nullopt;
        }
        std::int64_t v = 0;
        auto [end, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), v, base);
        if (ec != std::errc() || end != text.data() + text.size()) {
            return std::nullopt;
        }
        return v;
    }

    json sequence(const YAML::Node& n, const std::string& pointer, int depth) {
        json arr = json::array();
        std::size_t index = 0;
        for (const YAML::Node& item : n) {
            std::string p = pointer_append(pointer, index++);
            arr.push_back(convert(item, p, depth + 1));
            record(p, item.Mark(), item.Mark());
        }
        return arr;
    }

    json mapping(const YAML::Node& n, const std::string& pointer, int depth) {
        json obj = json::object();
        std::map<std::string, source_pos> first_seen;
        for (const auto& entry : n) {
            // Copies: the iterator hands out a temporary pair of node handles.
            YAML::Node key = entry.first;
            YAML::Node value = entry.second;
            if (!key.IsScalar()) {
                fail(key.Mark(), "a mapping key must be a plain text");
                continue;
            }
            // A key is text: no tag but !!str (`!!int name:` or `!x accounts:` says something else).
            if (const std::string& tag = key.Tag(); !(tag.empty() || tag == "?" || tag == "!" || tag == tag_str)) {
                fail(key.Mark(), "the key '" + key.Scalar() + "' has the tag '" + shown_tag(tag) +
                                     "': a key is text, untagged or !!str");
                continue;
            }
            const std::string& name = key.Scalar();
            auto [seen, fresh] = first_seen.emplace(name, pos(key.Mark()));
            if (!fresh) {
                fail(key.Mark(), "duplicate key '" + name + "' (first at line " +
                                     std::to_string(seen->second.line) + ")");
                continue;
            }
            std::string p = pointer_append(pointer, name);
            obj[name] = convert(value, p, depth + 1);
            // An empty value (`key:`) has no position of its own: yaml-cpp marks the next token.
            YAML::Mark value_mark = value.IsNull() ? key.Mark() : value.Mark();
            record(p, key.Mark(), value_mark);
        }
        return obj;
    }

    void record(const std::string& pointer, const YAML::Mark& key, const YAML::Mark& value) {
        out.positions[pointer] = node_pos{pos(value), pos(key)};
    }
};

source_pos start_of(std::string_view text) {
    return position_of(text, 0);
}

}  // namespace

source_pos position_of(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    source_pos p{1, 1, static_cast<int>(offset)};
    for (std::size_t i = 0; i < offset; ++i) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        if (c == '\n') {
            ++p.line;
            p.column = 1;
        } else if ((c & 0xC0) != 0x80) {
            ++p.column;  // count characters, not UTF-8 continuation bytes
        }
    }
    return p;
}

std::string pointer_append(const std::string& pointer, const std::string& token) {
    std::string out = pointer + "/";
    for (char c : token) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out += c;
        }
    }
    return out;
}

std::string pointer_append(const std::string& pointer, std::size_t index) {
    return pointer + "/" + std::to_string(index);
}

std::vector<std::string> pointer_tokens(const std::string& pointer) {
    std::vector<std::string> tokens;
    std::size_t at = 0;
    while (at < pointer.size() && pointer[at] == '/') {
        std::size_t end = pointer.find('/', at + 1);
        std::string raw = pointer.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
        std::string token;
        for (std::size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '~' && i + 1 < raw.size()) {
                token += raw[i + 1] == '1' ? '/' : '~';
                ++i;
            } else {
                token += raw[i];
            }
        }
        tokens.push_back(std::move(token));
        at = end == std::string::npos ? pointer.size() : end;
    }
    return tokens;
}

namespace {

// The start of each document the event parser reads; nothing else is kept.
struct document_starts final : YAML::EventHandler {
    std::vector<YAML::Mark> starts;
    void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
};

// yaml-cpp 0.7 never consumes a token that cannot start a value at a document's top (a ',' there:
// ", x", "[a]\n,"): YAML::LoadAll then reads empty documents at that token forever, allocating
// one per turn (found by tests/fuzz). A first pass with the event parser reads the documents
// without building them; one starting where the previous one started is that case, reported as a
// syntax error there. Every other document consumes tokens, so the pass ends. Throws what the
// parser throws for other syntax errors.
std::optional<YAML::Mark> stuck_document(std::string_view text) {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    document_starts seen;
    while (parser.HandleNextDocument(seen)) {
        auto& s = seen.starts;
        if (s.size() >= 2 && s[s.size() - 1].pos == s[s.size() - 2].pos) {
            return s.back();
        }
        if (s.size() > 2) {
            s.erase(s.begin(), s.end() - 2);  // only the last two matter
        }
    }
    return std::nullopt;
}

// The offset of the innermost '[' or '{' (`open`) that starts a flow before `end` and is not
// closed before it. yaml-cpp reports an unclosed flow where it gave up, often the line after it
// or the end of the file; the bracket to close is what the author needs. A bracket counts only
// where a flow can start (after ':', '-', ',', '?', another opener, or at a line's start), not
// inside quotes, comments or a plain scalar ("note: a [b" opens nothing).
std::optional<std::size_t> unclosed_flow(std::string_view text, std::size_t end, char open) {
    struct opener {
        char c;
        std::size_t at;
    };
    std::vector<opener> stack;
    char quote = 0;
    char last = '\n';  // the last character that is not a space: where a value may start
    end = std::min(end, text.size());
    for (std::size_t i = 0; i < end; ++i) {
        const char c = text[i];
        if (quote != 0) {
            if (quote == '"' && c == '\\') {
                ++i;
            } else if (c == quote) {
                if (quote == '\'' && i + 1 < end && text[i + 1] == '\'') {
                    ++i;  // '' inside single quotes
                } else {
                    quote = 0;
                    last = c;
                }
            }
            continue;
        }
        if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n')) {
            while (i < end && text[i] != '\n') {
                ++i;
            }
            last = '\n';
            continue;
        }
        const bool value_starts = last == '\n' || last == ':' || last == '-' || last == ',' || last == '?' ||
                                  last == '[' || last == '{';
        if ((c == '[' || c == '{') && value_starts) {
            stack.push_back({c, i});
        } else if ((c == ']' || c == '}') && !stack.empty()) {
            stack.pop_back();
        } else if ((c == '"' || c == '\'') && value_starts) {
            quote = c;
        }
        if (c != ' ' && c != '\t' && c != '\r') {
            last = c;
        }
    }
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
        if (it->c == open) {
            return it->at;
        }
    }
    return std::nullopt;
}

// yaml-cpp's message, said plainly where it is terse: "invalid unicode: 55296" is a \uD800
// escape, half of a surrogate pair (JSON's way to write a character beyond U+FFFF), alone.
std::string syntax_message(const std::string& msg) {
    constexpr std::string_view invalid_unicode = "invalid unicode: ";
    if (!msg.starts_with(invalid_unicode)) {
        return msg;
    }
    unsigned long code = 0;
    const char* first = msg.data() + invalid_unicode.size();
    auto [end, ec] = std::from_chars(first, msg.data() + msg.size(), code);
    if (ec != std::errc() || end != msg.data() + msg.size()) {
        return msg;
    }
    char hex[16];
    std::snprintf(hex, sizeof hex, "%04lX", code);
    if (code >= 0xD800 && code <= 0xDFFF) {
        return std::string("the escape \\u") + hex +
               " is half of a surrogate pair without its other half: it is no character";
    }
    return std::string("the escape \\u") + hex + " is no Unicode character";
}

}  // namespace

parsed_document parse_yaml(std::string_view text, std::size_t nodes_max) {
    parsed_document out;
    converter conv{text, out, nodes_max};
    std::vector<YAML::Node> documents;
    try {
        if (auto at = stuck_document(text)) {
            const auto offset = static_cast<std::size_t>(std::max(at->pos, 0));
            const char c = offset < text.size() ? text[offset] : ' ';
            const bool printable = c > ' ' && c < 0x7f;
            out.errors.push_back({conv.pos(*at), std::string("YAML syntax error: unexpected ") +
                                                     (printable ? "'" + std::string(1, c) + "'" : "text") +
                                                     " where a value should start"});
            return out;
        }
        documents = YAML::LoadAll(std::string(text));
    } catch (const YAML::DeepRecursion& e) {
        // yaml-cpp says "bad file" for it.
        out.errors.push_back({conv.pos(e.mark), "values nested more than " + std::to_string(e.depth()) +
                                                    " levels deep (a campaign file takes " + std::to_string(depth_max) + ")"});
        return out;
    } catch (const YAML::ParserException& e) {
        // An unclosed flow is said at its opening bracket, with where the parser gave up.
        const bool sequence = e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW;
        if (sequence || e.msg == YAML::ErrorMsg::END_OF_MAP_FLOW) {
            const char open = sequence ? '[' : '{';
            if (auto at = unclosed_flow(text, static_cast<std::size_t>(std::max(e.mark.pos, 0)), open)) {
                const auto gave_up = conv.pos(e.mark);
                out.errors.push_back({position_of(text, *at),
                                      std::string("YAML syntax error: this '") + open + "' is never closed (no '" +
                                          (sequence ? ']' : '}') + "' before " +
                                          (e.mark.pos >= static_cast<int>(text.size())
                                               ? std::string("the end of the file")
                                               : std::to_string(gave_up.line) + ":" + std::to_string(gave_up.column)) +
                                          ")"});
                return out;
            }
        }
        out.errors.push_back({conv.pos(e.mark), "YAML syntax error: " + syntax_message(e.msg)});
        return out;
    } catch (const YAML::Exception& e) {
        out.errors.push_back({start_of(text), std::string("YAML syntax error: ") + e.what()});
        return out;
    }
    if (documents.empty() || documents.front().IsNull()) {
        const bool blank = text.find_first_not_of(" \t\r\n") == std::string_view::npos;
        out.errors.push_back({start_of(text), blank ? "the file is empty"
                                                    : "the file holds no value (null, ~ or comments only)"});
        return out;
    }
    if (documents.size() > 1) {
        conv.fail(documents[1].Mark(), "one campaign per file: a second YAML document starts here");
    }
    out.value = conv.convert(documents.front(), "", 0);
    out.positions[""] = node_pos{conv.pos(documents.front().Mark()), conv.pos(documents.front().Mark())};
    return out;
}

}  // namespace orch::campaigns::detail
