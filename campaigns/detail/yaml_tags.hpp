// Which YAML tags a reader of this project's files takes: none ("?" plain, "!" quoted) or one of
// the YAML 1.2 core schema's. A tag of another schema (`!!python/object:os.system`, `!include`)
// names a type these readers would not build, and reading its text as plain would hide that the
// file means something else. Header-only: the settings reader (engine/config.cpp) and the
// campaign reader (yaml_json.cpp) share it without linking each other.
#pragma once

#include <string>
#include <string_view>

namespace orch::campaigns::detail {

inline constexpr std::string_view yaml_core_prefix = "tag:yaml.org,2002:";

inline bool core_schema_tag(std::string_view tag) {
    if (tag.empty() || tag == "?" || tag == "!") {
        return true;
    }
    if (!tag.starts_with(yaml_core_prefix)) {
        return false;
    }
    const std::string_view type = tag.substr(yaml_core_prefix.size());
    return type == "str" || type == "int" || type == "float" || type == "bool" || type == "null" || type == "map" ||
           type == "seq";
}

// A tag as a file writes it: yaml-cpp resolves "!!binary" to "tag:yaml.org,2002:binary", which a
// message would show as a name the file never had.
inline std::string shown_tag(std::string_view tag) {
    if (tag.starts_with(yaml_core_prefix)) {
        return "!!" + std::string(tag.substr(yaml_core_prefix.size()));
    }
    return std::string(tag);
}

}  // namespace orch::campaigns::detail
