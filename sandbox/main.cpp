// outreach-sandbox: the Outreach API over a simulated, seeded world, on loopback.
#include "api/http_server.hpp"
#include "sandbox/service.hpp"
#include "sandbox/settings.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace {

bool write_ready_file(const std::string& path, unsigned short port, int control_port) {
    std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp);
        if (!out) {
            return false;
        }
        out << "{\"port\":" << port << ",\"control_port\":" << control_port << "}\n";
        if (!out) {
            return false;
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    return !ec;
}

} // namespace

int main(int argc, char** argv) {
    using namespace orch;
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
    sandbox::settings cfg;
    std::vector<std::string> errors;
    bool exit_now = false;
    std::string help;
    if (!sandbox::load_settings(argc, argv, cfg, errors, exit_now, help)) {
        std::cerr << "outreach-sandbox: cannot start:\n";
        for (const auto& e : errors) {
            std::cerr << "  - " << e << "\n";
        }
        return 2;
    }
    if (exit_now) {
        std::cout << help << "\n";
        return 0;
    }
    api::server_settings api_cfg;
    std::string error;
    std::vector<std::string> listen_errors;
    if (!api::parse_host_port(cfg.listen, api_cfg.listen_host, api_cfg.listen_port, error)) {
        listen_errors.push_back("listen: " + error);
    }
    api::server_settings control_cfg;
    if (!cfg.control_listen.empty() &&
        !api::parse_host_port(cfg.control_listen, control_cfg.listen_host, control_cfg.listen_port, error)) {
        listen_errors.push_back("control_listen: " + error);
    }
    if (!listen_errors.empty()) {
        std::cerr << "outreach-sandbox: cannot start:\n";
        for (const auto& e : listen_errors) {
            std::cerr << "  - " << e << "\n";
        }
        return 2;
    }
    api_cfg.body_limit_bytes = cfg.body_limit_bytes;
    api_cfg.idle_timeout_ms = std::chrono::milliseconds(cfg.idle_timeout_ms);
    api_cfg.server_name = "outreach-sandbox";
    control_cfg.idle_timeout_ms = api_cfg.idle_timeout_ms;
    control_cfg.server_name = "outreach-sandbox-control";

    boost::asio::io_context io{1};
    try {
        sandbox::service svc(io.get_executor(), cfg);
        api::http_server server(io.get_executor(), api_cfg,
                                [&svc](api::request& req, boost::beast::tcp_stream& s) { return svc.handle_api(req, s); });
        std::unique_ptr<api::http_server> control;
        if (!cfg.control_listen.empty()) {
            control = std::make_unique<api::http_server>(
                io.get_executor(), control_cfg,
                [&svc](api::request& req, boost::beast::tcp_stream& s) { return svc.handle_control(req, s); });
        }
        server.start();
        if (control) {
            control->start();
        }
        svc.start();
        spdlog::info("outreach-sandbox: API on {}:{}{}; world of {} people, {} companies (seed {})",
                     api_cfg.listen_host, server.port(),
                     control ? fmt::format(", control on {}:{}", control_cfg.listen_host, control->port()) : "",
                     svc.world().people().size(), svc.world().companies().size(), cfg.seed);
        spdlog::info("outreach-sandbox: dialect: {}", sandbox::describe_dialect(cfg));
        if (!cfg.ready_file.empty() &&
            !write_ready_file(cfg.ready_file, server.port(), control ? control->port() : 0)) {
            spdlog::error("outreach-sandbox: cannot write ready file {}", cfg.ready_file);
            return 1;
        }
        boost::asio::signal_set signals(io, SIGINT, SIGTERM);
        signals.async_wait([&](const boost::system::error_code&, int sig) {
            spdlog::info("outreach-sandbox: signal {}, stopping", sig);
            server.stop();
            if (control) {
                control->stop();
            }
            io.stop();
        });
        io.run();
    } catch (const std::exception& e) {
        std::cerr << "outreach-sandbox: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
