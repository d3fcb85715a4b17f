// kubectl describe's PrefixWriter and its shared sections (internal to src/cli).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api_generated.h"
#include "cli/human_time.h"
#include "cli/print_util.h"
#include "cli/tabwriter.h"

namespace podflow::cli {

// kubectl's PrefixWriter over one tabwriter {min width 0, padding 2}:
// level N indents by 2N spaces.
class DescribeWriter {
 public:
  DescribeWriter() : tw_(0, 2) {}
  void Write(int level, std::string_view text) {
    tw_.Write(std::string(2 * level, ' '));
    tw_.Write(text);
  }
  void Flush() { tw_.Flush(); }
  std::string String() { return tw_.String(); }

 private:
  TabWriter tw_;
};

// "Labels:\tapp=web\n\ttier=front\n" / "Labels:\t<none>\n".
void PrintLabelsMultiline(DescribeWriter& w, std::string_view title, const Entries& labels);
// "Annotations:\tkey: value\n", skipping kubectl's last-applied-configuration.
void PrintAnnotationsMultiline(DescribeWriter& w, std::string_view title, const Entries& annotations);
void PrintTolerationsMultiline(DescribeWriter& w, std::string_view title,
                               const std::vector<std::unique_ptr<api::TolerationT>>& tolerations);
void PrintTaintsMultiline(DescribeWriter& w, std::string_view title,
                          const std::vector<std::unique_ptr<api::TaintT>>& taints);
// kubectl's describeContainers: `space` "" for a pod's, "  " for a pod
// template's (names then indented one more space; `pod` null and no
// statuses: no state, and env from the pod's fields without a value).
void DescribeContainers(DescribeWriter& w, const api::PodT* pod, std::string_view space, const std::string& label,
                        const std::vector<std::unique_ptr<api::ContainerT>>& containers,
                        const std::vector<std::unique_ptr<api::ContainerStatusT>>& statuses);
// kubectl's describeVolumes, with the same `space`.
void DescribeVolumes(DescribeWriter& w, const std::vector<std::unique_ptr<api::VolumeT>>& volumes,
                     std::string_view space);
// "Topology Spread Constraints:" (only when there are some), with the same `space`.
void DescribeTopologySpread(DescribeWriter& w, const std::vector<std::unique_ptr<api::TopologySpreadConstraintT>>& list,
                            std::string_view space);
// kubectl's DescribePodTemplate: "Pod Template:", its labels, annotations,
// service account, containers, volumes, spread, priority class, node
// selectors and tolerations.
void DescribePodTemplate(DescribeWriter& w, const api::PodTemplateSpecT* tmpl);
// "Events:\t<none>\n" or the Type/Reason/Age/From/Message table, oldest first.
void DescribeEvents(DescribeWriter& w, std::span<const std::string> events, TimePoint now);

}  // namespace podflow::cli
