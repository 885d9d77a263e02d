#include "api/log_format.hpp"

#include "api/text.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

namespace orch::api {

namespace {

class escaped_payload final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        const std::string text = orch::text::escaped(std::string_view(msg.payload.data(), msg.payload.size()));
        dest.append(text.data(), text.data() + text.size());
    }
    std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<escaped_payload>(); }
};

}  // namespace

void escape_log_messages() {
    auto f = std::make_unique<spdlog::pattern_formatter>();
    f->add_flag<escaped_payload>('*').set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%n] [%^%l%$] %*");
    spdlog::set_formatter(std::move(f));
}

}  // namespace orch::api
