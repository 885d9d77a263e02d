// orch::engine result<T> and error: the engine's one error taxonomy. Every operating error the
// engine reports has a category, whether it travels as a result<T> (the ledger's fast path, a
// worker cycle) or, from deep inside a parser or a database call, as a `failure` exception
// carrying the same error. The admin endpoint and the CLI map categories to HTTP statuses and
// exit codes in one place each. Broken invariants are not errors: they abort (ORCH_INVARIANT).
// The API client's outreach::result<T> is the same template over the API's own taxonomy.
#pragma once

#include "engine/basic_result.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

namespace orch::engine {

enum class error_category {
    invalid_input,      // the caller's input is malformed or out of range; nothing changed
    unsupported_media,  // the request body's media type is not one the endpoint reads
    unprocessable,      // well formed, refused by a rule of the domain; nothing changed
    not_found,          // what the caller named does not exist
    conflict,           // the current state does not allow it (a concurrent change, a version)
    contended,          // an optimistic path lost a race: redo it under locks, or retry
    unavailable,        // a dependency (PostgreSQL, Redis, the API) cannot be reached now
    internal,           // anything else: logged with its details, shown without them
};
std::string_view to_string(error_category c);

struct error {
    error_category category = error_category::internal;
    std::string message;
};

template <typename T>
using result = orch::basic_result<T, error>;

// The same error as an exception, for code whose callers expect one (a deep parser, a
// transaction lambda): caught and mapped like a result's error.
class failure : public std::runtime_error {
public:
    explicit failure(engine::error e) : std::runtime_error(e.message), error_(std::move(e)) {}
    failure(error_category c, const std::string& message) : failure(engine::error{c, message}) {}
    error_category category() const { return error_.category; }
    const engine::error& as_error() const { return error_; }

private:
    engine::error error_;
};

// The category of a PostgreSQL SQLSTATE: connection exceptions (08) and admin shutdown (57P01)
// unavailable, serialization failure and deadlock (40001, 40P01) contended, data exception (22)
// invalid_input, anything else internal.
error_category category_of_sqlstate(std::string_view sqlstate);

}  // namespace orch::engine
