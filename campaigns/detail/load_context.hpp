// The loader's working state: the parsed document with node positions, the options, and the
// diagnostics found so far. Each check phase (schema_check.cpp, settings_build.cpp, audience.cpp,
// graph.cpp) reports into it; load_campaign (loader.cpp) runs the phases in order.
#pragma once

#include "api/text.hpp"
#include "campaigns/loader.hpp"
#include "campaigns/detail/yaml_json.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace orch::campaigns::detail {

enum class at { value, key };

struct load_context {
    const load_options& options;
    std::string_view text;  // the definition text (placeholders are located in it)
    const parsed_document& doc;
    std::vector<diagnostic> errors;
    std::vector<diagnostic> warnings;

    // Position of the node at `pointer` (its key or its value); a pointer without a recorded
    // position falls back to its nearest recorded parent.
    source_pos position(const std::string& pointer, at where = at::value) const;

    void error(const std::string& pointer, std::string message, at where = at::value);
    void warning(const std::string& pointer, std::string message, at where = at::value);
    // A problem at a byte offset of the definition text (e.g. inside a template).
    void error_at_offset(std::size_t offset, std::string message);
    // A problem inside another file (the audience file): its own name, line and column.
    void error_in_file(const std::string& file, int line, int column, std::string message);
    void warning_in_file(const std::string& file, int line, int column, std::string message);
};

// Phase 2: the JSON Schema (campaigns/schema.json) through valijson.
void check_schema(load_context& ctx);

// Phase 3: build the campaign from the schema-valid document and run the semantic checks.
campaign build_campaign(load_context& ctx);

// Parts of phase 3.
void load_audience_file(load_context& ctx, audience& who, const std::string& file_pointer);
void check_template(load_context& ctx, const text_template& t, const std::string& pointer,
                    const audience& who);
// Targets, duplicate ids, reachability, cycles, waits without an invitation. Step i of `c` is
// the node "/steps/i" of the document; its defaults (next = the step below) are resolved.
void check_step_graph(load_context& ctx, const campaign& c);

// "did you mean 'x'?" suffix (with a leading space), or "" when nothing is close enough.
using orch::text::did_you_mean;

}  // namespace orch::campaigns::detail
