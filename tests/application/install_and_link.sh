#!/usr/bin/env bash
# Installs the plugin into a scratch prefix, builds examples/minimal against
# it with find_package(GPUAssembly), and runs it: shows that another deal.II
# program links the installed plugin in one line.
set -euo pipefail
build=$1 source=$2 scratch=$3
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cmake -S "$source/examples/minimal" -B "$scratch/example" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/example" -j 2 >/dev/null
"$scratch/example/minimal_example"
