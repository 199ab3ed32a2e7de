#pragma once
/// ResNet-18 built exactly like torchvision's `resnet18()` (same modules, names and order).

#include <recorder/recorder.hpp>

#include <cstdint>
#include <vector>

namespace models {

inline torch::nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride = 1) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

inline torch::nn::Conv2d conv1x1(int64_t in, int64_t out, int64_t stride = 1) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false));
}

/// torchvision's BasicBlock: two 3x3 convolutions and a residual connection; one ReLU
/// module called twice, `out += identity` in place.
struct BasicBlockImpl : torch::nn::Module {
  BasicBlockImpl(int64_t in, int64_t planes, int64_t stride = 1)
      : conv1(register_module("conv1", conv3x3(in, planes, stride))),
        bn1(register_module("bn1", torch::nn::BatchNorm2d(planes))),
        relu(register_module("relu", torch::nn::ReLU(torch::nn::ReLUOptions().inplace(true)))),
        conv2(register_module("conv2", conv3x3(planes, planes))),
        bn2(register_module("bn2", torch::nn::BatchNorm2d(planes))) {
    if (stride != 1 || in != planes) {
      downsample = register_module(
          "downsample",
          torch::nn::Sequential(conv1x1(in, planes, stride), torch::nn::BatchNorm2d(planes)));
    }
  }

  template <recorder::tensor_like T>
  T forward(T x) {
    T identity = x;
    T out = conv1(x);
    out = bn1(out);
    out = relu(out);
    out = conv2(out);
    out = bn2(out);
    if (downsample) identity = downsample(x);
    out += identity;
    return relu(out);
  }

  recorder::Module<torch::nn::Conv2d> conv1;
  recorder::Module<torch::nn::BatchNorm2d> bn1;
  recorder::Module<torch::nn::ReLU> relu;
  recorder::Module<torch::nn::Conv2d> conv2;
  recorder::Module<torch::nn::BatchNorm2d> bn2;
  recorder::Module<torch::nn::Sequential> downsample{nullptr};
};
TORCH_MODULE(BasicBlock);

/// torchvision's ResNet with BasicBlocks; `ResNet18()` is `resnet18()`.
struct ResNetImpl : torch::nn::Module {
 private:
  int64_t inplanes_ = 64;  // declared first: make_layer() reads it while the layers are built

 public:
  explicit ResNetImpl(std::vector<int64_t> layers, int64_t num_classes = 1000)
      : conv1(register_module(
            "conv1", torch::nn::Conv2d(
                         torch::nn::Conv2dOptions(3, 64, 7).stride(2).padding(3).bias(false)))),
        bn1(register_module("bn1", torch::nn::BatchNorm2d(64))),
        relu(register_module("relu", torch::nn::ReLU(torch::nn::ReLUOptions().inplace(true)))),
        maxpool(register_module(
            "maxpool", torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2).padding(1)))),
        layer1(register_module("layer1", make_layer(64, layers.at(0), 1))),
        layer2(register_module("layer2", make_layer(128, layers.at(1), 2))),
        layer3(register_module("layer3", make_layer(256, layers.at(2), 2))),
        layer4(register_module("layer4", make_layer(512, layers.at(3), 2))),
        avgpool(register_module(
            "avgpool", torch::nn::AdaptiveAvgPool2d(torch::nn::AdaptiveAvgPool2dOptions({1, 1})))),
        fc(register_module("fc", torch::nn::Linear(512, num_classes))) {}

  template <recorder::tensor_like T>
  T forward(T x) {
    x = conv1(x);
    x = bn1(x);
    x = relu(x);
    x = maxpool(x);
    x = layer1(x);
    x = layer2(x);
    x = layer3(x);
    x = layer4(x);
    x = avgpool(x);
    x = flatten(x, 1);
    return fc(x);
  }

  recorder::Module<torch::nn::Conv2d> conv1;
  recorder::Module<torch::nn::BatchNorm2d> bn1;
  recorder::Module<torch::nn::ReLU> relu;
  recorder::Module<torch::nn::MaxPool2d> maxpool;
  recorder::Module<recorder::Sequential<BasicBlock>> layer1, layer2, layer3, layer4;
  recorder::Module<torch::nn::AdaptiveAvgPool2d> avgpool;
  recorder::Module<torch::nn::Linear> fc;

 private:
  recorder::Sequential<BasicBlock> make_layer(int64_t planes, int64_t blocks, int64_t stride) {
    recorder::Sequential<BasicBlock> layer;
    layer->push_back(BasicBlock(inplanes_, planes, stride));
    inplanes_ = planes;
    for (int64_t i = 1; i < blocks; ++i) layer->push_back(BasicBlock(inplanes_, planes));
    return layer;
  }
};
TORCH_MODULE(ResNet);

/// torchvision's `resnet18()`: 11,689,512 parameters.
inline ResNet ResNet18(int64_t num_classes = 1000) {
  return ResNet(std::vector<int64_t>{2, 2, 2, 2}, num_classes);
}

}  // namespace models
