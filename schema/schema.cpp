#include "schema/schema.hpp"

#include <cstdio>
#include <cstdlib>

namespace orch::schema {

namespace {
[[noreturn]] void die(const char* what, std::string_view detail) {
    std::fprintf(stderr, "orch::schema: %s: %.*s\n", what, static_cast<int>(detail.size()), detail.data());
    std::abort();
}

bool check_order() {
    for (std::size_t i = 1; i < detail::migration_count; ++i) {
        if (detail::migration_table[i].version <= detail::migration_table[i - 1].version) {
            die("migrations out of order or duplicated at", detail::migration_table[i].name);
        }
    }
    return true;
}
}  // namespace

std::span<const migration> migrations() {
    static const bool ordered = check_order();
    (void)ordered;
    return {detail::migration_table, detail::migration_count};
}

int latest_version() {
    auto all = migrations();
    return all.empty() ? 0 : all.back().version;
}

std::span<const named_query> queries() { return {detail::query_table, detail::query_count}; }

std::string_view query(std::string_view name) {
    for (const auto& q : queries()) {
        if (q.name == name) {
            return q.sql;
        }
    }
    die("no such query", name);
}

std::span<const named_query> redis_scripts() { return {detail::redis_script_table, detail::redis_script_count}; }

std::string_view redis_script(std::string_view name) {
    for (const auto& s : redis_scripts()) {
        if (s.name == name) {
            return s.sql;
        }
    }
    die("no such redis script", name);
}

}  // namespace orch::schema
