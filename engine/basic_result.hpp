// orch::basic_result<T, E>: a value or an error of type E. The API client's outreach::result<T>
// (E = outreach::error) and the engine's engine::result<T> (E = engine::error, engine/result.hpp)
// are this one template. Reading the value of a failed result, or the error of a value, is a bug
// in the caller and aborts (STYLE C1).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <variant>

namespace orch {

namespace detail {
[[noreturn]] inline void result_misuse(const char* what) {
    std::fprintf(stderr, "orch::basic_result misuse: %s\n", what);
    std::abort();
}
}  // namespace detail

template <typename T, typename E>
class [[nodiscard]] basic_result {
public:
    // Default-constructed results (asio needs them for co_spawn completions) hold an error.
    basic_result() : v_(std::in_place_index<1>, E{}) {}
    basic_result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    basic_result(E e) : v_(std::in_place_index<1>, std::move(e)) {}

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

    const E& error() const& {
        if (!has_error()) {
            detail::result_misuse("error() of a value");
        }
        return std::get<1>(v_);
    }
    E&& error() && {
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
    std::variant<T, E> v_;
};

// Success or an error.
template <typename E>
class [[nodiscard]] basic_result<void, E> {
public:
    basic_result() = default;
    basic_result(E e) : e_(std::move(e)), failed_(true) {}
    bool has_value() const { return !failed_; }
    bool has_error() const { return failed_; }
    explicit operator bool() const { return !failed_; }
    const E& error() const {
        if (!failed_) {
            detail::result_misuse("error() of a value");
        }
        return e_;
    }

private:
    E e_;
    bool failed_ = false;
};

}  // namespace orch
