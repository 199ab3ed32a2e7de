// Data-parallel training of the MLP on several ranks (c10d, Gloo on 127.0.0.1), then the
// activation statistics of two layers over an evaluation set split across the ranks, merged
// into one recording on rank 0 and saved for Python.
//
//   distributed_stats --local-ranks 2 -o merged.pt   (spawns 2 ranks itself), or
//   torchrun --nproc_per_node=2 --redirects 1 --tee 1 --no_python ./distributed_stats -o merged.pt
//
// Each training step consumes one global batch split across the ranks and all-reduces the
// gradients by hand (libtorch 1.13 has no C++ DistributedDataParallel), so every rank count
// follows the same weights; the model runs in float64, so 1 rank and N ranks write the same
// merged.pt up to rounding.
#include "models/mlp.hpp"

#include <recorder/distributed/launch.hpp>
#include <recorder/capture/save.hpp>
#include <recorder/distributed.hpp>
#include <recorder/recorder.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace rr = recorder::record;
namespace rd = recorder::reduce;

namespace {

struct Settings {
  int local_ranks = 0;  // > 0: spawn that many ranks on 127.0.0.1
  std::string output;   // rank 0 saves the merged statistics there
  std::uint64_t seed = 7;
  int steps = 30;            // training steps, one global batch each
  int batch = 60;            // rows of a global batch
  int eval_batches = 12;     // evaluation batches, dealt to the ranks in turn
  int rank = -1, world = 0;  // set for a spawned rank
  std::string store;         // its FileStore
};

void usage() {
  std::cerr << "usage: distributed_stats [--local-ranks N] [-o merged.pt] [--seed S] "
               "[--steps K]\n"
               "  without --local-ranks: one rank of a job launched by torchrun, or with RANK, "
               "WORLD_SIZE, MASTER_ADDR and MASTER_PORT set\n";
}

// Global batch `k` of a seeded stream: inputs and the labels of a fixed random teacher.
std::pair<torch::Tensor, torch::Tensor> batch(std::uint64_t seed, std::int64_t k, int rows) {
  torch::manual_seed(seed * 1000003 + static_cast<std::uint64_t>(k));
  const torch::Tensor x = torch::randn({rows, 784}, torch::kDouble);
  torch::manual_seed(seed);
  const torch::Tensor teacher = torch::randn({784, 10}, torch::kDouble);
  return {x, x.matmul(teacher).argmax(1)};
}

int run_rank(const Settings& s) {
  using namespace std::chrono_literals;
  const recorder::launch::Group pg =
      s.rank >= 0 ? recorder::launch::file_group(s.store, s.rank, s.world, 60s)
                  : recorder::launch::env_group(60s);
  const int rank = pg->getRank(), world = pg->getSize();

  torch::manual_seed(s.seed);  // the same initial weights on every rank
  models::MLP model;
  model->to(torch::kDouble);
  std::vector<torch::Tensor> params = model->parameters();

  // Training: rank r takes rows [r*B/W, (r+1)*B/W) of each global batch.
  const std::int64_t lo = std::int64_t{s.batch} * rank / world;
  const std::int64_t hi = std::int64_t{s.batch} * (rank + 1) / world;
  double first_loss = 0, last_loss = 0;
  for (int step = 0; step < s.steps; ++step) {
    auto [x, y] = batch(s.seed, step, s.batch);
    model->zero_grad();
    const torch::Tensor out = model->forward(x.slice(0, lo, hi));
    // Summed over this shard, divided by the global batch: the shards' gradients add up to
    // the gradient of the global batch's mean loss.
    const torch::Tensor loss =
        torch::nn::functional::cross_entropy(
            out, y.slice(0, lo, hi),
            torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)) /
        s.batch;
    loss.backward();
    std::vector<torch::Tensor> parts;
    for (const torch::Tensor& p : params) parts.push_back(p.grad().flatten());
    parts.push_back(loss.detach().reshape({1}));
    std::vector<torch::Tensor> flat{torch::cat(parts)};
    pg->allreduce(flat)->wait();  // one collective a step: every gradient and the loss
    torch::NoGradGuard no_grad;
    std::int64_t at = 0;
    for (auto& p : params) {
      p.sub_(flat[0].slice(0, at, at + p.numel()).view_as(p), 1.0);
      at += p.numel();
    }
    last_loss = flat[0][at].item<double>();
    if (step == 0) first_loss = last_loss;
  }

