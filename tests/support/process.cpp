#include "tests/support/process.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace orch::test {

namespace {

pid_t spawn(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
            const std::string& log_path, const std::string& input_path = {}) {
    pid_t pid = fork();
    if (pid < 0) {
        throw std::runtime_error("fork failed");
    }
    if (pid == 0) {
        FILE* out = std::freopen(log_path.c_str(), "w", stdout);
        (void)out;
        if (!input_path.empty()) {
            FILE* in = std::freopen(input_path.c_str(), "r", stdin);
            (void)in;
        }
        dup2(fileno(stdout), STDERR_FILENO);
        for (const auto& [k, v] : env) {
            setenv(k.c_str(), v.c_str(), 1);
        }
        std::vector<char*> argv;
        std::vector<std::string> copy = args;
        for (auto& s : copy) {
            argv.push_back(s.data());
        }
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        std::_Exit(127);
    }
    return pid;
}

std::string temp_log() {
    char tmpl[] = "/tmp/orch-proc-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) {
        throw std::runtime_error("mkstemp failed");
    }
    close(fd);
    return tmpl;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Polls waitpid until the child exits or the timeout passes.
bool wait_exit(pid_t pid, int timeout_ms, int& code) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (true) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            return true;
        }
        if (r < 0 || std::chrono::steady_clock::now() > until) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

}  // namespace

unsigned short free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        if (fd >= 0) {
            ::close(fd);
        }
        throw std::runtime_error("no free port");
    }
    ::close(fd);
    return ntohs(addr.sin_port);
}

run_result run_program(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                       int timeout_ms, const std::optional<std::string>& input) {
    auto log = temp_log();
    std::string input_path;
    if (input) {
        input_path = temp_log();
        std::ofstream(input_path) << *input;
    }
    pid_t pid = spawn(argv, env, log, input_path);
    run_result r;
    if (!wait_exit(pid, timeout_ms, r.exit_code)) {
        kill(pid, SIGKILL);
        int ignored = 0;
        wait_exit(pid, 5'000, ignored);
        r.exit_code = -1;
    }
    r.output = slurp(log);
    std::remove(log.c_str());
    if (!input_path.empty()) {
        std::remove(input_path.c_str());
    }
    return r;
}

background_process::background_process(const std::vector<std::string>& argv,
                                       const std::map<std::string, std::string>& env)
    : log_path_(temp_log()) {
    pid_ = spawn(argv, env, log_path_);
}

background_process::~background_process() {
    if (!exited_) {
        stop(SIGKILL, 5'000);
    }
    std::remove(log_path_.c_str());
}

bool background_process::alive() {
    if (exited_) {
        return false;
    }
    int code = 0;
    if (wait_exit(pid_, 0, code)) {
        exited_ = true;
        exit_code_ = code;
        return false;
    }
    return true;
}

int background_process::stop(int sig, int timeout_ms) {
    if (!alive()) {
        return exit_code_;
    }
    kill(pid_, sig);
    int code = -1;
    if (!wait_exit(pid_, timeout_ms, code)) {
        kill(pid_, SIGKILL);
        wait_exit(pid_, 5'000, code);
        code = -1;
    }
    exited_ = true;
    exit_code_ = code;
    return code;
}

int background_process::wait(int timeout_ms) {
    if (exited_) {
        return exit_code_;
    }
    int code = -1;
    if (wait_exit(pid_, timeout_ms, code)) {
        exited_ = true;
        exit_code_ = code;
        return code;
    }
    return -1;
}

std::string background_process::log() const { return slurp(log_path_); }

}  // namespace orch::test
