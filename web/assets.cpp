#include "web/assets.hpp"

namespace orch::web {

std::optional<asset> find(std::string_view path) {
    for (std::size_t i = 0; i < detail::asset_count; ++i) {
        if (detail::asset_table[i].path == path) {
            return detail::asset_table[i];
        }
    }
    return std::nullopt;
}

}  // namespace orch::web
