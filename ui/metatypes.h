#pragma once
// Engine value types that travel between the engine thread and the UI thread
// through queued signals.
#include <QMetaType>
#include <vector>

#include "engine/bench/compile.h"
#include "engine/bench/peaks.h"
#include "engine/bench/runner.h"
#include "engine/cpu/cpu_info.h"
#include "engine/kernels/kernel_file.h"
#include "engine/session/session.h"
#include "engine/tune/tuner.h"
#include "engine/vulkan/context.h"

Q_DECLARE_METATYPE(ks::Measurement)
Q_DECLARE_METATYPE(ks::Plan)
Q_DECLARE_METATYPE(ks::vk::DeviceInfo)
Q_DECLARE_METATYPE(std::vector<ks::vk::DeviceInfo>)
Q_DECLARE_METATYPE(ks::cpu::HostInfo)
Q_DECLARE_METATYPE(ks::DevicePeaks)
Q_DECLARE_METATYPE(ks::PeakResult)
Q_DECLARE_METATYPE(ks::DriftReport)
Q_DECLARE_METATYPE(ks::Session)
Q_DECLARE_METATYPE(ks::CompileReport)
Q_DECLARE_METATYPE(std::vector<ks::SourceDiagnostic>)
Q_DECLARE_METATYPE(ks::TuneRequest)
Q_DECLARE_METATYPE(ks::TuneRecord)
Q_DECLARE_METATYPE(ks::TuneEvaluation)
Q_DECLARE_METATYPE(ks::TuneProgress)
Q_DECLARE_METATYPE(ks::TuneOutcome)

namespace ks::ui {
void registerMetaTypes();
}
