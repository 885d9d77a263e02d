// The audience file of a campaign: a CSV file with a header row or a JSON array of objects, each
// row one lead with a profile_url and extra fields. Problems are reported with the file's own
// name, line and column.
#include "api/text.hpp"
#include "campaigns/detail/csv.hpp"
#include "campaigns/detail/load_context.hpp"
#include "campaigns/detail/template.hpp"
#include "campaigns/detail/yaml_json.hpp"
#include "campaigns/model.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace orch::campaigns::detail {

namespace {

using json = nlohmann::json;

// Bounds: as many leads as one search may return, and a file size that such a list never needs.
constexpr std::size_t leads_max = 50000;
// Values of a JSON audience file: the array, and per lead its object and a few dozen fields.
constexpr std::size_t json_nodes_max = leads_max * 40;

struct lead_row {
    int line = 0;
    int column = 0;
    std::map<std::string, std::string> fields;  // non-empty values only
};

// The rows of a file, whatever its format, before the checks common to both formats.
struct table {
    std::vector<std::string> columns;  // in order of first appearance
    std::vector<lead_row> rows;
    bool ok = true;
};

std::string trim(const std::string& s) {
    std::size_t begin = s.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos) {
        return "";
    }
    return s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1);
}

std::string lower_extension(const std::string& path) {
    std::size_t dot = path.rfind('.');
    std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext;
}

struct file_reporter {
    load_context& ctx;
    const std::string& file;
    bool failed = false;

    void error(int line, int column, std::string message) {
        ctx.error_in_file(file, line, column, std::move(message));
        failed = true;
    }
};

bool check_column_name(file_reporter& out, const std::string& name, int line, int column,
                       std::set<std::string>& seen) {
    if (!is_field_name(name)) {
        out.error(line, column,
                  "column '" + name +
                      "' is not a field name (letters, digits and _, not starting "
                      "with a digit), so templates could not use it");
        return false;
    }
    if (!seen.insert(name).second) {
        out.error(line, column, "column '" + name + "' appears twice");
        return false;
    }
    return true;
}

table read_csv_table(file_reporter& out, std::string_view text) {
    table t;
    csv_document doc = parse_csv(text);
    for (const csv_error& e : doc.errors) {
        out.error(e.line, e.column, e.message);
    }
    if (doc.records.empty()) {
        return t;
    }
    std::set<std::string> seen;
    for (const csv_field& f : doc.records.front().fields) {
        std::string name = trim(f.value);
        check_column_name(out, name, f.line, f.column, seen);
        t.columns.push_back(name);
    }
    for (std::size_t r = 1; r < doc.records.size() && !out.failed; ++r) {
        const csv_record& rec = doc.records[r];
        if (rec.fields.size() != t.columns.size()) {
            out.error(rec.line, 1,
                      "this row has " + orch::text::counted(static_cast<std::int64_t>(rec.fields.size()), "field", "fields") +
                          ", the header has " + std::to_string(t.columns.size()));
            continue;
        }
        lead_row row{rec.line, 1, {}};
        for (std::size_t c = 0; c < rec.fields.size(); ++c) {
            std::string value = trim(rec.fields[c].value);
            if (!value.empty()) {
                row.fields[t.columns[c]] = std::move(value);
            }
        }
        t.rows.push_back(std::move(row));
    }
    return t;
}

// One JSON object -> a row; `pointer` is its JSON pointer in the parsed file.
void read_json_row(file_reporter& out, const parsed_document& doc, const json& item,
                   const std::string& pointer, table& t, std::set<std::string>& seen) {
    source_pos at = doc.positions.count(pointer) ? doc.positions.at(pointer).value : source_pos{};
    if (!item.is_object()) {
        out.error(at.line, at.column,
                  "each item must be an object such as {\"profile_url\": \"https://...\"}");
        return;
    }
    lead_row row{at.line, at.column, {}};
    // nlohmann sorts keys; columns keep the order in which the file writes them.
    std::vector<std::pair<source_pos, std::string>> keys;
    for (const auto& [key, _] : item.items()) {
        keys.emplace_back(doc.positions.at(pointer_append(pointer, key)).key, key);
    }
    std::sort(keys.begin(), keys.end(),
              [](const auto& a, const auto& b) { return a.first.offset < b.first.offset; });
    for (const auto& [key_at, key] : keys) {
        const json& value = item[key];
        if (!seen.count(key)) {
            if (!check_column_name(out, key, key_at.line, key_at.column, seen)) {
                continue;
            }
            t.columns.push_back(key);
        }
        if (value.is_object() || value.is_array()) {
            out.error(key_at.line, key_at.column,
                      "the value of '" + key + "' must be a text, a number or true/false");
        } else if (!value.is_null()) {
            // An escape (\u0000) makes a NUL the file's text check did not see: PostgreSQL refuses it.
            if (auto p = value.is_string() ? orch::text::check_text(value.get_ref<const std::string&>())
                                           : std::optional<orch::text::problem>()) {
                const source_pos value_at = doc.positions.at(pointer_append(pointer, key)).value;
                out.error(value_at.line, value_at.column, "the value of '" + key + "' holds " + p->what);
                continue;
            }
            std::string text = trim(value.is_string() ? value.get<std::string>() : value.dump());
            if (!text.empty()) {
                row.fields[key] = std::move(text);
            }
        }
    }
    t.rows.push_back(std::move(row));
}

