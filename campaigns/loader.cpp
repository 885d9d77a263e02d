// load_campaign: the three phases (syntax, schema, semantics) and the diagnostics they share.
#include "campaigns/detail/load_context.hpp"
#include "campaigns/detail/yaml_json.hpp"

#include <algorithm>
#include <tuple>

namespace orch::campaigns {

namespace {

// A campaign definition is a page or two; a megabyte is a mistake (the leads of a big audience
// live in the audience file, which has its own bound).
constexpr std::size_t definition_bytes_max = 1024 * 1024;
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
    detail::parsed_document doc = detail::parse_yaml(text, definition_nodes_max);
    detail::load_context ctx{options, text, doc, {}, {}};
    for (const detail::syntax_error& e : doc.errors) {
        ctx.errors.push_back({options.file_name, e.at.line, e.at.column, e.message});
    }
    if (ctx.errors.empty()) {
        detail::check_schema(ctx);
    }
    std::optional<campaign> built;
    if (ctx.errors.empty()) {
        built = detail::build_campaign(ctx);
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
