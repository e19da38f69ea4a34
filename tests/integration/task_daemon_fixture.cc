#include "task_daemon_fixture.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "taskgraph/task_event_translator.h"
#include "taskgraph/recording_reader.h"

namespace v1 = nodekeeper::v1;

namespace nk::test {

void TaskDaemonFixture::SetUp() {
  DaemonFixture::SetUp();
  tasks_ = v1::TasksService::NewStub(channel_);
}

std::vector<v1::Session> TaskDaemonFixture::sessions() {
  grpc::ClientContext context;
  // Long enough for a daemon on a node the tests keep busy (NK_TEST_HOST_LOAD)
  // while it builds a graph: a 5 s deadline failed a poll that would have
  // gone on, under four times the host's CPUs busy. A daemon that hangs
  // still fails the call.
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::SessionList list;
  const grpc::Status status = tasks_->ListSessions(&context, v1::ListSessionsRequest(), &list);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return {list.sessions().begin(), list.sessions().end()};
}

std::vector<std::filesystem::path> TaskDaemonFixture::recordings() {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(daemon_.stateDir() / "recordings", ec))
    if (entry.path().extension() == ".nkrec") files.push_back(entry.path());
  return files;
}

TaskGraph TaskDaemonFixture::graphFromRecording(uint64_t* frames) {
  TaskGraph graph;
  uint64_t count = 0;
  auto files = recordings();
  EXPECT_EQ(files.size(), 1u);
  if (files.empty()) return graph;
  auto reader = RecordingReader::open(files.front());
  EXPECT_TRUE(reader.ok());
  if (!reader.ok()) return graph;
  std::vector<GraphEvent> events;
  TaskEventTranslator translator;
  while (auto payload = reader->next()) {
    v1::TaskEventBatch batch;
    EXPECT_TRUE(batch.ParseFromArray(payload->data(), static_cast<int>(payload->size())));
    ++count;
    EXPECT_EQ(translator.toGraphEvents(batch, events), "");
    for (const GraphEvent& g : events) graph.apply(g);
  }
  EXPECT_EQ(reader->stopReason(), "");
  if (frames) *frames = count;
  return graph;
}

}  // namespace nk::test
