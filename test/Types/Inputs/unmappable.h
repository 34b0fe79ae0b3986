// A header with functions that have no Fold types.
#pragma once
#include <cstdint>

int64_t fine(int64_t x);
unsigned count(const char *text);
void log_word(int64_t id);
