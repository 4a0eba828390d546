#pragma once
// EngineWorker owns the engine (Vulkan instance, device, runner) on its own
// thread. Requests arrive as queued slot calls; results leave as queued
// signals carrying plain value types. Stop is an atomic flag the runner checks
// between dispatches, so it works while a sweep is running.
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <optional>
#include <utility>

#include "ui/metatypes.h"

namespace ks::ui {

class EngineWorker : public QObject {
  Q_OBJECT
 public:
  EngineWorker();
  ~EngineWorker() override;

  void requestStop() { cancel_.store(true); }  // any thread
  // The UI clears the flag before it queues a run, so a Stop pressed while the
  // run waits in the queue is not lost.
  void clearStop() { cancel_.store(false); }

 public slots:
  void initialize();               // enumerate devices, open the default one
  void selectDevice(int index);    // (re)open a device by index
  void run(const ks::Plan& plan);  // runs the whole plan on this thread
  // The next run() journals its points to `path` (see engine/session/journal.h),
  // starting with `header`: the session as it stands before its first point.
  void journalNextRun(const ks::Session& header, const QString& path);
  void measurePeaks();  // the open device's peaks (Stop cancels)
  // Tunes one kernel at one size on the open device (engine/tune/tuner.h);
  // Stop ends the search, and what was evaluated comes back in tuneFinished.
  void tune(const ks::TuneRequest& request);
  // Compiles a kernel file's text (not registered) or a registered kernel on
  // the open device, at a size its rules accept, with its default parameters.
  // `request` comes back with the answer so that the editor can drop stale ones.
  void compileKernelText(int request, const QString& text, const QString& path);
  void compileRegisteredKernel(int request, const QString& id);
  // A server over ssh (engine/remote): lists its devices (copying the CLI
  // bundle there when needed) on this thread, so the UI never waits on the network.
  void listRemoteDevices(const QString& target, const QString& cli);
  // run() on a server's device: the same signals, and Stop works the same.
  void runRemote(const ks::Plan& plan, const QString& target, const QString& cli, int device);

 signals:
  void devicesReady(const std::vector<ks::vk::DeviceInfo>& devices, int selected, const ks::cpu::HostInfo& host);
  void deviceOpened(const ks::vk::DeviceInfo& device);
  void deviceFailed();  // no device could be opened
  void pointFinished(const ks::Measurement& m);
  void progress(int done, int total);
  void runFinished(bool cancelled);
  void driftChecked(const ks::DriftReport& drift);  // after each reference run of a sweep
  void peakMeasured(const ks::PeakResult& result);  // each as it lands
  void peaksFinished(const ks::DevicePeaks& peaks);
  void peaksFailed(const QString& message);    // translated; cancelled included
  void errorOccurred(const QString& message);  // translated, for the user
  void journalFailed(const QString& message);  // the run goes on without its journal
  void kernelCompiled(int request, const ks::CompileReport& report);
  void remoteDevicesReady(const QString& target, const QString& cli, const std::vector<ks::vk::DeviceInfo>& devices,
                          int default_index);
  void remoteFailed(const QString& target, const QString& message);  // nothing ran
  void remoteStarted(const ks::Session& header);                     // the server's device, host and provenance
  void remoteLost(const QString& message);                           // the finished points arrived; the rest did not
  // A tune: each evaluation with the record so far (the evaluation is its last),
  // the progress, the tuner's notes (space, pruning, cache), and its end.
  void tuneEvaluated(const ks::TuneRecord& snapshot, const ks::Measurement& m, const ks::TuneEvaluation& e);
  void tuneProgress(const ks::TuneProgress& progress);
  void tuneNote(const QString& text);
  void tuneFinished(const ks::TuneOutcome& outcome);  // also when stopped: the record says "cancelled"
  void tuneFailed(const QString& message);            // a bad request; nothing was evaluated
  // Translated; `diagnostics` place the errors on lines of the kernel's file.
  void kernelCompileFailed(int request, const QString& message, const std::vector<ks::SourceDiagnostic>& diagnostics);

 private:
  void reopenIfLost();
  void compile(int request, const ks::KernelInfo& kernel);
  std::shared_ptr<ks::vk::Instance> instance_;
  std::unique_ptr<ks::vk::Device> device_;
  std::atomic<bool> cancel_{false};
  std::optional<std::pair<ks::Session, std::string>> nextJournal_;  // header and path
};

}  // namespace ks::ui
