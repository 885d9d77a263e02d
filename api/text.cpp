#include "api/text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace orch::text {

namespace {

// Decodes one UTF-8 sequence at s[i]. Returns the number of bytes (0: invalid) and the code point.
std::size_t decode(std::string_view s, std::size_t i, char32_t& cp) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
        cp = b0;
        return 1;
    }
    std::size_t len = 0;
    char32_t min = 0;
    if ((b0 & 0xE0) == 0xC0) {
        len = 2;
        cp = b0 & 0x1F;
        min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3;
        cp = b0 & 0x0F;
        min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4;
        cp = b0 & 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if (i + len > s.size()) {
        return 0;
    }
    for (std::size_t k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;  // overlong, out of range, or a surrogate
    }
    return len;
}

std::string hex_byte(unsigned char b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", b);
    return buf;
}

// Characters that change how a line reads beyond the controls: line and paragraph separators,
// and the invisible direction marks. Escaped in logs; not refused in names (check_name's list is
// the one the API documents).
bool is_format_changing(char32_t cp) {
    return cp == 0x2028 || cp == 0x2029 || cp == 0x200E || cp == 0x200F || cp == 0x061C || cp == 0xFEFF;
}

}  // namespace

std::string code_point_name(char32_t cp) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
    return buf;
}

bool is_forbidden_in_name(char32_t cp) {
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

namespace {

// Characters that show as nothing, so that a name holding one looks like another name: the
// zero-width space, the word joiner and other invisible operators, the byte order mark, the soft
// hyphen, the Mongolian vowel separator, the direction marks, and the line and paragraph
// separators. The zero-width joiner and non-joiner are not among them: scripts (Persian, the
// Indic ones) and emoji sequences need them.
bool is_invisible_in_name(char32_t cp) {
    return cp == 0x200B || (cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF || cp == 0x00AD || cp == 0x180E ||
           cp == 0x200E || cp == 0x200F || cp == 0x061C || cp == 0x2028 || cp == 0x2029 ||
           // the combining grapheme joiner, the Hangul and Khmer fillers, and the tag characters
           cp == 0x034F || cp == 0x115F || cp == 0x1160 || cp == 0x3164 || cp == 0xFFA0 || cp == 0x17B4 ||
           cp == 0x17B5 || (cp >= 0xE0000 && cp <= 0xE007F);
}

// A space that is not U+0020 (a no-break space, an em space, the ideographic space): in a quoted
// name it reads as a plain space, so 'sender 1' and 'sender<U+00A0>1' would look alike.
bool is_odd_space(char32_t cp) {
    return cp == 0x00A0 || cp == 0x202F || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x205F ||
           cp == 0x3000;
}

// What a name may not begin or end with, as said in a message: a space of any kind (a trailing
// one makes "tour " look like "tour") or a joiner, which joins nothing there.
const char* edge_kind(char32_t cp) {
    if (cp == ' ') {
        return "a space";
    }
    if (cp == 0x00A0 || cp == 0x202F) {
        return "a no-break space";
    }
    if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x205F || cp == 0x3000) {
        return "a space";
    }
    if (cp == 0x200C || cp == 0x200D) {
        return "a joiner";
    }
    return nullptr;
}

}  // namespace

std::optional<problem> check_text(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        char32_t cp = 0;
        const std::size_t n = decode(s, i, cp);
        if (n == 0) {
            return problem{i, "invalid UTF-8 (byte " + hex_byte(static_cast<unsigned char>(s[i])) + ")"};
        }
        if (cp == 0) {
            return problem{i, "a NUL byte"};
        }
        i += n;
    }
    return std::nullopt;
}

text_position position_of(std::string_view text, std::size_t offset) {
    text_position at;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++at.line;
            at.column = 1;
        } else {
            ++at.column;
        }
    }
    return at;
}

std::string at_byte(const problem& p) { return p.what + " at byte " + std::to_string(p.offset + 1); }

std::optional<problem> check_name(std::string_view s) {
    if (auto p = check_text(s)) {
        return p;
    }
    for (std::size_t i = 0; i < s.size();) {
        char32_t cp = 0;
        const std::size_t n = decode(s, i, cp);
        if (is_forbidden_in_name(cp)) {
            const bool bidi = cp >= 0x2000;
            return problem{i, std::string(bidi ? "bidirectional control character " : "control character ") +
                                  code_point_name(cp)};
        }
        if (is_invisible_in_name(cp)) {
            return problem{i, "invisible character " + code_point_name(cp)};
        }
        if (const char* kind = edge_kind(cp); kind != nullptr && (i == 0 || i + n == s.size())) {
            return problem{i, std::string(kind) + (i == 0 ? " at its start (" : " at its end (") +
                                  code_point_name(cp) + ")"};
        }
        i += n;
    }
    return std::nullopt;
}

