// orch::schema: the SQL the orchestrator runs, embedded at build time from schema/ (STYLE E1):
// numbered migrations, named queries and Redis Lua scripts. No SQL string literal lives in a
// .cpp file.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace orch::schema {

struct migration {
    int version;             // NNNN of migrations/NNNN_name.up.sql
    std::string_view name;
    std::string_view sql;
};

struct named_query {
    std::string_view name;   // path under queries/ without .sql, e.g. "engine/claim_due"
    std::string_view sql;
};

// In version order; versions are unique and increasing (checked at first use).
std::span<const migration> migrations();
// The newest migration's version (the version a database must be at to run).
int latest_version();
// The query of that name; aborts with a message if it does not exist (a bug, not an input).
std::string_view query(std::string_view name);
std::span<const named_query> queries();
// The Redis Lua script redis/<name>.lua; aborts with a message if it does not exist (a bug).
std::string_view redis_script(std::string_view name);
std::span<const named_query> redis_scripts();

namespace detail {
extern const migration migration_table[];
extern const std::size_t migration_count;
extern const named_query query_table[];
extern const std::size_t query_count;
extern const named_query redis_script_table[];
extern const std::size_t redis_script_count;
}  // namespace detail

}  // namespace orch::schema
