// Placeholder until issue 3 fills this area in (no actions registered: the category answers 404).
#include "sandbox/service.hpp"
namespace orch::sandbox {
void register_recruiter_actions(action_table&) {}
} // namespace orch::sandbox