std::optional<problem> find_space(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        char32_t cp = 0;
        const std::size_t n = decode(s, i, cp);
        if (n == 0) {
            ++i;  // not text; check_text reports it
            continue;
        }
        if (cp == ' ') {
            return problem{i, "a space"};
        }
        const char* kind = nullptr;
        if (cp == 0x00A0 || cp == 0x202F) {
            kind = "a no-break space";
        } else if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x205F || cp == 0x3000) {
            kind = "a space";
        } else if (cp == 0x2028 || cp == 0x2029) {
            kind = "a line or paragraph separator";
        } else if (cp == 0x200B) {
            kind = "a zero-width space";
        } else if (cp == 0x200C || cp == 0x200D) {
            kind = "a zero-width joiner or non-joiner";
        } else if (cp == 0x2060) {
            kind = "a word joiner";
        } else if (cp == 0xFEFF) {
            kind = "a byte order mark";
        }
        if (kind != nullptr) {
            return problem{i, std::string(kind) + " (" + code_point_name(cp) + ")"};
        }
        i += n;
    }
    return std::nullopt;
}

std::string counted(std::int64_t n, std::string_view one, std::string_view many) {
    std::string out = std::to_string(n);
    out += ' ';
    out += n == 1 ? one : many;
    return out;
}

std::string csv_field(std::string_view v) {
    if (v.find_first_of(",\"\n\r") == std::string_view::npos) {
        return std::string(v);
    }
    std::string out = "\"";
    for (char c : v) {
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    }
    return out + "\"";
}

namespace {

// A character spelled \u{…}: a control beyond C0 or a bidirectional one, a format-changing one,
// and in a name what shows as nothing or as a plain space.
bool spelled_as_code_point(char32_t cp, bool name) {
    return is_forbidden_in_name(cp) || is_format_changing(cp) || (name && (is_invisible_in_name(cp) || is_odd_space(cp)));
}

// `s` with every control, invalid, bidirectional or format-changing character spelled out
// (\n, \x1b, \u{202e}) and a backslash doubled; with `keep_lines`, line breaks, tabs and
// backslashes stay as they are.
std::string spelled(std::string_view s, bool keep_lines, bool name = false) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        char32_t cp = 0;
        const std::size_t n = decode(s, i, cp);
        if (n == 0) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(s[i]));
            out += buf;
            ++i;
            continue;
        }
        if (keep_lines && (cp == '\n' || cp == '\t' || cp == '\\')) {
            out.append(s.substr(i, n));
        } else if (cp == '\\') {
            out += "\\\\";
        } else if (cp == '\n') {
            out += "\\n";
        } else if (cp == '\r') {
            out += "\\r";
        } else if (cp == '\t') {
            out += "\\t";
        } else if (cp < 0x20 || cp == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
            out += buf;
        } else if (spelled_as_code_point(cp, name)) {
            char buf[16];
            std::snprintf(buf, sizeof buf, "\\u{%04x}", static_cast<unsigned>(cp));
            out += buf;
        } else {
            out.append(s.substr(i, n));
        }
        i += n;
    }
    return out;
}

}  // namespace

std::string escaped(std::string_view s) { return spelled(s, false); }

std::string escaped_name(std::string_view s) { return spelled(s, false, true); }

std::string escaped_clipped(std::string_view s, std::size_t max) {
    if (s.size() <= max) {
        return escaped_name(s);
    }
    std::size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) {
        --cut;  // not inside a UTF-8 sequence
    }
    // What the cut hides that the name would have spelled is said, so that a long name differing
    // from another only past the cut by an invisible character does not read as the other.
    std::string hidden;
    for (std::size_t i = cut; i < s.size();) {
        char32_t cp = 0;
        const std::size_t n = decode(s, i, cp);
        if (n == 0 || cp < 0x20 || cp == 0x7F || spelled_as_code_point(cp, true)) {
            hidden = ", " + spelled(s.substr(i, std::max<std::size_t>(n, 1)), false, true) + " at byte " +
                     std::to_string(i + 1);
            break;
        }
        i += n;
    }
    return escaped_name(s.substr(0, cut)) + "... (" + std::to_string(s.size()) + " bytes" + hidden + ")";
}

std::string terminal_lines(std::string_view s) { return spelled(s, true); }

std::string terminal_error(std::string_view s) { return spelled(s, true, true); }

std::string ascii_lower(std::string s) {
    for (auto& ch : s) {
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    return s;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
    // Levenshtein distance, two rows; candidate lists are short (keys, kinds, step ids, zones).
    auto distance = [](const std::string& a, const std::string& b) {
        std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
        for (std::size_t j = 0; j <= b.size(); ++j) {
            prev[j] = j;
        }
        for (std::size_t i = 1; i <= a.size(); ++i) {
            cur[0] = i;
            for (std::size_t j = 1; j <= b.size(); ++j) {
                std::size_t substitute = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
                cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
            }
            std::swap(prev, cur);
        }
        return prev[b.size()];
    };
    std::size_t best = 3;  // farther than 2 edits is no suggestion
    std::string suggestion;
    for (const std::string& c : candidates) {
        std::size_t d = distance(word, c);
        if (d < best && d < word.size() && c != word) {
            best = d;
            suggestion = c;
        }
    }
    return suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)";
}

}  // namespace orch::text