table read_json_table(file_reporter& out, std::string_view text) {
    table t;
    parsed_document doc = parse_yaml(text, json_nodes_max);  // JSON is YAML; this keeps line numbers
    for (const syntax_error& e : doc.errors) {
        out.error(e.at.line, e.at.column, e.message);
    }
    if (out.failed) {
        return t;
    }
    if (!doc.value.is_array()) {
        out.error(1, 1, "an audience JSON file must be an array of objects, one per lead");
        return t;
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < doc.value.size(); ++i) {
        read_json_row(out, doc, doc.value[i], pointer_append("", i), t, seen);
    }
    return t;
}

// Checks common to both formats, then the leads and the always/optional split of the fields.
void take_rows(file_reporter& out, table& t, audience& who) {
    if (t.rows.empty()) {
        out.error(1, 1, "the audience file has no leads");
        return;
    }
    if (t.rows.size() > leads_max) {
        out.error(t.rows[leads_max].line, 1, "more than " + std::to_string(leads_max) + " leads in one file");
        return;
    }
    if (std::find(t.columns.begin(), t.columns.end(), "profile_url") == t.columns.end()) {
        out.error(1, 1, "the audience file has no profile_url column");
        return;
    }
    struct first_row {
        int line = 0;
        std::string url;
    };
    std::map<std::string, first_row> first_line;  // by canonical URL
    std::set<const lead_row*> repeated;           // the rows of a person listed before
    for (const lead_row& row : t.rows) {
        auto url = row.fields.find("profile_url");
        if (url == row.fields.end()) {
            out.error(row.line, row.column, "this lead has no profile_url");
            continue;
        }
        // Any space, a no-break or zero-width one too: a URL holds none, and one that looks like
        // nothing would make two "identical" profiles two leads. (Before the name check, which
        // would name a zero-width space without saying where it likely came from.)
        if (auto space = orch::text::find_space(url->second)) {
            const bool ascii = url->second[space->offset] == ' ';
            out.error(row.line, row.column,
                      "profile_url '" + orch::text::escaped(url->second) + "' has " + space->what + " at byte " +
                          std::to_string(space->offset + 1) +
                          (ascii ? " (a URL writes it %20)" : " (invisible, likely pasted with the URL: remove it)"));
            continue;
        }
        // No control, bidirectional or invisible character either (which would reach terminals
        // and logs through every listing of the lead), percent-encoded or not.
        if (auto p = profile_url_text_problem(url->second)) {
            out.error(row.line, row.column,
                      "profile_url '" + orch::text::escaped(url->second) + "' has " + p->what + " at byte " +
                          std::to_string(p->where + 1));
            continue;
        }
        if (!after_web_scheme(url->second)) {  // the scheme in any case, as the canonical form reads it
            out.error(row.line, row.column,
                      "profile_url '" + orch::text::escaped(url->second) + "' is not a URL (https://...)");
            continue;
        }
        // One person, however the URL is spelled (case, www., a trailing slash, a query, %XX):
        // the lead is enrolled once, from its first row.
        auto [first, fresh] = first_line.emplace(canonical_profile_url(url->second), first_row{row.line, url->second});
        if (!fresh) {
            out.ctx.warning_in_file(
                out.file, row.line, row.column,
                "profile_url '" + orch::text::escaped(url->second) +
                    (first->second.url == url->second ? "' is listed again (first at line "
                                                      : "' is the same person as '" + orch::text::escaped(first->second.url) +
                                                            "' (line ") +
                    std::to_string(first->second.line) + "); the lead is enrolled once, from its first row");
            repeated.insert(&row);
        }
    }
    for (const std::string& column : t.columns) {
        bool everywhere = std::all_of(t.rows.begin(), t.rows.end(),
                                      [&](const lead_row& r) { return r.fields.count(column) > 0; });
        (everywhere ? who.fields_always : who.fields_optional).push_back(column);
    }
    for (lead_row& row : t.rows) {
        if (repeated.count(&row) > 0) {
            continue;  // a person listed before: enrolled once, from the first row
        }
        who.leads.push_back(std::move(row.fields));
    }
}

}  // namespace

void load_audience_file(load_context& ctx, audience& who, const std::string& file_pointer) {
    who.kind = audience::source::file;
    who.file = ctx.doc.value.at(json::json_pointer(file_pointer)).get<std::string>();
    file_read read;
    if (ctx.options.read_file) {
        read = ctx.options.read_file(who.file);
    }
    const std::optional<std::string>& text = read.text;
    if (!text) {
        ctx.error(file_pointer,
                  "audience.file: cannot read '" + who.file + "'" + (read.why.empty() ? "" : ": " + read.why));
        return;
    }
    if (text->size() > audience_file_bytes_max) {
        ctx.error(file_pointer, "audience.file: '" + who.file + "' is larger than " +
                                    std::to_string(audience_file_bytes_max / (1024 * 1024)) + " MiB");
        return;
    }
    file_reporter out{ctx, who.file};
    // A NUL or invalid UTF-8 in a value would pass the checks of its field and fail the apply in
    // PostgreSQL, with nothing said about where it is.
    if (auto p = orch::text::check_text(*text)) {
        const source_pos at = position_of(*text, p->offset);
        out.error(at.line, at.column, "the file is not valid text: " + p->what);
        return;
    }
    table t = lower_extension(who.file) == "json" ? read_json_table(out, *text) : read_csv_table(out, *text);
    if (!out.failed) {
        take_rows(out, t, who);
    }
}

}  // namespace orch::campaigns::detail
