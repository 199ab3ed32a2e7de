// A program whose first call into recorder is load_model: run on another libtorch than its own
// (install_test.cpp puts the other leg's first on the library path), it must refuse with
// recorder::TorchMismatch before it calls libtorch. Prints what it loaded otherwise.
#include <recorder/script.hpp>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: load_probe <model.pt>\n";
    return 64;
  }
  try {
    const torch::jit::Module model = recorder::load_model(argv[1]);
    std::cout << "loaded " << model.type()->name()->name() << "\n";
    return 0;
  } catch (const recorder::TorchMismatch& e) {
    std::cerr << e.what() << "\n";
    return 3;
  }
}
