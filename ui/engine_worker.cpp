#include "ui/engine_worker.h"

#include <QFileInfo>
#include <QRegularExpression>

#include "engine/remote/remote.h"
#include "engine/session/journal.h"

namespace ks::ui {

void registerMetaTypes() {
  qRegisterMetaType<ks::Measurement>();
  qRegisterMetaType<ks::Plan>();
  qRegisterMetaType<ks::vk::DeviceInfo>();
  qRegisterMetaType<std::vector<ks::vk::DeviceInfo>>();
  qRegisterMetaType<ks::cpu::HostInfo>();
  qRegisterMetaType<ks::DevicePeaks>();
  qRegisterMetaType<ks::PeakResult>();
  qRegisterMetaType<ks::DriftReport>();
  qRegisterMetaType<ks::Session>();
  qRegisterMetaType<ks::CompileReport>();
  qRegisterMetaType<std::vector<ks::SourceDiagnostic>>();
  qRegisterMetaType<ks::TuneRequest>();
  qRegisterMetaType<ks::TuneRecord>();
  qRegisterMetaType<ks::TuneEvaluation>();
  qRegisterMetaType<ks::TuneProgress>();
  qRegisterMetaType<ks::TuneOutcome>();
}

EngineWorker::EngineWorker() { registerMetaTypes(); }
EngineWorker::~EngineWorker() = default;

void EngineWorker::initialize() {
  const auto host = ks::cpu::hostInfo();
  auto inst = ks::vk::Instance::create();
  if (!inst) {
    emit devicesReady({}, -1, host);
    emit errorOccurred(
        tr("No Vulkan device: %1. CPU kernels still run.").arg(QString::fromStdString(inst.error().message)));
    return;
  }
  instance_ = *inst;
  auto index = ks::vk::selectDevice(instance_->devices(), "");
  emit devicesReady(instance_->devices(), index ? int(*index) : -1, host);
  if (index) selectDevice(int(*index));
}

void EngineWorker::selectDevice(int index) {
  if (!instance_) return;
  if (device_ && int(device_->info().index) == index && !device_->lost()) {
    emit deviceOpened(device_->info());
    return;
  }
  // Open the new device before letting go of the old one: a failure keeps what works.
  auto dev = ks::vk::Device::create(instance_, static_cast<uint32_t>(index));
  if (!dev) {
    emit errorOccurred(tr("Cannot open device %1: %2").arg(index).arg(QString::fromStdString(dev.error().message)));
    if (device_ && !device_->lost())
      emit deviceOpened(device_->info());
    else
      emit deviceFailed();
    return;
  }
  device_ = std::move(dev.value());
  emit deviceOpened(device_->info());
}

// A lost or hung device is recreated so one crash does not end the session:
// on a fresh instance, since a hung dispatch may still hold the old one's
// threads (lavapipe); nothing of the old device is destroyed.
void EngineWorker::reopenIfLost() {
  if (!device_ || !device_->lost()) return;
  if (auto st = device_->recreate(); !st) {
    emit errorOccurred(tr("The device was lost: %1").arg(QString::fromStdString(st.error().message)));
    device_.reset();
    emit deviceFailed();
    return;
  }
  emit deviceOpened(device_->info());
}

void EngineWorker::run(const ks::Plan& plan) {
  reopenIfLost();
  // The journal is written here, where the points arrive: what the engine
  // finished is on the disk even if the UI never got to it, and the UI thread
  // never waits on the disk. A point line is small; fsync takes milliseconds
  // between points, never inside a timed run.
  std::optional<ks::JournalWriter> journal;
  if (nextJournal_) {
    auto created = ks::JournalWriter::create(nextJournal_->second, nextJournal_->first);
    if (created)
      journal.emplace(std::move(*created));
    else
      emit journalFailed(QString::fromStdString(created.error().message));
    nextJournal_.reset();
  }
  auto journalAppend = [this, &journal](const auto& record) {
    if (!journal) return;
    if (auto st = journal->append(record); !st) {
      emit journalFailed(QString::fromStdString(st.error().message));
      journal.reset();
    }
  };
  ks::Runner runner(device_.get());
  ks::RunCallbacks cb;
  cb.point = [this, &journalAppend](const ks::Measurement& m) {
    journalAppend(m);
    emit pointFinished(m);
  };
  cb.progress = [this](size_t done, size_t total) { emit progress(int(done), int(total)); };
  cb.drift = [this, &journalAppend](const ks::DriftReport& d) {
    journalAppend(d);
    emit driftChecked(d);
  };
  try {
    runner.run(plan, cb, cancel_);
  } catch (const std::exception& e) {
    emit errorOccurred(tr("The sweep stopped on an internal error: %1").arg(e.what()));
    emit runFinished(true);
    return;
  }
  emit runFinished(cancel_.load());
}

void EngineWorker::listRemoteDevices(const QString& target, const QString& cli) {
  auto parsed = ks::remote::parseTarget(target.toStdString());
  if (!parsed) {
    emit remoteFailed(target, QString::fromStdString(parsed.error().message));
    return;
  }
  parsed->cli = cli.toStdString();
  auto list = ks::remote::listDevices(*parsed, ks::remote::Setup::fromEnvironment());
  if (!list) {
    emit remoteFailed(target, QString::fromStdString(list.error().message));
    return;
  }
  emit remoteDevicesReady(target, cli, list->devices, list->default_index);
}

void EngineWorker::runRemote(const ks::Plan& plan, const QString& target, const QString& cli, int device) {
  auto parsed = ks::remote::parseTarget(target.toStdString());
  if (!parsed) {
    emit remoteFailed(target, QString::fromStdString(parsed.error().message));
    emit runFinished(true);
    return;
  }
  parsed->cli = cli.toStdString();
  ks::Session request = ks::newSession();
  request.plan = plan;
  ks::embedKernelFiles(request);
  // The journal starts with the server's header, once the server has sent it.
  std::optional<std::string> journal_path;
  if (nextJournal_) journal_path = nextJournal_->second;
  nextJournal_.reset();
  std::optional<ks::JournalWriter> journal;
  auto journalAppend = [this, &journal](const auto& record) {
    if (!journal) return;
    if (auto st = journal->append(record); !st) {
      emit journalFailed(QString::fromStdString(st.error().message));
      journal.reset();
    }
  };
  ks::remote::RunCallbacks cb;
  cb.started = [&](const ks::Session& header) {
    if (journal_path) {
      if (auto created = ks::JournalWriter::create(*journal_path, header))
        journal.emplace(std::move(*created));
      else
        emit journalFailed(QString::fromStdString(created.error().message));
    }
    emit remoteStarted(header);
  };
  cb.point = [&](const ks::Measurement& m) {
    journalAppend(m);
    emit pointFinished(m);
  };
  cb.progress = [this](size_t done, size_t total) { emit progress(int(done), int(total)); };
  cb.drift = [&](const ks::DriftReport& d) {
    journalAppend(d);
    emit driftChecked(d);
  };
  ks::remote::RunOptions options;
  options.device = std::to_string(device);
  auto result = ks::remote::run(*parsed, ks::remote::Setup::fromEnvironment(), request, options, cb, cancel_);
  if (!result) {
    emit remoteFailed(target, QString::fromStdString(result.error().message));
    emit runFinished(true);
    return;
  }
  if (!result->lost.empty()) emit remoteLost(QString::fromStdString(result->lost));
  emit runFinished(cancel_.load() || result->interrupted || !result->lost.empty());
}

void EngineWorker::tune(const ks::TuneRequest& request) {
  reopenIfLost();
  ks::Runner runner(device_.get());
  ks::TuneCallbacks cb;
  cb.evaluation = [this](const ks::TuneRecord& record, const ks::Measurement& m, const ks::TuneEvaluation& e) {
    emit tuneEvaluated(record, m, e);
  };
  cb.progress = [this](const ks::TuneProgress& p) { emit tuneProgress(p); };
  cb.note = [this](const std::string& text) { emit tuneNote(QString::fromStdString(text)); };
  ks::Result<ks::TuneOutcome> outcome = ks::makeError("not run");
  try {
    outcome = ks::runTune(runner, device_ ? &device_->info() : nullptr, request, cb, cancel_);
  } catch (const std::exception& e) {
    emit tuneFailed(tr("The tune stopped on an internal error: %1").arg(e.what()));
    return;
  }
  if (!outcome) {
    emit tuneFailed(QString::fromStdString(outcome.error().message));
    return;
  }
  emit tuneFinished(*outcome);
}

void EngineWorker::journalNextRun(const ks::Session& header, const QString& path) {
  nextJournal_.emplace(header, path.toStdString());
}

void EngineWorker::measurePeaks() {
  reopenIfLost();
  if (!device_) {
    emit peaksFailed(tr("No Vulkan device is open: there are no peaks to measure."));
    return;
  }
  ks::Result<ks::DevicePeaks> peaks = ks::makeError("not measured");
  try {
    peaks = ks::measurePeaks(*device_, ks::PeakOptions{}, cancel_,
                             [this](const ks::PeakResult& r) { emit peakMeasured(r); });
  } catch (const std::exception& e) {
    emit peaksFailed(tr("Measuring peaks stopped on an internal error: %1").arg(e.what()));
    return;
  }
  if (!peaks) {
    emit peaksFailed(cancel_.load()
                         ? tr("Measuring peaks was stopped.")
                         : tr("Measuring peaks failed: %1").arg(QString::fromStdString(peaks.error().message)));
    return;
  }
  emit peaksFinished(*peaks);
}

void EngineWorker::compileKernelText(int request, const QString& text, const QString& path) {
  // Messages name the file by its name alone: sourceDiagnostics reads
  // "name.comp:7: ..." and a folder with spaces or colons would hide the line.
  QString name = QFileInfo(path).fileName();
  if (name.isEmpty() || name.contains(QRegularExpression(R"([\s:])")) || !name.contains('.')) name = "kernel.comp";
  auto kernel = ks::parseKernelFile(text.toStdString(), name.toStdString());
  if (!kernel) {
    const std::string& message = kernel.error().message;
    emit kernelCompileFailed(request, QString::fromStdString(message), ks::sourceDiagnostics(message));
    return;
  }
  compile(request, *kernel);
}

void EngineWorker::compileRegisteredKernel(int request, const QString& id) {
  const ks::KernelInfo* kernel = ks::Registry::instance().find(id.toStdString());
  if (!kernel) {
    const QString message = tr("There is no kernel %1.").arg(id);
    emit kernelCompileFailed(request, message, {{0, message.toStdString()}});
    return;
  }
  compile(request, *kernel);
}

void EngineWorker::compile(int request, const ks::KernelInfo& kernel) {
  auto fail = [&](const QString& message) {
    emit kernelCompileFailed(request, message, ks::sourceDiagnostics(message.toStdString()));
  };
  reopenIfLost();
  if (!device_) return fail(tr("No Vulkan device is open: there is nothing to compile for."));
  if (kernel.backend != ks::Backend::Vulkan)
    return fail(tr("%1 runs on the CPU: there is no shader to compile.").arg(QString::fromStdString(kernel.id)));
  // The first size its rules take: the pipelines depend on the size only
  // through the grid, so any legal one shows the same code.
  const ks::Params params = kernel.defaultParams(&device_->info());
  std::optional<ks::ProblemSize> size;
  std::string why;
  for (uint64_t n : {256, 512, 1024, 128, 2048, 64, 4096}) {
    auto s = ks::problemSize(kernel, {n});
    if (!s) {
      why = s.error().message;
      continue;
    }
    if (auto no = ks::checkPoint(kernel, *s, params, &device_->info())) {
      why = *no;
      continue;
    }
    size = *s;
    break;
  }
  if (!size)
    return fail(
        tr("No size to compile %1 for: %2").arg(QString::fromStdString(kernel.id), QString::fromStdString(why)));
  ks::Result<ks::CompileReport> report = ks::makeError("not compiled");
  try {
    report = ks::compileKernel(*device_, kernel, params, *size);
  } catch (const std::exception& e) {
    return fail(tr("Compiling stopped on an internal error: %1").arg(e.what()));
  }
  if (!report) return fail(QString::fromStdString(report.error().message));
  emit kernelCompiled(request, *report);
}

}  // namespace ks::ui
