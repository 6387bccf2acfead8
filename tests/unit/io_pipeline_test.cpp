// ReadAhead and WriteBehind (io_pipeline.hpp), the hand-over of batch mode's files between the
// registering thread and the I/O threads: order, bounds, errors, and the sequential mode.
#include <regpipe/host/io_pipeline.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using regpipe::ReadAhead;
using regpipe::WriteBehind;

namespace {

void sleep_us(int us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

// Durations that make later items finish before earlier ones.
std::vector<int> shuffled_durations_us(size_t n) {
  std::mt19937 rng(7);
  std::vector<int> out(n);
  for (auto& d : out) d = int(rng() % 3000);
  return out;
}

// Hands out the ids 0..n-1, then no more.
std::function<std::optional<size_t>()> up_to(size_t n) {
  return [n, next = size_t(0)]() mutable -> std::optional<size_t> {
    if (next >= n) return std::nullopt;
    return next++;
  };
}

}  // namespace

TEST(ReadAhead, HandsItemsOverInOrderAndNeverReadsFurtherAheadThanAsked) {
  constexpr size_t kItems = 40, kAhead = 3;
  const std::vector<int> durations = shuffled_durations_us(kItems);
  std::atomic<size_t> taken{0}, started_max_ahead{0};
  ReadAhead<size_t> reads(3, kAhead, up_to(kItems), [&](size_t i) {
    // How far past the items taken this one starts: below kAhead, plus one for the moment
    // between take() returning and `taken` being stored.
    const size_t ahead = i - taken.load();
    size_t seen = started_max_ahead.load();
    while (ahead > seen && !started_max_ahead.compare_exchange_weak(seen, ahead)) {
    }
    sleep_us(durations[i]);
    return i * 10;
  });
  for (size_t i = 0; i < kItems; ++i) {
    EXPECT_EQ(reads.take(), i * 10);
    taken.store(i + 1);
    sleep_us(200);  // the consumer is slower: the readers must wait for it
  }
  EXPECT_LE(started_max_ahead.load(), kAhead);
}

TEST(ReadAhead, AnItemsExceptionIsThrownAtItsTurnOnly) {
  ReadAhead<std::string> reads(2, 2, up_to(4), [](size_t i) -> std::string {
    if (i == 1) throw std::runtime_error("item 1 is corrupt");
    return "item " + std::to_string(i);
  });
  EXPECT_EQ(reads.take(), "item 0");
  try {
    reads.take();
    ADD_FAILURE() << "item 1 did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "item 1 is corrupt");
  }
  EXPECT_EQ(reads.take(), "item 2");
  EXPECT_EQ(reads.take(), "item 3");
  EXPECT_EQ(reads.take(), std::nullopt);
}

// A batch worker's ids come from its supervisor, in no particular order, until it says no more.
TEST(ReadAhead, TakesIdsInTheOrderTheSourceGivesThemThenEnds) {
  const std::vector<size_t> handed = {7, 2, 9, 4};
  for (const size_t threads : {size_t(0), size_t(2)}) {
    size_t given = 0;
    ReadAhead<size_t> reads(threads, 2, [&]() -> std::optional<size_t> {
      if (given == handed.size()) return std::nullopt;
      return handed[given++];
    }, [](size_t id) { return id * 10; });
    for (const size_t id : handed) EXPECT_EQ(reads.take(), id * 10) << threads << " threads";
    EXPECT_EQ(reads.take(), std::nullopt) << threads << " threads";
    EXPECT_EQ(reads.take(), std::nullopt) << threads << " threads";
  }
}

TEST(ReadAhead, WithoutThreadsProducesEachItemWhenTakenOnTheCallingThread) {
  const auto caller = std::this_thread::get_id();
  size_t produced = 0;
  ReadAhead<size_t> reads(0, 2, up_to(3), [&](size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    ++produced;
    return i;
  });
  EXPECT_EQ(produced, 0u);  // nothing ahead
  EXPECT_EQ(reads.take(), 0u);
  EXPECT_EQ(produced, 1u);
  EXPECT_EQ(reads.take(), 1u);
  EXPECT_EQ(produced, 2u);
}

TEST(ReadAhead, StopsWithItemsNotTaken) {
  std::atomic<size_t> produced{0};
  {
    ReadAhead<size_t> reads(2, 2, up_to(100), [&](size_t i) {
      sleep_us(500);
      ++produced;
      return i;
    });
    EXPECT_EQ(reads.take(), 0u);
  }  // an abandoned batch: the destructor returns after the reads in progress
  EXPECT_LE(produced.load(), 4u);
}

TEST(WriteBehind, RunsDoneInSubmissionOrderWithinTheCapacity) {
  constexpr size_t kJobs = 40, kCapacity = 4;
  const std::vector<int> durations = shuffled_durations_us(kJobs);
  std::vector<size_t> order;
  std::atomic<size_t> working{0}, working_max{0};  // jobs submitted whose work has not ended
  {
    WriteBehind writes(3, kCapacity);
    for (size_t i = 0; i < kJobs; ++i) {
      if (i % 7 == 3) {  // a job without work (a failed image): still in its turn
        writes.submit(nullptr, [&order, i] { order.push_back(i); });
        continue;
      }
      const size_t now = ++working;
      size_t seen = working_max.load();
      while (now > seen && !working_max.compare_exchange_weak(seen, now)) {
      }
      writes.submit([&, i] { sleep_us(durations[i]); --working; },
                    [&, i] { order.push_back(i); });
    }
    writes.drain();
    EXPECT_EQ(order.size(), kJobs);
  }
  for (size_t i = 0; i < kJobs; ++i) EXPECT_EQ(order[i], i);
  // submit blocks at kCapacity jobs at work (the memory they hold is bounded); the counter
  // counts the one being submitted before submit returns.
  EXPECT_LE(working_max.load(), kCapacity + 1);
}

TEST(WriteBehind, TheDestructorFinishesEveryJobSubmitted) {
  std::atomic<size_t> written{0};
  {
    WriteBehind writes(2, 8);
    for (int i = 0; i < 8; ++i) writes.submit([&] { sleep_us(1000); ++written; }, nullptr);
  }  // leaving early (Ctrl-C): the results already registered are written
  EXPECT_EQ(written.load(), 8u);
}

TEST(WriteBehind, WithoutThreadsRunsEachJobInsideSubmit) {
  const auto caller = std::this_thread::get_id();
  std::vector<std::string> events;
  WriteBehind writes(0, 1);
  writes.submit([&] { EXPECT_EQ(std::this_thread::get_id(), caller); events.push_back("work 0"); },
                [&] { events.push_back("done 0"); });
  EXPECT_EQ(events, (std::vector<std::string>{"work 0", "done 0"}));
  writes.submit(nullptr, [&] { events.push_back("done 1"); });
  EXPECT_EQ(events.back(), "done 1");
}

TEST(WriteBehind, AnExceptionEscapingWorkIsRethrownByDrainAndTheOthersRun) {
  size_t done = 0;
  WriteBehind writes(2, 2);
  writes.submit([] { throw std::runtime_error("disk full"); }, [&] { ++done; });
  writes.submit([] {}, [&] { ++done; });
  EXPECT_THROW(writes.drain(), std::runtime_error);
  EXPECT_EQ(done, 2u);
}
