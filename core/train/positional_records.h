// core/train/positional_records.h
//
// The learned positional parameters of a model as records (core/records/trainer_records.h) for the
// final record: the positional encoding's and the inverse temperature's parameters, and the rotary
// frequencies of every layer as trained.
#pragma once

#include <string>
#include <vector>

#include "core/model/transformer.h"
#include "core/records/trainer_records.h"

namespace rung {

// True for the parameters of the positional encoding and the inverse temperature ("positional.*",
// "inverse_temperature.*"): those train.init's "positional" copies and "backbone" leaves.
bool IsPositionalParameter(const std::string& name);

// Every positional parameter (IsPositionalParameter) by name, with its shape and values.
std::vector<records::Tensor> PositionalParameters(Transformer& model);

// The rotary frequencies of each layer ("layer_<i>"), empty for encodings without rotation.
std::vector<records::Tensor> Frequencies(Transformer& model);

}  // namespace rung
