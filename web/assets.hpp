// orch::web: the dashboard's files (web/src and the pinned npm packages), embedded at build time
// by web/embed.cmake and served under /ui/ by engine/admin_ui.cpp.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace orch::web {

struct asset {
    std::string_view path;          // under /ui/, e.g. "assets/app.js"
    std::string_view content_type;  // e.g. "text/javascript; charset=utf-8"
    const unsigned char* data;
    std::size_t size;

    std::string_view bytes() const { return {reinterpret_cast<const char*>(data), size}; }
};

// The file at `path` (relative to /ui/, e.g. "assets/app.js"), if embedded.
std::optional<asset> find(std::string_view path);

namespace detail {
extern const asset asset_table[];
extern const std::size_t asset_count;
}  // namespace detail

}  // namespace orch::web
