#pragma once
/// `recorder::Tracer`, the front end that runs a model and records it (front/tracer.hpp), for
/// `#include <recorder/tracer.hpp>`.

#include <recorder/front/tracer.hpp>
