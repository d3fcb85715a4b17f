// The status stage's public header: include this one.
//   fold.h        FoldReport, ReportLedger: runtime reports -> pod status + Events
// The vocabulary it folds with lives in src/model: conditions.h (Initialized /
// ContainersReady / Ready as kubelet derives them), events.h (every Event
// podflow creates), report.h (the runtime's reports).
#pragma once

#include "stages/status/fold.h"
