// The status stage's public header: include this one.
//   fold.h        FoldReport, ReportLedger: runtime reports -> pod status + Events
//   conditions.h  Initialized / ContainersReady / Ready as kubelet derives them
//   events.h      every Event podflow creates (kubelet, Scheduled, FailedScheduling)
#pragma once

#include "stages/status/conditions.h"
#include "stages/status/events.h"
#include "stages/status/fold.h"
