// orch::text: checks and escapes for text that comes from users (request paths, query values,
// bodies, campaign and account names), shared by the admin endpoint, the campaign loader, the CLI
// and the logs. Pure code, no dependencies.
//
//   check_text   the text is valid UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
//                past U+10FFFF) and has no NUL byte, which Postgres refuses and C strings cut at
//   check_name   check_text, and no control character (C0, DEL, C1) nor bidirectional
//                override/isolate (U+202A-U+202E, U+2066-U+2069), which would forge log lines or
//                reorder what a terminal shows, nor a character that shows as nothing (U+200B,
//                U+2060-U+2064, U+FEFF, U+00AD, the direction marks, fillers, tags...), nor a space
//                or joiner at either end, which would make one name look like another
//   find_space   the first space of any kind in text check_text accepts: an ASCII space, a
//                Unicode space separator (U+00A0, U+2000-U+200A, U+3000, ...), a line or
//                paragraph separator, or a zero-width character (U+200B-U+200D, U+2060, U+FEFF);
//                for values such as URLs, where a space that looks like none would pass an
//                ASCII check
//   escaped      the text with every control, format-changing or invalid byte spelled out
//                (\n, \t, \x1b, \u{202e}; a backslash as \\), safe to put on one log line or a
//                terminal
//   counted      "1 live lead", "3 live leads": a count and its noun, singular or plural
//   terminal_lines  a message for a terminal that may hold values from users: its line breaks
//                and tabs kept, backslashes as they are (text escaped before stays readable), and
//                every other control, invalid or bidirectional character spelled out as escaped
//                spells it, and format-changing characters too
//   terminal_error  terminal_lines, and the characters a name could hide spelled as escaped_name
//                spells them (an invisible one, a space other than U+0020): for where the CLI
//                prints a command's errors and a file's diagnostics, whose quoted values must not
//                read as others ("no step 'hello '" for 'hello<U+00A0>')
//   csv_field    a field of RFC 4180: quoted, quotes doubled, when it holds a comma, a quote or a
//                line break
//   did_you_mean the nearest of a short list of names to a mistyped one, as a message's suffix
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orch::text {

struct problem {
    std::size_t offset = 0;  // byte offset of the first offending byte
    std::string what;        // e.g. "invalid UTF-8 (byte 0xff)", "a NUL byte", "control character U+000A"
};

std::optional<problem> check_text(std::string_view s);
std::optional<problem> check_name(std::string_view s);

// The line and column (both from 1) of a byte offset in `text`; a column counts bytes.
struct text_position {
    std::size_t line = 1;
    std::size_t column = 1;
};
text_position position_of(std::string_view text, std::size_t offset);

// "<what> at byte <n>", n counted from 1 (as lines and columns are), the form every message
// that quotes a problem uses.
std::string at_byte(const problem& p);

// `what` is "a space" or "a no-break space (U+00A0)" style; call after check_text succeeded.
std::optional<problem> find_space(std::string_view s);

// True for the code points check_name refuses (controls and bidirectional overrides/isolates).
bool is_forbidden_in_name(char32_t cp);

std::string escaped(std::string_view s);
// escaped(s), and the characters that show as nothing spelled out too (a zero-width space, a word
// joiner, a byte order mark: not the joiners scripts and emoji need) and the spaces other than
// U+0020: for a name quoted in a message, where 'sender-1' and 'sender-1<U+200B>', or 'a b' and
// 'a<U+00A0>b', must not look alike.
std::string escaped_name(std::string_view s);
// escaped_name(s), cut to its first `max` bytes (at a character's start) with "... (N bytes)" when
// longer, naming the first character past the cut that escaped_name would spell ("... (N bytes,
// \u{200b} at byte K)"): for a client's value echoed in a message, which it could make megabytes
// long.
std::string escaped_clipped(std::string_view s, std::size_t max);

// "<n> <one>" when n is 1, else "<n> <many>".
std::string counted(std::int64_t n, std::string_view one, std::string_view many);

std::string csv_field(std::string_view v);

std::string terminal_lines(std::string_view s);
std::string terminal_error(std::string_view s);

// "U+000A" for a code point.
std::string code_point_name(char32_t cp);

// " (did you mean 'x'?)" (with a leading space) for the candidate nearest `word` within two edits,
// or "" when nothing is close enough.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

// `s` with its ASCII letters lower-cased (other bytes as they are): names compared ignoring case.
std::string ascii_lower(std::string s);

}  // namespace orch::text
