#pragma once
// The main window as the UI tests start it: shown, lavapipe picked from the
// device list as a user would, and no kernel checked.
#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QString>
#include <QtTest>
#include <memory>

#include "ui/main_window.h"

namespace ks::ui::testing {

// `journal_dir`: where unsaved windows leave their journals (empty: the default).
inline std::unique_ptr<MainWindow> openLavapipeWindow(const QString& journal_dir = {}) {
  auto w = std::make_unique<MainWindow>();
  w->setAskBeforeDiscard(false);
  if (!journal_dir.isEmpty()) w->setJournalDirectory(journal_dir);
  w->show();
  QComboBox* box = w->deviceBox();
  if (!QTest::qWaitFor([&] { return box->findText("llvmpipe", Qt::MatchContains) >= 0; }, 30000))
    qFatal("lavapipe is not among the Vulkan devices: install mesa-vulkan-drivers");
  // Let the default device finish opening, then pick lavapipe.
  if (!QTest::qWaitFor([&] { return !w->isDevicePending(); }, 30000)) qFatal("the default device did not open");
  const int i = box->findText("llvmpipe", Qt::MatchContains);
  QSignalSpy opened(w.get(), &MainWindow::deviceOpened);
  box->setCurrentIndex(i);
  emit box->activated(i);
  if (!opened.wait(30000) || !w->deviceLabel()->text().contains("llvmpipe")) qFatal("lavapipe did not open");
  if (w->isDevicePending()) qFatal("the device is still pending after it opened");
  for (const QString& id : w->checkedKernels()) w->setKernelChecked(id, false);
  return w;
}

}  // namespace ks::ui::testing
