// orch::schema: the SQL the orchestrator runs, embedded at build time from schema/ (STYLE E1):
// numbered migrations and named queries. No SQL string literal lives in a .cpp file.
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

namespace detail {
extern const migration migration_table[];
extern const std::size_t migration_count;
extern const named_query query_table[];
extern const std::size_t query_count;
}  // namespace detail

}  // namespace orch::schema
