#include "sandbox/service.hpp"
namespace orch::sandbox {
void register_profiles_actions(action_table& table) { (void)table; }
} // namespace orch::sandbox
