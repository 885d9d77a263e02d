// load_campaign: the three phases (syntax, schema, semantics) and the diagnostics they share.
#include "campaigns/detail/load_context.hpp"
#include "campaigns/detail/yaml_json.hpp"

#include "api/text.hpp"

#include <algorithm>
#include <tuple>

namespace orch::campaigns {

namespace {

// A campaign definition is a page or two; a megabyte is a mistake (the leads of a big audience
// live in the audience file, which has its own bound).
// A campaign has a few hundred values; 100,000 leaves room and stops alias bombs early.
constexpr std::size_t definition_nodes_max = 100000;

void sort_by_position(std::vector<diagnostic>& list, const std::string& definition) {
    std::stable_sort(list.begin(), list.end(), [&](const diagnostic& a, const diagnostic& b) {
        auto key = [&](const diagnostic& d) {
            return std::tuple(d.file != definition, d.file, d.line, d.column);
        };
        return key(a) < key(b);
    });
}

// Every string and key of the document without a NUL character (a YAML "\0" or a JSON "\u0000"
// escape): Postgres refuses them and C strings cut at them, silently shortening the text.
void refuse_nul(detail::load_context& ctx, const nlohmann::json& j, const std::string& pointer) {
    if (j.is_string()) {
        if (j.get_ref<const std::string&>().find('\0') != std::string::npos) {
            ctx.error(pointer, "the value contains a NUL character");
        }
    } else if (j.is_object()) {
        for (const auto& [k, v] : j.items()) {
            if (k.find('\0') != std::string::npos) {
                ctx.error(pointer, "a key contains a NUL character");
                continue;
            }
            refuse_nul(ctx, v, detail::pointer_append(pointer, k));
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i) {
            refuse_nul(ctx, j[i], detail::pointer_append(pointer, i));
        }
    }
}

// The campaign's name and its account ids or labels are names: no control characters and no
// bidirectional overrides or isolates (they would forge log lines and reorder what a terminal
// shows).
void check_names(detail::load_context& ctx, const nlohmann::json& doc) {
    auto check = [&ctx](const nlohmann::json& v, const std::string& pointer, const std::string& what) {
        if (!v.is_string()) {
            return;
        }
        if (auto p = orch::text::check_name(v.get_ref<const std::string&>())) {
            ctx.error(pointer, what + " is not a valid name: " + orch::text::at_byte(*p) +
                                   " (names may not hold control, bidirectional-override or invisible characters)");
        }
    };
    if (doc.is_object() && doc.contains("name")) {
        check(doc["name"], "/name", "name");
    }
    if (doc.is_object() && doc.contains("accounts")) {
        const auto& a = doc["accounts"];
        if (a.is_string()) {
            check(a, "/accounts", "accounts");
        } else if (a.is_array()) {
            for (std::size_t i = 0; i < a.size(); ++i) {
                check(a[i], detail::pointer_append("/accounts", i), "accounts[" + std::to_string(i) + "]");
            }
        }
    }
}

}  // namespace

std::string diagnostic::to_string() const {
    std::string out = file;
    if (line > 0) {
        out += ":" + std::to_string(line);
        if (column > 0) {
            out += ":" + std::to_string(column);
        }
    }
    return out + ": " + message;
}

load_result load_campaign(std::string_view text, const load_options& options) {
    load_result result;
    if (text.size() > definition_bytes_max) {
        result.errors.push_back({options.file_name, 1, 1, "the campaign file is larger than 1 MiB"});
        return result;
    }
    if (auto p = orch::text::check_text(text)) {
        auto at = detail::position_of(text, p->offset);
        result.errors.push_back({options.file_name, at.line, at.column, "the definition is not valid text: " + p->what});
        return result;
    }
    detail::parsed_document doc = detail::parse_yaml(text, definition_nodes_max);
    detail::load_context ctx{options, text, doc, {}, {}};
    for (const detail::syntax_error& e : doc.errors) {
        ctx.errors.push_back({options.file_name, e.at.line, e.at.column, e.message});
    }
    // Values that could not be read (each now null) leave the document's shape to check: its
    // other problems are said in the same round (a trial fixed a too-large budget only to meet
    // four more). What the schema says of those nulls themselves is the same mistake again.
    const bool shape_stands = std::all_of(doc.errors.begin(), doc.errors.end(),
                                          [](const detail::syntax_error& e) { return e.value_only; });
    const std::size_t read_errors = ctx.errors.size();
    if (shape_stands) {
        refuse_nul(ctx, doc.value, "");
    }
    if (shape_stands && ctx.errors.size() == read_errors) {
        detail::check_schema(ctx);
        const auto unread = [&doc](const auto& e) {
            return std::any_of(doc.errors.begin(), doc.errors.end(), [&e](const detail::syntax_error& v) {
                return v.at.line == e.line && v.at.column == e.column;
            });
        };
        ctx.errors.erase(std::remove_if(ctx.errors.begin() + static_cast<std::ptrdiff_t>(read_errors),
                                        ctx.errors.end(), unread),
                         ctx.errors.end());
    }
    // With the shape right, the names' problems and the meaning's are said together (a name with
    // a blank at its start hid five problems of the file's meaning until it was mended).
    // What the meaning's round says of a bad name itself (an unknown account, showing the
    // characters the name check refused) is left out: the name's problem is said.
    const bool shape_right = ctx.errors.empty();
    if (shape_right) {
        check_names(ctx, doc.value);
    }
    std::optional<campaign> built;
    if (shape_right) {
        const std::vector<diagnostic> name_errors = ctx.errors;
        built = detail::build_campaign(ctx);
        ctx.errors.erase(std::remove_if(ctx.errors.begin() + static_cast<std::ptrdiff_t>(name_errors.size()),
                                        ctx.errors.end(),
                                        [&name_errors](const diagnostic& e) {
                                            return std::any_of(name_errors.begin(), name_errors.end(),
                                                               [&e](const diagnostic& n) {
                                                                   return n.line == e.line && n.column == e.column;
                                                               });
                                        }),
                         ctx.errors.end());
    }
    sort_by_position(ctx.errors, options.file_name);
    sort_by_position(ctx.warnings, options.file_name);
    if (ctx.errors.empty()) {
        result.value = std::move(built);
    }
    result.errors = std::move(ctx.errors);
    result.warnings = std::move(ctx.warnings);
    return result;
}

namespace detail {

source_pos load_context::position(const std::string& pointer, at where) const {
    std::string p = pointer;
    while (true) {
        auto it = doc.positions.find(p);
        if (it != doc.positions.end()) {
            return where == at::key ? it->second.key : it->second.value;
        }
        if (p.empty()) {
            return {};
        }
        p = p.substr(0, p.rfind('/'));
        where = at::value;  // the parent's own position, not its key
    }
}

void load_context::error(const std::string& pointer, std::string message, at where) {
    source_pos p = position(pointer, where);
    errors.push_back({options.file_name, p.line, p.column, std::move(message)});
}

void load_context::warning(const std::string& pointer, std::string message, at where) {
    source_pos p = position(pointer, where);
    warnings.push_back({options.file_name, p.line, p.column, std::move(message)});
}

void load_context::error_at_offset(std::size_t offset, std::string message) {
    source_pos p = position_of(text, offset);
    errors.push_back({options.file_name, p.line, p.column, std::move(message)});
}

void load_context::error_in_file(const std::string& file, int line, int column, std::string message) {
    errors.push_back({file, line, column, std::move(message)});
}

void load_context::warning_in_file(const std::string& file, int line, int column, std::string message) {
    warnings.push_back({file, line, column, std::move(message)});
}

}  // namespace detail

}  // namespace orch::campaigns
