// The language_id model (examples/language_id) in DyNet, for
// bench/chain_bench.sh: a character embedding (128 x 16), a one-layer LSTM
// (16 -> 64, DyNet's VanillaLSTMBuilder: the gates of foldc's `lstm`), and a
// linear layer to 5 languages with a softmax cross-entropy loss on the last
// state. One line of N characters; `train` runs forward, backward and an
// Adam step over it, `infer` the forward pass of the logits only. Like
// foldc's driver, the whole process is measured (time and peak RSS).
//
//   dynet_char_lstm train|infer N [--dynet-mem MB]
#include <dynet/dynet.h>
#include <dynet/expr.h>
#include <dynet/lstm.h>
#include <dynet/training.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

int main(int argc, char **argv) {
  if (argc < 3 || (std::strcmp(argv[1], "train") != 0 && std::strcmp(argv[1], "infer") != 0)) {
    std::fprintf(stderr, "usage: %s train|infer N [--dynet-mem MB]\n", argv[0]);
    return 2;
  }
  bool training = std::strcmp(argv[1], "train") == 0;
  long steps = std::atol(argv[2]);
  dynet::initialize(argc, argv);

  dynet::ParameterCollection model;
  dynet::LookupParameter chars = model.add_lookup_parameters(128, {16});
  dynet::VanillaLSTMBuilder cell(1, 16, 64, model);
  dynet::Parameter w = model.add_parameters({5, 64});
  dynet::Parameter b = model.add_parameters({5});
  dynet::AdamTrainer adam(model, 0.001f);

  std::mt19937 random(1);
  std::vector<unsigned> line(static_cast<size_t>(steps));
  for (unsigned &c : line)
    c = 97 + random() % 26;

  dynet::ComputationGraph cg;
  cell.new_graph(cg);
  cell.start_new_sequence();
  dynet::Expression h;
  for (unsigned c : line)
    h = cell.add_input(dynet::lookup(cg, chars, c));
  dynet::Expression logits = dynet::affine_transform({dynet::parameter(cg, b), dynet::parameter(cg, w), h});
  if (training) {
    dynet::Expression loss = dynet::pickneglogsoftmax(logits, 2u);
    float value = dynet::as_scalar(cg.forward(loss));
    cg.backward(loss);
    adam.update();
    std::printf("loss %.4f\n", value);
  } else {
    std::vector<float> out = dynet::as_vector(cg.forward(logits));
    std::printf("logit0 %.4f\n", out[0]);
  }
  return 0;
}
