#include "stages/runtime/security_context.h"

#include "stages/runtime/kubelet_text.h"

namespace podflow::runtime {

ContainerSecurity SecurityOf(const api::PodT& pod, const api::ContainerT& container) {
  ContainerSecurity out;
  const api::PodSecurityContextT* p = pod.spec ? pod.spec->security_context.get() : nullptr;
  const api::SecurityContextT* c = container.security_context.get();
  if (p != nullptr) {
    out.run_as_user = p->run_as_user;
    out.run_as_group = p->run_as_group;
    out.supplemental_groups = p->supplemental_groups;
    if (p->fs_group) out.supplemental_groups.push_back(*p->fs_group);
    out.merge_user_groups = p->supplemental_groups_policy != "Strict";
  }
  if (c != nullptr) {
    if (c->run_as_user) out.run_as_user = c->run_as_user;
    if (c->run_as_group) out.run_as_group = c->run_as_group;
    if (c->capabilities) {
      out.add_capabilities = c->capabilities->add;
      out.drop_capabilities = c->capabilities->drop;
    }
    out.privileged = c->privileged.value_or(false);
    out.read_only_root = c->read_only_root_filesystem.value_or(false);
    // kubelet asks for no_new_privs only when it is refused in so many words.
    out.no_new_privileges = c->allow_privilege_escalation.has_value() && !*c->allow_privilege_escalation;
  }
  return out;
}

std::string RunAsNonRootError(const api::PodT& pod, const api::ContainerT& container,
                              std::optional<int64_t> image_user) {
  const api::PodSecurityContextT* p = pod.spec ? pod.spec->security_context.get() : nullptr;
  const api::SecurityContextT* c = container.security_context.get();
  std::optional<bool> non_root = p != nullptr ? p->run_as_non_root : std::nullopt;
  if (c != nullptr && c->run_as_non_root) non_root = c->run_as_non_root;
  if (!non_root.value_or(false)) return "";
  // Formatted only for a refusal: this runs for every container created.
  auto where = [&] {
    const api::ObjectMetaT* m = pod.metadata.get();
    const std::string pod_text = m != nullptr ? kubelet_text::PodText(m->name, m->namespace_, m->uid) : "";
    return "(pod: \"" + pod_text + "\", container: " + container.name + ")";
  };
  const std::optional<int64_t> user = SecurityOf(pod, container).run_as_user;
  if (user) return *user == 0 ? "container's runAsUser breaks non-root policy " + where() : "";
  if (image_user && *image_user == 0) return "container has runAsNonRoot and image will run as root " + where();
  return "";
}

}  // namespace podflow::runtime
