// orchestrator: the product's one binary. Subcommands arrive with the campaign-engine, ledger
// and admin issues; today it answers --help and --version.
#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
    CLI::App app{"orchestrator: runs declarative multi-step outreach campaigns through the Outreach API"};
    app.set_version_flag("--version", std::string("orchestrator ") + ORCH_VERSION);
    app.require_subcommand(0);
    CLI11_PARSE(app, argc, argv);
    std::cout << app.help() << "\n";
    return 0;
}
