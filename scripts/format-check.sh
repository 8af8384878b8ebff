#!/usr/bin/env bash
# Fails when a C/C++/CUDA source differs from clang-format's output (.clang-format).
# Fix with: clang-format -i $(git ls-files '*.c' '*.h' '*.cu' '*.cuh' '*.cpp')
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cu' '*.cuh' '*.cpp')
clang-format --dry-run --Werror "${files[@]}"
echo "format-check: ${#files[@]} files formatted"
