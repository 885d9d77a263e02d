// result<T>: a value or an outreach::error, the return type of every call of the client.
// No exception crosses the public API of the client; reading the value of a failed result is
// a bug in the caller and aborts (STYLE C1).
#pragma once

#include "engine/outreach/errors.hpp"

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <variant>

namespace orch::outreach {

namespace detail {
[[noreturn]] inline void result_misuse(const char* what) {
    std::fprintf(stderr, "orch::outreach::result misuse: %s\n", what);
    std::abort();
}
} // namespace detail

template <typename T>
class [[nodiscard]] result {
public:
    // Default-constructed results (asio needs them for co_spawn completions) hold an error.
    result() : v_(std::in_place_index<1>, outreach::error{}) {}
    result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    result(outreach::error e) : v_(std::in_place_index<1>, std::move(e)) {}

    bool has_value() const { return v_.index() == 0; }
    bool has_error() const { return v_.index() == 1; }
    explicit operator bool() const { return has_value(); }

    T& value() & {
        check_value();
        return std::get<0>(v_);
    }
    const T& value() const& {
        check_value();
        return std::get<0>(v_);
    }
    T&& value() && {
        check_value();
        return std::move(std::get<0>(v_));
    }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const outreach::error& error() const& {
        if (!has_error()) {
            detail::result_misuse("error() of a value");
        }
        return std::get<1>(v_);
    }
    outreach::error&& error() && {
        if (!has_error()) {
            detail::result_misuse("error() of a value");
        }
        return std::move(std::get<1>(v_));
    }

private:
    void check_value() const {
        if (!has_value()) {
            detail::result_misuse("value() of an error");
        }
    }
    std::variant<T, outreach::error> v_;
};

// result<void>: success or an error.
template <>
class [[nodiscard]] result<void> {
public:
    result() = default;
    result(outreach::error e) : e_(std::move(e)), failed_(true) {}
    bool has_value() const { return !failed_; }
    bool has_error() const { return failed_; }
    explicit operator bool() const { return !failed_; }
    const outreach::error& error() const {
        if (!failed_) {
            detail::result_misuse("error() of a value");
        }
        return e_;
    }

private:
    outreach::error e_;
    bool failed_ = false;
};

} // namespace orch::outreach
