#include "lockstep.hpp"

#include "coroutine.hpp"

#include <deque>
#include <iterator>

namespace regpipe::flirt {
namespace {

struct Search {
  CostChannel channel;  // the task holds a reference: a deque keeps its address
  Task<Scored> task;

  Search(const Start& start, const LocalSearchSettings& settings)
      : task(local_search(channel, start, settings)) {}
};

}  // namespace

std::vector<Scored> run_lockstep(BatchObjective& objective, const std::vector<Start>& starts,
                                 const LocalSearchSettings& settings, Speculation speculation) {
  const auto speculating = [&] {
    return speculation == Speculation::kOn ||
           (speculation == Speculation::kAuto && objective.extra_points_cheap());
  };
  std::deque<Search> searches;
  for (const Start& start : starts) {
    Search& s = searches.emplace_back(start, settings);
    s.channel.set_speculating(speculating());
    s.task.start();
  }

  std::vector<Search*> waiting;
  std::vector<Point> batch;
  for (;;) {
    waiting.clear();
    batch.clear();
    for (Search& s : searches)
      if (s.channel.waiting()) {
        waiting.push_back(&s);
        batch.insert(batch.end(), s.channel.points().begin(), s.channel.points().end());
      }
    if (waiting.empty()) break;
    const std::vector<double> costs = objective.evaluate(batch);
    const bool speculate = speculating();
    auto next = costs.begin();
    for (Search* s : waiting) {
      s->channel.set_speculating(speculate);
      const auto count = static_cast<std::ptrdiff_t>(s->channel.points().size());
      s->channel.answer(std::vector<double>(next, next + count));
      next += count;
    }
  }

  std::vector<Scored> results;
  results.reserve(searches.size());
  for (Search& s : searches) results.push_back(s.task.result());
  return results;
}

}  // namespace regpipe::flirt
