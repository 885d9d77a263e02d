// orch::engine text_safety: user-provided text (account ids, event fields, campaign names) made
// safe for one log line: control characters (C0, DEL, C1), and the bidi overrides and isolates
// that reorder what a terminal shows, are written as escapes, so a value can neither forge a
// line nor disguise one. Invalid UTF-8 bytes are written as \xNN.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace orch::engine {

inline std::string log_text(std::string_view in) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    out.reserve(in.size());
    auto escape_byte = [&out](unsigned char c) {
        out += "\\x";
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 15]);
    };
    for (std::size_t i = 0; i < in.size();) {
        auto c = static_cast<unsigned char>(in[i]);
        if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default: escape_byte(c);
            }
            ++i;
            continue;
        }
        if (c == '\\') {
            out += "\\\\";
            ++i;
            continue;
        }
        if (c < 0x80) {
            out.push_back(static_cast<char>(c));
            ++i;
            continue;
        }
        // A UTF-8 sequence: its length from the lead byte, each continuation byte checked.
        std::size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
        bool valid = len != 0 && i + len <= in.size();
        char32_t cp = len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
        for (std::size_t k = 1; valid && k < len; ++k) {
            auto cc = static_cast<unsigned char>(in[i + k]);
            valid = (cc & 0xc0) == 0x80;
            cp = (cp << 6) | (cc & 0x3f);
        }
        if (valid && ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
                      (cp >= 0xd800 && cp <= 0xdfff))) {
            valid = false;  // overlong or surrogate
        }
        if (!valid) {
            escape_byte(c);
            ++i;
            continue;
        }
        bool hidden = (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
                      (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f || cp == 0x061c;
        if (hidden) {
            char buf[12];
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
            out += buf;
        } else {
            out.append(in.substr(i, len));
        }
        i += len;
    }
    return out;
}

}  // namespace orch::engine