  // Evaluation: batch j goes to rank j % W; each rank records the outputs of fc1 and fc2.
  rr::ForwardOutput<rd::Moments> acts({"fc1", "fc2"});
  recorder::Tracer<rr::ForwardOutput<rd::Moments>> tracer({.no_grad = true}, acts);
  for (int j = rank; j < s.eval_batches; j += world)
    tracer.run(model, batch(s.seed + 1, j, s.batch).first);

  const auto merged = recorder::merged_across(acts, *pg, {.root = 0});
  if (rank != 0) return 0;
  std::printf("%d rank%s, %d steps of %d rows: loss %.6f -> %.6f\n", world, world == 1 ? "" : "s",
              s.steps, s.batch, first_loss, last_loss);
  for (const auto& rec : merged.records()) {
    const auto m = rec->result();
    std::printf("%-4s %llu batches of %s: mean %.6f, variance %.6f (averaged over elements)\n",
                rec->key.c_str(), static_cast<unsigned long long>(m.count),
                recorder::to_string(recorder::Shape(m.mean.sizes())).c_str(),
                m.mean.mean().item<double>(), m.variance.mean().item<double>());
  }
  if (!s.output.empty()) {
    recorder::save(merged, s.output);
    std::printf("saved %s\n", s.output.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--local-ranks")
        s.local_ranks = std::stoi(value());
      else if (a == "-o")
        s.output = value();
      else if (a == "--seed")
        s.seed = std::stoull(value());
      else if (a == "--steps")
        s.steps = std::stoi(value());
      else if (a == "--rank")
        s.rank = std::stoi(value());
      else if (a == "--world")
        s.world = std::stoi(value());
      else if (a == "--store")
        s.store = value();
      else
        throw std::invalid_argument("unknown argument " + a);
    }
    if (s.local_ranks < 0 || s.local_ranks > 16)
      throw std::invalid_argument("--local-ranks takes 1 to 16");
  } catch (const std::exception& e) {
    std::cerr << "distributed_stats: " << e.what() << "\n";
    usage();
    return 2;
  }
  try {
    if (s.local_ranks == 0) {
      if (s.rank < 0 && !recorder::launch::in_launched_job()) {
        std::cerr << "distributed_stats: not launched by torchrun: pass --local-ranks N\n";
        usage();
        return 2;
      }
      return run_rank(s);
    }
    // Spawn the ranks: this program again, each with its rank and the job's FileStore.
    const auto folder = recorder::launch::temp_folder("distributed_stats_");
    const auto codes = recorder::launch::run_ranks(
        s.local_ranks,
        [&](int r) {
          std::vector<std::string> a{
              "--rank",  std::to_string(r),           "--world", std::to_string(s.local_ranks),
              "--store", (folder / "store").string(), "--seed",  std::to_string(s.seed),
              "--steps", std::to_string(s.steps)};
          if (!s.output.empty()) a.insert(a.end(), {"-o", s.output});
          return a;
        },
        [](int) { return std::string(); }, std::chrono::minutes(5));
    std::filesystem::remove_all(folder);
    for (std::size_t r = 0; r < codes.size(); ++r) {
      if (codes[r] != 0) {
        std::cerr << "distributed_stats: rank " << r << " failed (exit " << codes[r] << ")\n";
        return 1;
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "distributed_stats: " << e.what() << "\n";
    return 1;
  }
}
