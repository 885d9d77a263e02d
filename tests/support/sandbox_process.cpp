#include "tests/support/sandbox_process.hpp"

#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace orch::test {

std::string sandbox_binary() {
    if (const char* env = std::getenv("ORCH_SANDBOX_BIN")) {
        return env;
    }
    return ORCH_SANDBOX_BIN;
}

sandbox_process::sandbox_process(std::vector<std::string> args) {
    char tmpl[] = "/tmp/orch-sandbox-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
        throw std::runtime_error("mkdtemp failed");
    }
    dir_ = tmpl;
    std::string ready = dir_ + "/ready.json";
    std::string log_path = dir_ + "/sandbox.log";
    std::vector<std::string> argv_s = {sandbox_binary(), "--listen", "127.0.0.1:0", "--control-listen", "127.0.0.1:0",
                                       "--ready-file", ready};
    bool has_key = false;
    for (const auto& a : args) {
        has_key = has_key || a == "--api-key";
    }
    if (!has_key) {
        argv_s.push_back("--api-key");
        argv_s.push_back("test-key:1000000");
    }
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    pid_ = fork();
    if (pid_ < 0) {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
        throw std::runtime_error("fork failed");
    }
    if (pid_ == 0) {
        FILE* out = std::freopen(log_path.c_str(), "w", stdout);
        (void)out;
        dup2(fileno(stdout), STDERR_FILENO);
        std::vector<char*> argv;
        for (auto& s : argv_s) {
            argv.push_back(s.data());
        }
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        std::_Exit(127);
    }
    for (int i = 0; i < 1000; ++i) {
        if (std::filesystem::exists(ready)) {
            std::ifstream in(ready);
            auto j = nlohmann::json::parse(in, nullptr, false);
            if (!j.is_discarded()) {
                port_ = j.value("port", 0);
                control_port_ = j.value("control_port", 0);
                return;
            }
        }
        if (!alive()) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::string l = log();
    stop();
    // A constructor that throws runs no destructor: the directory goes here (tests that expect a
    // refused start left one behind per refusal).
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw std::runtime_error("outreach-sandbox did not start: " + l);
}

sandbox_process::~sandbox_process() {
    stop();
    std::error_code ec;
    if (!dir_.empty()) {
        std::filesystem::remove_all(dir_, ec);
    }
}

bool sandbox_process::alive() {
    if (pid_ <= 0) {
        return false;
    }
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
        pid_ = -1;
        return false;
    }
    return true;
}

int sandbox_process::stop() {
    if (pid_ <= 0) {
        return 0;
    }
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 500; ++i) {
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return status;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
}

std::string sandbox_process::log() const {
    std::ifstream in(dir_ + "/sandbox.log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace orch::test
